//! Contact messages: read (newest first, 50 a page, by the read
//! `listContactSubmissions` pages through) and marked handled (by the
//! operation `markContactSubmissionHandled` calls).

use axum::extract::{Path, State};
use axum::http::Uri;
use axum::response::Response;
use minijinja::context;

use super::{Form, Paging, Signed, page_of, then_back};
use crate::portfolio::ops;
use crate::portfolio::reads;
use crate::portfolio::state::PortfolioState;

/// Messages a page.
const PER_PAGE: i64 = 50;

/// The messages, `?page=` (from 1).
pub(crate) async fn list_contact_messages(
    Signed(session): Signed,
    State(state): State<PortfolioState>,
    uri: Uri,
) -> Response {
    let page_number = Paging::asked(&uri, PER_PAGE);
    let window = reads::lists::Window {
        after: None,
        offset: (page_number - 1) * PER_PAGE,
        limit: PER_PAGE,
    };
    let read = reads::lists::contact_submissions(&state.db, &window)
        .await
        .map(|listed| {
            let paging = Paging::new(page_number, listed.total, PER_PAGE);
            context! { messages => listed.items, total => listed.total, paging }
        });
    page_of(&state, &session, "pages/console/contact.html", read).await
}

/// Marks message `id` handled; back to the list.
pub(crate) async fn mark_handled(
    State(state): State<PortfolioState>,
    Path(id): Path<i64>,
    Form { session, .. }: Form,
) -> Response {
    let marked = ops::contact::mark_handled(state.ops(), id).await;
    then_back(&state, &session, "/console/contact", marked).await
}
