//! Key requests: the pending ones, each approved with the scopes the owner
//! chooses (the key shown once, on the answer's page) or rejected, by the
//! operations `approveKeyRequest` and `rejectKeyRequest` call.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use minijinja::context;

use super::{Form, Signed, failure_page, page, page_of, then_back};
use crate::access::ops::Actor;
use crate::config::Scope;
use crate::core::failure::Failure;
use crate::http::paths;
use crate::portfolio::model::KeyRequestStatus;
use crate::portfolio::ops;
use crate::portfolio::ops::key_requests::Approval;
use crate::portfolio::reads;
use crate::portfolio::reads::console::Session;
use crate::portfolio::state::PortfolioState;

/// The most requests the page lists.
const LIMIT: i64 = 200;

/// The scopes a key for a request may be given, in the order offered.
const OFFERED_SCOPES: [Scope; 4] = [
    Scope::ContextRead,
    Scope::ContactWrite,
    Scope::AnalyticsRead,
    Scope::SubscribersRead,
];

pub(crate) async fn list_key_requests(
    Signed(session): Signed,
    State(state): State<PortfolioState>,
) -> Response {
    let window = reads::lists::Window {
        after: None,
        offset: 0,
        limit: LIMIT,
    };
    let scopes: Vec<String> = OFFERED_SCOPES.iter().map(ToString::to_string).collect();
    let read = reads::lists::key_requests(&state.db, Some(KeyRequestStatus::Pending), &window)
        .await
        .map(|pending| context! { requests => pending.items, scopes });
    page_of(&state, &session, "pages/console/key_requests.html", read).await
}

/// Approves request `id` with the form's `scope`s: the page shows the key,
/// once.
pub(crate) async fn approve_key_request(
    State(state): State<PortfolioState>,
    Path(id): Path<String>,
    form: Form,
) -> Response {
    let session = &form.session;
    let scopes: Result<Vec<Scope>, String> = form.all("scope").iter().map(|s| s.parse()).collect();
    let scopes = match scopes {
        Ok(scopes) if !scopes.is_empty() => scopes,
        Ok(_) => {
            let failure = Failure::malformed("choose at least one scope for the key");
            return failure_page(&state, Some(session), failure).await;
        }
        Err(problem) => {
            return failure_page(&state, Some(session), Failure::malformed(problem)).await;
        }
    };
    let approval = Approval {
        scopes: Some(scopes),
        expires_in_days: None,
    };
    let docs_url = paths::docs_url(&state.public_url);
    let actor = actor(session);
    let approved =
        ops::key_requests::approve(state.ops(), actor, &id, &approval, Some(&docs_url)).await;
    match approved {
        Ok(approved) => {
            let context = context! {
                request => approved.request,
                key => approved.key,
                scopes => approved.api_key.scopes.iter().map(ToString::to_string).collect::<Vec<_>>(),
            };
            page(
                &state,
                Some(session),
                StatusCode::OK,
                "pages/console/key_issued.html",
                context,
            )
            .await
        }
        Err(failure) => failure_page(&state, Some(session), failure).await,
    }
}

/// Rejects request `id`; back to the list.
pub(crate) async fn reject_key_request(
    State(state): State<PortfolioState>,
    Path(id): Path<String>,
    Form { session, .. }: Form,
) -> Response {
    let rejected = ops::key_requests::reject(state.ops(), &id).await;
    then_back(&state, &session, "/console/key-requests", rejected).await
}

/// Who acts for a session: the operator (a printed link), or a client that
/// holds `admin`.
pub(super) fn actor(session: &Session) -> Actor<'static> {
    if session.signed_in_as == "operator" {
        Actor::Operator
    } else {
        Actor::Holding(&[Scope::Admin])
    }
}
