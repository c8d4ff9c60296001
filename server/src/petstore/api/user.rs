//! The `user` group: users, their hashed passwords and login sessions.

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::core::clock;
use crate::http::error::Error;
use crate::http::extract::{ClientAddress, Path, Query, keep_empty};
use crate::http::idempotency::Idempotent;
use crate::petstore::api::auth::{self, Authorized, UserAccount, Viewer};
use crate::petstore::model::User;
use crate::petstore::ops;
use crate::petstore::reads;
use crate::petstore::state::PetstoreState;
use crate::petstore::wire::{
    ALL_FORMATS, Body, BodyFormat, Format, Reply, ToXml, WireBody, xml_document,
};

impl ToXml for User {}

impl WireBody for User {
    const FORMATS: &'static [BodyFormat] = ALL_FORMATS;

    fn validate(&self) -> Result<(), Error> {
        Ok(self.check_rules()?)
    }
}

/// The body of createUsersWithListInput: JSON only, at least one user.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(transparent)]
#[schema(min_items = 1)]
pub(crate) struct UserList(Vec<User>);

impl WireBody for UserList {
    const FORMATS: &'static [BodyFormat] = &[BodyFormat::Json];

    fn validate(&self) -> Result<(), Error> {
        if self.0.is_empty() {
            return Err(Error::validation("the list must hold at least one user"));
        }
        for (index, user) in self.0.iter().enumerate() {
            user.check_rules()
                .map_err(|e| Error::validation(format!("user {index} ({}): {e}", user.username)))?;
        }
        Ok(())
    }
}

/// Create user. 409 when the username is taken.
#[utoipa::path(
    post, path = "/user",
    tag = "user",
    params(crate::http::idempotency::IdempotencyKeyHeader),
    request_body(content = User, description = "Created user object"),
    responses(
        (status = 200, description = "successful operation", body = User),
    ),
)]
pub(crate) async fn create_user(
    State(state): State<PetstoreState>,
    format: Format,
    Idempotent(Body(user)): Idempotent<Body<User>>,
) -> Result<Reply<User>, Error> {
    let user = ops::users::create(state.ops(), vec![user]).await?;
    Ok(Reply::new(format, user))
}

/// Creates list of users with given input array: all or none, 409 when a
/// username is taken or repeated.
#[utoipa::path(
    post, path = "/user/createWithList",
    tag = "user",
    params(crate::http::idempotency::IdempotencyKeyHeader),
    request_body(content((inline(UserList) = "application/json"))),
    responses(
        (status = 200, description = "Successful operation", body = User),
    ),
)]
pub(crate) async fn create_users_with_list_input(
    State(state): State<PetstoreState>,
    format: Format,
    Idempotent(Body(UserList(users))): Idempotent<Body<UserList>>,
) -> Result<Reply<User>, Error> {
    let last = ops::users::create(state.ops(), users).await?;
    Ok(Reply::new(format, last))
}

/// The query of loginUser. `username=` is an empty name (which no user
/// has), not a missing one.
#[derive(Debug, Deserialize)]
pub(crate) struct LoginQuery {
    #[serde(default, deserialize_with = "keep_empty")]
    username: Option<String>,
    #[serde(default, deserialize_with = "keep_empty")]
    password: Option<String>,
}

/// The login token in XML: `<string>token</string>`.
#[derive(Debug, Serialize)]
#[serde(rename = "string")]
struct TokenXml<'a> {
    #[serde(rename = "$text")]
    token: &'a str,
}

/// A session token, the answer of loginUser.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub(crate) struct SessionToken(String);

impl ToXml for SessionToken {
    fn to_xml(&self) -> Result<String, quick_xml::SeError> {
        xml_document(&TokenXml { token: &self.0 })
    }
}

/// Logs user into the system.
#[utoipa::path(
    get, path = "/user/login",
    tag = "user",
    params(
        ("username" = String, Query, description = "The user name for login"),
        ("password" = String, Query, description = "The password for login in clear text"),
    ),
    responses(
        (status = 200, description = "successful operation",
            headers(
                ("X-Rate-Limit" = i32, description = "calls per hour allowed by the user (failed logins, per username and per client address)"),
                ("X-Expires-After" = chrono::DateTime<chrono::Utc>, description = "date in UTC when token expires"),
            ),
            content((String = "application/json"))),
        (status = 400, description = "Invalid username/password supplied"),
        (status = 429, description = "Too many failed logins for this username or from this address; retry after `Retry-After` seconds",
            headers(("Retry-After" = i32, description = "Seconds until the window ends."))),
    ),
)]
pub(crate) async fn login_user(
    State(state): State<PetstoreState>,
    format: Format,
    ClientAddress(address): ClientAddress,
    Query(query): Query<LoginQuery>,
) -> Result<Reply<SessionToken>, Error> {
    let (Some(username), Some(given)) = (query.username, query.password) else {
        return Err(Error::bad_request("username and password are required"));
    };
    // Failed logins are limited per username and per client address.
    let Some(user_id) =
        ops::sessions::check_password(state.ops(), &username, &given, address).await?
    else {
        return Err(Error::bad_request("invalid username/password supplied"));
    };
    let (token, expires) = ops::sessions::start(state.ops(), user_id, None).await?;
    let limit = state.config.failed_logins_per_minute;
    let expires_header = HeaderValue::from_str(&clock::timestamp_secs(expires))
        .map_err(|e| Error::internal("bad expiry header", e))?;
    Ok(Reply::new(format, SessionToken(token))
        .with_header(
            header::HeaderName::from_static("x-rate-limit"),
            HeaderValue::from(limit.saturating_mul(60)),
        )
        .with_header(
            header::HeaderName::from_static("x-expires-after"),
            expires_header,
        ))
}

/// Logs out current logged in user session.
#[utoipa::path(
    get, path = "/user/logout",
    tag = "user",
    responses((status = 200, description = "successful operation")),
    security((), ("user_session" = [])),
)]
pub(crate) async fn logout_user(
    State(state): State<PetstoreState>,
    _format: Format,
    headers: HeaderMap,
) -> Result<StatusCode, Error> {
    if let Some(token_hash) = auth::session_of(&headers) {
        ops::sessions::end(state.ops(), &token_hash).await?;
    }
    Ok(StatusCode::OK)
}

/// Get user by user name.
#[utoipa::path(
    get, path = "/user/{username}",
    tag = "user",
    params(("username" = String, Path, description = "The name that needs to be fetched. Use user1 for testing")),
    responses(
        (status = 200, description = "successful operation", body = User),
        (status = 400, description = "Invalid username supplied"),
    ),
    security((), ("user_session" = []), ("petstore_auth" = []), ("api_key" = [])),
)]
pub(crate) async fn get_user_by_name(
    State(state): State<PetstoreState>,
    Viewer(viewer): Viewer,
    format: Format,
    Path(username): Path<String>,
) -> Result<Reply<User>, Error> {
    let user = reads::users::user(
        &state.db,
        state.config.auth_mode,
        &username,
        viewer.as_ref(),
    )
    .await?;
    Ok(Reply::new(format, user))
}

/// Update user resource.
#[utoipa::path(
    put, path = "/user/{username}",
    tag = "user",
    params(("username" = String, Path, description = "name that need to be updated")),
    request_body(content = User, description = "Update an existent user in the store"),
    responses(
        (status = 200, description = "successful operation", body = User),
        (status = 409, description = "The new username is taken"),
    ),
    security(("user_session" = []), ("petstore_auth" = []), ("api_key" = [])),
)]
pub(crate) async fn update_user(
    State(state): State<PetstoreState>,
    Authorized(caller, _): Authorized<UserAccount>,
    format: Format,
    Path(username): Path<String>,
    headers: HeaderMap,
    Body(user): Body<User>,
) -> Result<Reply<User>, Error> {
    let keep = auth::session_of(&headers);
    let user = ops::users::replace(
        state.ops(),
        caller.as_ref(),
        &username,
        user,
        keep.as_deref(),
    )
    .await?;
    Ok(Reply::new(format, user))
}

/// Delete user resource.
#[utoipa::path(
    delete, path = "/user/{username}",
    tag = "user",
    params(("username" = String, Path, description = "The name that needs to be deleted")),
    responses(
        (status = 200, description = "User deleted"),
        (status = 400, description = "Invalid username supplied"),
    ),
    security(("user_session" = []), ("petstore_auth" = []), ("api_key" = [])),
)]
pub(crate) async fn delete_user(
    State(state): State<PetstoreState>,
    Authorized(caller, _): Authorized<UserAccount>,
    _format: Format,
    Path(username): Path<String>,
) -> Result<StatusCode, Error> {
    ops::users::delete(state.ops(), caller.as_ref(), &username).await?;
    Ok(StatusCode::OK)
}
