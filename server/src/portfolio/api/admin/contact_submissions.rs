//! Contact-form submissions, read a page at a time (newest first).

use axum::extract::State;
use axum::response::Response;

use crate::http::error::Error;
use crate::portfolio::api::auth::{Admin, Private};
use crate::portfolio::api::paging::{AdminPage, IdCursor, PageQuery, page_of};
use crate::portfolio::model::ContactEntry;
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
