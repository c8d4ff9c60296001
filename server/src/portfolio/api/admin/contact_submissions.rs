//! Contact-form submissions, read a page at a time (newest first).

use axum::extract::State;

use crate::http::error::Error;
use crate::http::extract::Query;
use crate::portfolio::api::auth::{Admin, Private};
use crate::portfolio::api::paging::{PageQuery, page_of};
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
    params(PageQuery),
    responses(
        (status = 200, description = "A page of submissions", body = ContactSubmissionPage),
        (status = 400, description = "A malformed page"),
    ),
    security(("oauth" = ["admin"])),
)]
pub(crate) async fn list_contact_submissions(
    State(state): State<PortfolioState>,
    _caller: Private<Admin>,
    Query(page): Query<PageQuery>,
) -> Result<axum::Json<ContactSubmissionPage>, Error> {
    let paging = page.paging()?;
    let (entries, total) =
        lists::contact_submissions(&state.db, paging.offset(), paging.limit()).await?;
    Ok(axum::Json(ContactSubmissionPage::new(
        entries, paging, total,
    )))
}
