//! API keys, managed: list, create, rotate (the old key keeps working for a
//! while), revoke. Every change works at once on this server, and within a
//! second on the others sharing the database.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::access::Service;
use crate::access::keys::{ApiKey, Name, NewKey};
use crate::access::ops::api_keys::{DEFAULT_OLD_KEY_HOURS, IssuedApiKey, RotatedApiKey};
use crate::access::ops::{self, Actor};
use crate::config::Scope;
use crate::http::error::Error;
use crate::http::extract::{JsonBody, Path, Query, keep_empty};
use crate::http::idempotency::{Idempotent, NoBody};
use crate::portfolio::api::auth::{KeysManage, Private};
use crate::portfolio::api::paging::{Slice, SliceQuery};
use crate::portfolio::state::PortfolioState;

/// A key to make.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub(crate) struct ApiKeySpec {
    /// Who the key is for (shown in analytics).
    #[schema(value_type = Name, required = true)]
    pub(crate) name: Option<String>,
    /// The service it opens; default `portfolio`.
    pub(crate) service: Option<Service>,
    /// What it may do: at least one scope for a portfolio key, none for a
    /// pet store key.
    pub(crate) scopes: Option<Vec<Scope>>,
    /// It stops working after this many days (default: never).
    #[schema(minimum = 1, maximum = 3650)]
    pub(crate) expires_in_days: Option<u32>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct RotationQuery {
    /// How long the old key keeps working, in hours (0: it stops now;
    /// default 24, at most 720).
    #[param(minimum = 0, maximum = 720)]
    #[serde(default, deserialize_with = "keep_empty")]
    old_key_valid_for_hours: Option<u32>,
}

/// Lists the API keys (never their secrets), newest first. Keys from the
/// configuration file are not listed.
#[utoipa::path(
    get, path = "/api/admin/api-keys",
    tag = "admin",
    params(SliceQuery),
    responses(
        (status = 200, description = "The keys", body = Vec<ApiKey>,
            headers(("Link" = String, description = "Where the next slice is"))),
        (status = 400, description = "A malformed limit or cursor"),
    ),
    security(("oauth" = ["keys:manage"])),
)]
pub(crate) async fn list_api_keys(
    State(state): State<PortfolioState>,
    _caller: Private<KeysManage>,
    slice: Slice,
) -> Result<Response, Error> {
    slice.answer_items(&ops::list_keys(state.ops().access(), None).await?)
}

/// Makes an API key; it works at once and is shown this once.
#[utoipa::path(
    post, path = "/api/admin/api-keys",
    tag = "admin",
    params(crate::http::idempotency::IdempotencyKeyHeader),
    request_body(content((ApiKeySpec = "application/json"))),
    responses(
        (status = 201, description = "Made; the key is shown this once", body = IssuedApiKey),
    ),
    security(("oauth" = ["keys:manage"])),
)]
pub(crate) async fn create_api_key(
    State(state): State<PortfolioState>,
    Private(caller, _): Private<KeysManage>,
    Idempotent(JsonBody(spec)): Idempotent<JsonBody<ApiKeySpec>>,
) -> Result<(StatusCode, axum::Json<IssuedApiKey>), Error> {
    let new = NewKey {
        service: spec.service.unwrap_or(Service::Portfolio),
        name: spec.name.unwrap_or_default(),
        scopes: spec.scopes.unwrap_or_default(),
        expires_in_days: spec.expires_in_days,
    };
    let issued =
        ops::api_keys::create(state.ops().access(), Actor::Holding(&caller.scopes), &new).await?;
    Ok((StatusCode::CREATED, axum::Json(issued.into())))
}

/// Replaces a key with a new one of the same name, scopes, service and
/// expiry, shown this once; the old key keeps working for a while, so that
/// its user can switch.
#[utoipa::path(
    post, path = "/api/admin/api-keys/{id}/rotate",
    tag = "admin",
    params(crate::http::idempotency::IdempotencyKeyHeader, ("id" = String, Path, description = "The key's id."), RotationQuery),
    responses(
        (status = 200, description = "Rotated; the new key is shown this once", body = RotatedApiKey),
        (status = 400, description = "A malformed number of hours"),
    ),
    security(("oauth" = ["keys:manage"])),
)]
pub(crate) async fn rotate_api_key(
    State(state): State<PortfolioState>,
    Private(caller, _): Private<KeysManage>,
    Path(id): Path<String>,
    Query(query): Query<RotationQuery>,
    _: Idempotent<NoBody>,
) -> Result<axum::Json<RotatedApiKey>, Error> {
    let hours = query
        .old_key_valid_for_hours
        .unwrap_or(DEFAULT_OLD_KEY_HOURS);
    let by = Actor::Holding(&caller.scopes);
    let rotated = ops::api_keys::rotate(state.ops().access(), by, &id, hours).await?;
    Ok(axum::Json(rotated))
}

#[utoipa::path(
    post, path = "/api/admin/api-keys/{id}/revoke",
    tag = "admin",
    params(("id" = String, Path, description = "The key's id.")),
    responses(
        (status = 200, description = "Revoked", body = ApiKey),
        (status = 409, description = "The key was revoked already"),
    ),
    security(("oauth" = ["keys:manage"])),
)]
pub(crate) async fn revoke_api_key(
    State(state): State<PortfolioState>,
    Private(caller, _): Private<KeysManage>,
    Path(id): Path<String>,
) -> Result<axum::Json<ApiKey>, Error> {
    let key =
        ops::api_keys::revoke(state.ops().access(), Actor::Holding(&caller.scopes), &id).await?;
    Ok(axum::Json(key))
}
