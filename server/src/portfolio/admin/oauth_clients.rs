//! OAuth clients, managed: register one (its secret is shown once), list
//! them, revoke one (its tokens stop working at once).

use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::access::db::{self as access_db, StoredClient};
use crate::access::keys::{Name, name_problem};
use crate::access::tokens::{self, IssuedClient, OAuthClient};
use crate::config::Scope;
use crate::error::Error;
use crate::extract::{JsonBody, Path};
use crate::portfolio::PortfolioState;
use crate::portfolio::auth::{KeysManage, Private};
use crate::storage::Database;

/// A client to register.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct OAuthClientSpec {
    /// Who the client is (for the operator).
    #[schema(value_type = Name, required = true)]
    pub name: Option<String>,
    /// The most its tokens may carry; at least one.
    #[schema(value_type = Vec<Scope>, required = true, nullable = false, min_items = 1)]
    pub scopes: Option<Vec<Scope>>,
}

/// A client just registered, with its secret, shown this once.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct IssuedOAuthClient {
    pub client: OAuthClient,
    /// Give it, with the client id, to `POST /api/oauth/token`; it is not kept.
    pub client_secret: String,
}

/// Registers a client (the CLI's `clients create` too): 422 for a bad name
/// or no scopes.
pub async fn register(
    db: &Database,
    name: &str,
    scopes: Vec<Scope>,
) -> Result<IssuedClient, Error> {
    let mut problems = Vec::new();
    if let Some(problem) = name_problem(name) {
        problems.push(("name".to_owned(), problem));
    }
    if scopes.is_empty() {
        problems.push(("scopes".to_owned(), "give at least one scope".to_owned()));
    }
    if !problems.is_empty() {
        return Err(Error::invalid_fields(problems));
    }
    let mut scopes = scopes;
    scopes.sort();
    scopes.dedup();
    let issued = tokens::register(name.trim(), scopes);
    access_db::create_client(db, &issued.stored).await?;
    Ok(issued)
}

/// Lists the OAuth clients (never their secrets), newest first.
#[utoipa::path(
    get,
    path = "/api/admin/oauth-clients",
    operation_id = "listOauthClients",
    tag = "admin",
    responses(
        (status = 200, description = "The clients", body = Vec<OAuthClient>),
        (status = 401, description = "No valid bearer token"),
        (status = 403, description = "The token lacks keys:manage"),
    ),
    security(("oauth" = ["keys:manage"])),
)]
pub async fn list_oauth_clients(
    State(state): State<PortfolioState>,
    _caller: Private<KeysManage>,
) -> Result<axum::Json<Vec<OAuthClient>>, Error> {
    let clients = access_db::list_clients(&state.db).await?;
    Ok(axum::Json(clients.into_iter().map(|c| c.client).collect()))
}

/// Registers an OAuth client; its secret is shown this once.
#[utoipa::path(
    post,
    path = "/api/admin/oauth-clients",
    operation_id = "createOauthClient",
    tag = "admin",
    params(crate::idempotency::IdempotencyKeyHeader),
    request_body(content((OAuthClientSpec = "application/json"))),
    responses(
        (status = 201, description = "Registered; the secret is shown this once", body = IssuedOAuthClient),
        (status = 400, description = "The body is not JSON of this shape"),
        (status = 401, description = "No valid bearer token"),
        (status = 403, description = "The token lacks keys:manage, or a scope it would hand out"),
        (status = 422, description = "A field breaks its rule; details.fields says which"),
        (status = 409, description = "A request with this Idempotency-Key is still being processed; retry after Retry-After"),
    ),
    security(("oauth" = ["keys:manage"])),
)]
pub async fn create_oauth_client(
    State(state): State<PortfolioState>,
    Private(caller, _): Private<KeysManage>,
    JsonBody(spec): JsonBody<OAuthClientSpec>,
) -> Result<(StatusCode, axum::Json<IssuedOAuthClient>), Error> {
    let scopes = spec.scopes.unwrap_or_default();
    super::may_grant(&caller, &scopes)?;
    let issued = register(&state.db, spec.name.as_deref().unwrap_or_default(), scopes).await?;
    Ok((
        StatusCode::CREATED,
        axum::Json(IssuedOAuthClient {
            client: issued.stored.client,
            client_secret: issued.secret,
        }),
    ))
}

/// Revokes a client: its tokens stop working at once, and it gets no more.
#[utoipa::path(
    post,
    path = "/api/admin/oauth-clients/{client_id}/revoke",
    operation_id = "revokeOauthClient",
    tag = "admin",
    params(("client_id" = String, Path, description = "The client's id.")),
    responses(
        (status = 200, description = "Revoked", body = OAuthClient),
        (status = 401, description = "No valid bearer token"),
        (status = 403, description = "The token lacks keys:manage"),
        (status = 404, description = "No such client"),
        (status = 409, description = "The client was revoked already"),
    ),
    security(("oauth" = ["keys:manage"])),
)]
pub async fn revoke_oauth_client(
    State(state): State<PortfolioState>,
    Private(caller, _): Private<KeysManage>,
    Path(client_id): Path<String>,
) -> Result<axum::Json<OAuthClient>, Error> {
    let found = |client: Option<StoredClient>| {
        client.ok_or_else(|| Error::not_found(format!("no client {client_id:?}")))
    };
    let stored = found(access_db::get_client(&state.db, &client_id).await?)?;
    super::may_revoke(&caller, &stored.client.scopes)?;
    if !state.access.revoke_client(&state.db, &client_id).await? {
        return Err(Error::conflict(format!(
            "the client {client_id:?} was revoked already"
        )));
    }
    Ok(axum::Json(
        found(access_db::get_client(&state.db, &client_id).await?)?.client,
    ))
}
