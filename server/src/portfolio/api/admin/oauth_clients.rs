//! OAuth clients, managed: register one (its secret is shown once), list
//! them, revoke one (its tokens stop working at once).

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::access::keys::Name;
use crate::access::ops::oauth_clients::IssuedOAuthClient;
use crate::access::ops::{self, Actor};
use crate::access::tokens::OAuthClient;
use crate::config::Scope;
use crate::http::error::Error;
use crate::http::extract::{JsonBody, Path};
use crate::http::idempotency::Idempotent;
use crate::portfolio::api::auth::{KeysManage, Private};
use crate::portfolio::api::paging::{Slice, SliceQuery};
use crate::portfolio::state::PortfolioState;

/// A client to register.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub(crate) struct OAuthClientSpec {
    /// Who the client is (for the operator).
    #[schema(value_type = Name, required = true)]
    pub(crate) name: Option<String>,
    /// The most its tokens may carry; at least one.
    #[schema(value_type = Vec<Scope>, required = true, min_items = 1)]
    pub(crate) scopes: Option<Vec<Scope>>,
}

#[utoipa::path(
    get, path = "/api/admin/oauth-clients",
    tag = "admin",
    params(SliceQuery),
    responses(
        (status = 200, description = "The clients", body = Vec<OAuthClient>,
            headers(("Link" = String, description = "Where the next slice is"))),
        (status = 400, description = "A malformed limit or cursor"),
    ),
    security(("oauth" = ["keys:manage"])),
)]
pub(crate) async fn list_oauth_clients(
    State(state): State<PortfolioState>,
    _caller: Private<KeysManage>,
    slice: Slice,
) -> Result<Response, Error> {
    slice.answer_items(&ops::list_clients(state.ops().access()).await?)
}

/// Registers an OAuth client; its secret is shown this once.
#[utoipa::path(
    post, path = "/api/admin/oauth-clients",
    tag = "admin",
    params(crate::http::idempotency::IdempotencyKeyHeader),
    request_body(content((OAuthClientSpec = "application/json"))),
    responses(
        (status = 201, description = "Registered; the secret is shown this once", body = IssuedOAuthClient),
    ),
    security(("oauth" = ["keys:manage"])),
)]
pub(crate) async fn create_oauth_client(
    State(state): State<PortfolioState>,
    Private(caller, _): Private<KeysManage>,
    Idempotent(JsonBody(spec)): Idempotent<JsonBody<OAuthClientSpec>>,
) -> Result<(StatusCode, axum::Json<IssuedOAuthClient>), Error> {
    let by = Actor::Holding(&caller.scopes);
    let name = spec.name.as_deref().unwrap_or_default();
    let scopes = spec.scopes.unwrap_or_default();
    let issued = ops::oauth_clients::register(state.ops().access(), by, name, scopes).await?;
    Ok((StatusCode::CREATED, axum::Json(issued)))
}

#[utoipa::path(
    post, path = "/api/admin/oauth-clients/{client_id}/revoke",
    tag = "admin",
    params(("client_id" = String, Path, description = "The client's id.")),
    responses(
        (status = 200, description = "Revoked", body = OAuthClient),
        (status = 409, description = "The client was revoked already"),
    ),
    security(("oauth" = ["keys:manage"])),
)]
pub(crate) async fn revoke_oauth_client(
    State(state): State<PortfolioState>,
    Private(caller, _): Private<KeysManage>,
    Path(client_id): Path<String>,
) -> Result<axum::Json<OAuthClient>, Error> {
    let by = Actor::Holding(&caller.scopes);
    let client = ops::oauth_clients::revoke(state.ops().access(), by, &client_id).await?;
    Ok(axum::Json(client))
}

#[utoipa::path(
    post, path = "/api/admin/oauth-clients/{client_id}/rotate",
    tag = "admin",
    params(("client_id" = String, Path, description = "The client's id.")),
    responses(
        (status = 200, description = "A new secret, shown this once", body = IssuedOAuthClient),
    ),
    security(("oauth" = ["keys:manage"])),
)]
pub(crate) async fn rotate_oauth_client_secret(
    State(state): State<PortfolioState>,
    Private(caller, _): Private<KeysManage>,
    Path(client_id): Path<String>,
) -> Result<axum::Json<IssuedOAuthClient>, Error> {
    let by = Actor::Holding(&caller.scopes);
    let rotated = ops::oauth_clients::rotate_secret(state.ops().access(), by, &client_id).await?;
    Ok(axum::Json(rotated))
}
