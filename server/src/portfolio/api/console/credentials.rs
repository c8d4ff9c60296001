//! API keys and OAuth clients: the list of each; a key made (with a name,
//! its service, scopes and an optional expiry), rotated or revoked; a
//! client made, given a new secret or revoked; by the operations
//! `createApiKey`, `rotateApiKey`, `revokeApiKey`, `createOauthClient`,
//! `rotateOauthClientSecret` and `revokeOauthClient` call. A new key or secret is shown once, on the
//! answer's page.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use minijinja::context;

use super::key_requests::actor;
use super::{Form, Signed, failure_page, page, page_of, then_back};
use crate::access::Service;
use crate::access::model::NewKey;
use crate::access::ops::{self, api_keys, oauth_clients};
use crate::config::Scope;
use crate::core::failure::Failure;
use crate::portfolio::state::PortfolioState;

/// The page of the keys and clients.
const LIST: &str = "/console/credentials";

/// How long a rotated key keeps working, from the console.
const OLD_KEY_VALID_FOR_HOURS: u32 = 24;

pub(crate) async fn list_credentials(
    Signed(session): Signed,
    State(state): State<PortfolioState>,
) -> Response {
    let ctx = state.ops().access();
    let listed = async {
        Ok::<_, Failure>((
            ops::list_keys(ctx, None).await?,
            ops::list_clients(ctx).await?,
        ))
    };
    let scopes: Vec<String> = Scope::ALL.iter().map(ToString::to_string).collect();
    let read = listed
        .await
        .map(|(keys, clients)| context! { keys, clients, scopes });
    page_of(&state, &session, "pages/console/credentials.html", read).await
}

/// The form's `scope`s; none or an unknown one is refused.
fn scopes(form: &Form) -> Result<Vec<Scope>, Failure> {
    let scopes = form
        .all("scope")
        .iter()
        .map(|scope| scope.parse())
        .collect::<Result<Vec<Scope>, String>>()
        .map_err(Failure::malformed)?;
    Ok(scopes)
}

/// Makes a key from the form (`name`, `service`, `scope`s,
/// `expires_in_days`); the page shows it once.
pub(crate) async fn create_key(State(state): State<PortfolioState>, form: Form) -> Response {
    let session = &form.session;
    let made = async {
        let service = match form.get("service") {
            Some("petstore") => Service::Petstore,
            _ => Service::Portfolio,
        };
        let expires_in_days = match form.get("expires_in_days").map(str::trim) {
            None | Some("") => None,
            Some(days) => Some(days.parse::<u32>().map_err(|_| {
                Failure::malformed("expires in days: a whole number of days, or nothing")
            })?),
        };
        let new = NewKey {
            service,
            name: form.get("name").unwrap_or_default().to_owned(),
            scopes: scopes(&form)?,
            expires_in_days,
        };
        api_keys::create(state.ops().access(), actor(session), &new).await
    };
    let made = made
        .await
        .map(|issued| (issued.stored.key.name, issued.key));
    shown_once(&state, session, "The new key", made).await
}

/// Rotates key `id`: the page shows the new key once; the old one works
/// for another day.
pub(crate) async fn rotate_key(
    State(state): State<PortfolioState>,
    Path(id): Path<String>,
    Form { session, .. }: Form,
) -> Response {
    let ctx = state.ops().access();
    let rotated = api_keys::rotate(ctx, actor(&session), &id, OLD_KEY_VALID_FOR_HOURS)
        .await
        .map(|rotated| (rotated.new.api_key.name, rotated.new.key));
    shown_once(&state, &session, "The key that replaces it", rotated).await
}

/// Revokes key `id`; back to the list.
pub(crate) async fn revoke_key(
    State(state): State<PortfolioState>,
    Path(id): Path<String>,
    Form { session, .. }: Form,
) -> Response {
    let revoked = api_keys::revoke(state.ops().access(), actor(&session), &id).await;
    then_back(&state, &session, LIST, revoked).await
}

/// Registers an OAuth client from the form (`name`, `scope`s); the page
/// shows its secret once.
pub(crate) async fn create_client(State(state): State<PortfolioState>, form: Form) -> Response {
    let session = &form.session;
    let made = async {
        let name = form.get("name").unwrap_or_default();
        oauth_clients::register(state.ops().access(), actor(session), name, scopes(&form)?).await
    };
    let made = made.await.map(client_and_secret);
    shown_once(&state, session, "The new client", made).await
}

/// Gives client `id` a new secret: the page shows it once; the old one
/// stops working.
pub(crate) async fn rotate_client_secret(
    State(state): State<PortfolioState>,
    Path(client_id): Path<String>,
    Form { session, .. }: Form,
) -> Response {
    let by = actor(&session);
    let rotated = oauth_clients::rotate_secret(state.ops().access(), by, &client_id)
        .await
        .map(client_and_secret);
    shown_once(&state, &session, "A new secret", rotated).await
}

/// Revokes client `id` and its tokens; back to the list.
pub(crate) async fn revoke_client(
    State(state): State<PortfolioState>,
    Path(id): Path<String>,
    Form { session, .. }: Form,
) -> Response {
    let revoked = oauth_clients::revoke(state.ops().access(), actor(&session), &id).await;
    then_back(&state, &session, LIST, revoked).await
}

/// A client's name, and what to sign in with: its id and new secret.
fn client_and_secret(issued: oauth_clients::IssuedOAuthClient) -> (String, String) {
    let secret = format!(
        "client_id {}\nclient_secret {}",
        issued.client.client_id, issued.client_secret
    );
    (issued.client.name, secret)
}

/// The page that shows what was made (its name) and its secret, once; or
/// the page of the failure.
async fn shown_once(
    state: &PortfolioState,
    session: &crate::portfolio::reads::console::Session,
    title: &str,
    made: Result<(String, String), Failure>,
) -> Response {
    match made {
        Ok((name, secret)) => {
            let context = context! { title, name, secret };
            page(
                state,
                Some(session),
                StatusCode::OK,
                "pages/console/shown_once.html",
                context,
            )
            .await
        }
        Err(failure) => failure_page(state, Some(session), failure).await,
    }
}
