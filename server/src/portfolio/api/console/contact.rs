//! Contact messages: read (newest first, 50 a page, by the read
//! `listContactSubmissions` pages through) and marked handled (by the
//! operation `markContactSubmissionHandled` calls).

use axum::extract::{Path, State};
use axum::http::Uri;
use axum::response::Response;
use minijinja::context;

use super::{Form, Signed, page_of, then_back};
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
    let page_number = url::form_urlencoded::parse(uri.query().unwrap_or_default().as_bytes())
        .find(|(name, _)| name == "page")
        .and_then(|(_, n)| n.parse::<i64>().ok())
        .unwrap_or(1)
        .clamp(1, i64::MAX / PER_PAGE);
    let window = reads::lists::Window {
        after: None,
        offset: (page_number - 1) * PER_PAGE,
        limit: PER_PAGE,
    };
    let read = reads::lists::contact_submissions(&state.db, &window)
        .await
        .map(|listed| {
            let pages = ((listed.total + PER_PAGE - 1) / PER_PAGE).max(1);
            context! {
                messages => listed.items,
                total => listed.total,
                page => page_number,
                pages,
                previous => (page_number > 1).then(|| page_number - 1),
                next => (page_number < pages).then(|| page_number + 1),
            }
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
