//! Contact-form submissions, read a page at a time (newest first), and
//! marked handled.

use axum::extract::{Path, State};
use axum::response::Response;

use crate::http::error::Error;
use crate::portfolio::api::auth::{Admin, Private};
use crate::portfolio::api::paging::{AdminPage, IdCursor, PageQuery, page_of};
use crate::portfolio::model::ContactEntry;
use crate::portfolio::ops;
use crate::portfolio::reads::lists;
use crate::portfolio::state::PortfolioState;

page_of!(
    /// A page of contact-form submissions, newest first.
    ContactSubmissionPage,
    ContactEntry
);

/// Lists the contact-form submissions, a page at a time.
#[utoipa::path(
    get, path = "/api/admin/contact-submissions",
    tag = "admin",
    params(PageQuery, IdCursor),
    responses(
        (status = 200, description = "A page of submissions", body = ContactSubmissionPage,
            headers(("Link" = String, description = "Where the next page is"))),
        (status = 400, description = "A malformed page"),
    ),
    security(("oauth" = ["admin"])),
)]
pub(crate) async fn list_contact_submissions(
    State(state): State<PortfolioState>,
    _caller: Private<Admin>,
    asked: AdminPage<IdCursor>,
) -> Result<Response, Error> {
    let page = lists::contact_submissions(&state.db, &asked.window()).await?;
    Ok(ContactSubmissionPage::response(page, &asked))
}

/// Marks a submission handled.
#[utoipa::path(
    post, path = "/api/admin/contact-submissions/{id}/handled",
    tag = "admin",
    params(("id" = i64, Path, minimum = 1, description = "The submission's number.")),
    responses(
        (status = 200, description = "Handled", body = ContactEntry),
        (status = 400, description = "Not an id"),
        (status = 404, description = "No such submission"),
    ),
    security(("oauth" = ["admin"])),
)]
pub(crate) async fn mark_contact_submission_handled(
    State(state): State<PortfolioState>,
    _caller: Private<Admin>,
    Path(id): Path<i64>,
) -> Result<axum::Json<ContactEntry>, Error> {
    Ok(axum::Json(
        ops::contact::mark_handled(state.ops(), id).await?,
    ))
}
