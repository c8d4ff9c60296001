//! Failed emails: why each failed, and a button that puts it back in the
//! queue (the operation `requeueEmails` calls).

use axum::extract::State;
use axum::response::Response;
use minijinja::context;

use super::{Form, Signed, failure_page, page_of, then_back};
use crate::core::failure::Failure;
use crate::portfolio::ops;
use crate::portfolio::reads;
use crate::portfolio::state::PortfolioState;

/// The most failed emails the page lists.
const LIMIT: i64 = 200;

pub(crate) async fn list_failed_emails(
    Signed(session): Signed,
    State(state): State<PortfolioState>,
) -> Response {
    let read = reads::lists::failed_emails(&state.db, LIMIT)
        .await
        .map(|emails| context! { emails });
    page_of(&state, &session, "pages/console/failed_emails.html", read).await
}

/// Puts the form's email `id` back in the queue; back to the list.
pub(crate) async fn requeue_email(State(state): State<PortfolioState>, form: Form) -> Response {
    let session = &form.session;
    let Some(id) = form.get("id").and_then(|id| id.parse::<i64>().ok()) else {
        let failure = Failure::malformed("the form names no email");
        return failure_page(&state, Some(session), failure).await;
    };
    let requeued = ops::outbox::requeue(state.ops(), &[id]).await;
    then_back(&state, session, "/console/failed-emails", requeued).await
}
