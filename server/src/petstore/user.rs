//! The `user` group: users, their hashed passwords and login sessions.

use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use chrono::{SecondsFormat, Utc};
use rand::RngCore as _;
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};
use sqlx::{AnyConnection, FromRow};
use utoipa::ToSchema;

use super::PetstoreState;
use super::wire::{
    ApiError, Body, BodyFormat, Format, PathParams, Reply, ToXml, WireBody, check_client_id,
    parse_form, parse_json, parse_xml, xml_document,
};
use crate::storage::{IdTable, is_unique_violation};

/// A user of the store. `password` is write-only: it is stored as an
/// argon2id hash and never returned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename = "user", rename_all = "camelCase")]
#[schema(xml(name = "user"))]
pub struct User {
    /// Assigned by the server when absent or 0. Ids stay within the integers
    /// that JavaScript represents exactly (at most 2^53 - 1).
    #[schema(minimum = 0, maximum = 9007199254740991_i64, nullable = false)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<i64>,
    #[schema(min_length = 1, max_length = 64)]
    pub username: String,
    #[schema(max_length = 255, nullable = false)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_name: Option<String>,
    #[schema(max_length = 255, nullable = false)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_name: Option<String>,
    #[schema(max_length = 255, nullable = false)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// Stored as an argon2id hash; never returned.
    #[schema(max_length = 255, write_only, nullable = false)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password: Option<String>,
    #[schema(max_length = 64, nullable = false)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone: Option<String>,
    /// User Status
    #[schema(nullable = false)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_status: Option<i32>,
}

impl User {
    fn check_rules(&self) -> Result<(), ApiError> {
        check_client_id(self.id)?;
        if self.username.is_empty() {
            return Err(ApiError::validation("username must not be empty"));
        }
        let limits = [
            ("username", Some(&self.username), 64),
            ("firstName", self.first_name.as_ref(), 255),
            ("lastName", self.last_name.as_ref(), 255),
            ("email", self.email.as_ref(), 255),
            ("password", self.password.as_ref(), 255),
            ("phone", self.phone.as_ref(), 64),
        ];
        for (field, value, max) in limits {
            if value.is_some_and(|v| v.chars().count() > max) {
                return Err(ApiError::validation(format!(
                    "{field} must be at most {max} characters"
                )));
            }
        }
        Ok(())
    }
}

impl ToXml for User {
    fn to_xml(&self) -> Result<String, quick_xml::SeError> {
        xml_document(self)
    }
}

impl WireBody for User {
    const FORMATS: &'static [BodyFormat] = &[BodyFormat::Json, BodyFormat::Xml, BodyFormat::Form];

    fn from_json(bytes: &[u8]) -> Result<Self, ApiError> {
        parse_json(bytes)
    }

    fn from_xml(text: &str) -> Result<Self, ApiError> {
        parse_xml::<User, User>(text)
    }

    fn from_form(bytes: &[u8]) -> Result<Self, ApiError> {
        parse_form::<User, User>(bytes)
    }

    fn validate(&self) -> Result<(), ApiError> {
        self.check_rules()
    }
}

/// The body of createUsersWithListInput: JSON only, at least one user.
#[derive(Debug, ToSchema)]
#[schema(min_items = 1)]
pub struct UserList(Vec<User>);

impl WireBody for UserList {
    const FORMATS: &'static [BodyFormat] = &[BodyFormat::Json];

    fn from_json(bytes: &[u8]) -> Result<Self, ApiError> {
        parse_json(bytes).map(UserList)
    }

    fn validate(&self) -> Result<(), ApiError> {
        if self.0.is_empty() {
            return Err(ApiError::validation("the list must hold at least one user"));
        }
        for (index, user) in self.0.iter().enumerate() {
            user.check_rules().map_err(|e| {
                ApiError::validation(format!("user {index} ({}): {}", user.username, e.message()))
            })?;
        }
        Ok(())
    }
}

// ---- storage ------------------------------------------------------------

#[derive(Debug, FromRow)]
struct UserRow {
    id: i64,
    username: String,
    first_name: Option<String>,
    last_name: Option<String>,
    email: Option<String>,
    password_hash: Option<String>,
    phone: Option<String>,
    user_status: Option<i32>,
}

impl From<UserRow> for User {
    fn from(row: UserRow) -> Self {
        User {
            id: Some(row.id),
            username: row.username,
            first_name: row.first_name,
            last_name: row.last_name,
            email: row.email,
            password: None,
            phone: row.phone,
            user_status: row.user_status,
        }
    }
}

async fn load_user(conn: &mut AnyConnection, username: &str) -> Result<Option<UserRow>, ApiError> {
    Ok(sqlx::query_as(
        "SELECT id, username, first_name, last_name, email, password_hash, phone, user_status \
         FROM users WHERE username = $1",
    )
    .bind(username)
    .fetch_optional(conn)
    .await?)
}

/// Hashes a password with argon2id off the async threads (it is slow on purpose).
pub(super) async fn hash_password(password: String) -> Result<String, ApiError> {
    tokio::task::spawn_blocking(move || {
        let mut salt = [0_u8; 16];
        rand::rng().fill_bytes(&mut salt);
        let salt = SaltString::encode_b64(&salt).map_err(|e| e.to_string())?;
        Argon2::default()
            .hash_password(password.as_bytes(), &salt)
            .map(|hash| hash.to_string())
            .map_err(|e| e.to_string())
    })
    .await
    .map_err(|e| ApiError::internal("password hashing task failed", e))?
    .map_err(|e| ApiError::internal("cannot hash password", e))
}

/// The hash of a password, if one was given.
async fn hash_if_given(password: Option<String>) -> Result<Option<String>, ApiError> {
    match password {
        Some(password) => hash_password(password).await.map(Some),
        None => Ok(None),
    }
}

/// A hash of a password nobody has, checked when the user does not exist so
/// that a wrong username takes as long as a wrong password.
fn dummy_hash() -> &'static str {
    static DUMMY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    DUMMY.get_or_init(|| {
        let mut salt = [0_u8; 16];
        rand::rng().fill_bytes(&mut salt);
        SaltString::encode_b64(&salt)
            .ok()
            .and_then(|salt| {
                Argon2::default()
                    .hash_password(b"no such user", &salt)
                    .ok()
                    .map(|h| h.to_string())
            })
            .unwrap_or_default()
    })
}

async fn verify_password(password: String, hash: Option<String>) -> Result<bool, ApiError> {
    tokio::task::spawn_blocking(move || {
        let known = hash.is_some();
        let hash = hash.unwrap_or_else(|| dummy_hash().to_owned());
        let Ok(parsed) = PasswordHash::new(&hash) else {
            return false;
        };
        let matches = Argon2::default()
            .verify_password(password.as_bytes(), &parsed)
            .is_ok();
        known && matches
    })
    .await
    .map_err(|e| ApiError::internal("password check task failed", e))
}

/// Inserts a user (its password already hashed) and returns the stored id.
async fn insert_user(
    state: &PetstoreState,
    conn: &mut AnyConnection,
    user: &User,
    password_hash: Option<String>,
) -> Result<i64, ApiError> {
    let requested = user.id.filter(|id| *id > 0);
    let id = match requested {
        Some(id) => id,
        None => state.db.next_id(conn, IdTable::Users).await?,
    };
    sqlx::query(
        "INSERT INTO users (id, username, first_name, last_name, email, password_hash, phone, user_status) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(id)
    .bind(&user.username)
    .bind(&user.first_name)
    .bind(&user.last_name)
    .bind(&user.email)
    .bind(password_hash)
    .bind(&user.phone)
    .bind(user.user_status)
    .execute(&mut *conn)
    .await
    .map_err(|e| {
        if is_unique_violation(&e) {
            ApiError::conflict(format!("a user with the username {:?} or the id {id} exists", user.username))
        } else {
            ApiError::from(e)
        }
    })?;
    Ok(id)
}

/// The user as the API shows it: with its id, without its password.
fn public(mut user: User, id: i64) -> User {
    user.id = Some(id);
    user.password = None;
    user
}

// ---- handlers ------------------------------------------------------------

/// Create user.
#[utoipa::path(
    post,
    path = "/user",
    operation_id = "createUser",
    tag = "user",
    request_body(
        description = "Created user object",
        content(
            (User = "application/json"),
            (User = "application/xml"),
            (User = "application/x-www-form-urlencoded"),
        ),
    ),
    responses(
        (status = 200, description = "successful operation",
            content((User = "application/json"), (User = "application/xml"))),
        (status = 400, description = "Invalid input"),
        (status = 409, description = "The username is taken"),
        (status = 422, description = "Validation exception"),
    ),
)]
pub async fn create_user(
    State(state): State<PetstoreState>,
    format: Format,
    Body(user): Body<User>,
) -> Result<Reply<User>, ApiError> {
    let hash = hash_if_given(user.password.clone()).await?;
    let mut tx = state.db.begin_write().await?;
    let id = insert_user(&state, tx.conn(), &user, hash).await?;
    tx.commit().await?;
    Ok(Reply::new(format, public(user, id)))
}

/// Creates list of users with given input array.
#[utoipa::path(
    post,
    path = "/user/createWithList",
    operation_id = "createUsersWithListInput",
    tag = "user",
    request_body(content((inline(UserList) = "application/json"))),
    responses(
        (status = 200, description = "Successful operation",
            content((User = "application/json"), (User = "application/xml"))),
        (status = 400, description = "Invalid input"),
        (status = 409, description = "A username is taken or repeated"),
        (status = 422, description = "Validation exception"),
    ),
)]
pub async fn create_users_with_list_input(
    State(state): State<PetstoreState>,
    format: Format,
    Body(UserList(users)): Body<UserList>,
) -> Result<Reply<User>, ApiError> {
    let mut hashes = Vec::with_capacity(users.len());
    for user in &users {
        hashes.push(hash_if_given(user.password.clone()).await?);
    }
    // All or none: one transaction, and the first conflict rolls it back.
    let mut tx = state.db.begin_write().await?;
    let mut last = None;
    for (user, hash) in users.into_iter().zip(hashes) {
        let id = insert_user(&state, tx.conn(), &user, hash).await?;
        last = Some(public(user, id));
    }
    tx.commit().await?;
    let last = last.ok_or_else(|| ApiError::validation("the list must hold at least one user"))?;
    Ok(Reply::new(format, last))
}

#[derive(Debug, Deserialize)]
pub struct LoginQuery {
    username: Option<String>,
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
pub struct SessionToken(String);

impl ToXml for SessionToken {
    fn to_xml(&self) -> Result<String, quick_xml::SeError> {
        xml_document(&TokenXml { token: &self.0 })
    }
}

fn token_hash(token: &str) -> String {
    let digest = Sha256::digest(token.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Logs user into the system.
#[utoipa::path(
    get,
    path = "/user/login",
    operation_id = "loginUser",
    tag = "user",
    params(
        ("username" = String, Query, description = "The user name for login"),
        ("password" = String, Query, description = "The password for login in clear text"),
    ),
    responses(
        (status = 200, description = "successful operation",
            headers(
                ("X-Rate-Limit" = i32, description = "calls per hour allowed by the user"),
                ("X-Expires-After" = chrono::DateTime<chrono::Utc>, description = "date in UTC when token expires"),
            ),
            content((String = "application/json"), (String = "application/xml"))),
        (status = 400, description = "Invalid username/password supplied"),
    ),
)]
pub async fn login_user(
    State(state): State<PetstoreState>,
    format: Format,
    uri: axum::http::Uri,
) -> Result<Reply<SessionToken>, ApiError> {
    // serde_urlencoded keeps `username=` as an empty name (serde_html_form
    // would read it as no name).
    let query: LoginQuery = serde_urlencoded::from_str(uri.query().unwrap_or(""))
        .map_err(|e| ApiError::bad_request(format!("invalid query string: {e}")))?;
    let (Some(username), Some(password)) = (query.username, query.password) else {
        return Err(ApiError::bad_request("username and password are required"));
    };
    let mut conn = state.db.pool().acquire().await?;
    let row = load_user(&mut conn, &username).await?;
    drop(conn);
    let user_id = row.as_ref().map(|r| r.id);
    let hash = row.and_then(|r| r.password_hash);
    let user_id = match (verify_password(password, hash).await?, user_id) {
        (true, Some(id)) => id,
        _ => return Err(ApiError::bad_request("invalid username/password supplied")),
    };
    let mut secret = [0_u8; 32];
    rand::rng().fill_bytes(&mut secret);
    let token = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(secret);
    let ttl = chrono::Duration::seconds(
        i64::try_from(state.config.session_ttl_secs).unwrap_or(i64::MAX / 2),
    );
    let expires = Utc::now() + ttl;
    let mut tx = state.db.begin_write().await?;
    // Expired sessions are swept whenever someone logs in.
    sqlx::query("DELETE FROM user_sessions WHERE expires_at < $1")
        .bind(Utc::now().timestamp())
        .execute(tx.conn())
        .await?;
    sqlx::query("INSERT INTO user_sessions (token_hash, user_id, expires_at) VALUES ($1, $2, $3)")
        .bind(token_hash(&token))
        .bind(user_id)
        .bind(expires.timestamp())
        .execute(tx.conn())
        .await?;
    tx.commit().await?;
    let expires_header = HeaderValue::from_str(&expires.to_rfc3339_opts(SecondsFormat::Secs, true))
        .map_err(|e| ApiError::internal("bad expiry header", e))?;
    Ok(Reply::new(format, SessionToken(token))
        .with_header(
            header::HeaderName::from_static("x-rate-limit"),
            HeaderValue::from(state.config.login_rate_limit_per_hour),
        )
        .with_header(
            header::HeaderName::from_static("x-expires-after"),
            expires_header,
        ))
}

/// The token of `Authorization: Bearer <token>`, if any.
fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// Logs out current logged in user session.
#[utoipa::path(
    get,
    path = "/user/logout",
    operation_id = "logoutUser",
    tag = "user",
    responses((status = 200, description = "successful operation")),
    security((), ("user_session" = [])),
)]
pub async fn logout_user(
    State(state): State<PetstoreState>,
    _format: Format,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    if let Some(token) = bearer_token(&headers) {
        let mut tx = state.db.begin_write().await?;
        sqlx::query("DELETE FROM user_sessions WHERE token_hash = $1")
            .bind(token_hash(token))
            .execute(tx.conn())
            .await?;
        tx.commit().await?;
    }
    Ok(StatusCode::OK.into_response())
}

fn user_not_found(username: &str) -> ApiError {
    ApiError::not_found(format!("user {username:?} not found"))
}

/// Get user by user name.
#[utoipa::path(
    get,
    path = "/user/{username}",
    operation_id = "getUserByName",
    tag = "user",
    params(("username" = String, Path, description = "The name that needs to be fetched. Use user1 for testing")),
    responses(
        (status = 200, description = "successful operation",
            content((User = "application/json"), (User = "application/xml"))),
        (status = 400, description = "Invalid username supplied"),
        (status = 404, description = "User not found"),
    ),
)]
pub async fn get_user_by_name(
    State(state): State<PetstoreState>,
    format: Format,
    PathParams(username): PathParams<String>,
) -> Result<Reply<User>, ApiError> {
    let mut conn = state.db.pool().acquire().await?;
    let row = load_user(&mut conn, &username)
        .await?
        .ok_or_else(|| user_not_found(&username))?;
    Ok(Reply::new(format, User::from(row)))
}

/// Update user resource.
#[utoipa::path(
    put,
    path = "/user/{username}",
    operation_id = "updateUser",
    tag = "user",
    params(("username" = String, Path, description = "name that need to be updated")),
    request_body(
        description = "Update an existent user in the store",
        content(
            (User = "application/json"),
            (User = "application/xml"),
            (User = "application/x-www-form-urlencoded"),
        ),
    ),
    responses(
        (status = 200, description = "successful operation",
            content((User = "application/json"), (User = "application/xml"))),
        (status = 400, description = "bad request"),
        (status = 404, description = "user not found"),
        (status = 409, description = "The new username is taken"),
        (status = 422, description = "Validation exception"),
    ),
)]
pub async fn update_user(
    State(state): State<PetstoreState>,
    format: Format,
    PathParams(username): PathParams<String>,
    Body(user): Body<User>,
) -> Result<Reply<User>, ApiError> {
    let new_hash = hash_if_given(user.password.clone()).await?;
    let mut tx = state.db.begin_write().await?;
    let existing = load_user(tx.conn(), &username)
        .await?
        .ok_or_else(|| user_not_found(&username))?;
    let result = sqlx::query(
        "UPDATE users SET username = $1, first_name = $2, last_name = $3, email = $4, \
         password_hash = $5, phone = $6, user_status = $7 WHERE id = $8",
    )
    .bind(&user.username)
    .bind(&user.first_name)
    .bind(&user.last_name)
    .bind(&user.email)
    .bind(new_hash.or(existing.password_hash))
    .bind(&user.phone)
    .bind(user.user_status)
    .bind(existing.id)
    .execute(tx.conn())
    .await;
    if let Err(e) = result {
        return Err(if is_unique_violation(&e) {
            ApiError::conflict(format!("the username {:?} is taken", user.username))
        } else {
            ApiError::from(e)
        });
    }
    tx.commit().await?;
    Ok(Reply::new(format, public(user, existing.id)))
}

/// Delete user resource.
#[utoipa::path(
    delete,
    path = "/user/{username}",
    operation_id = "deleteUser",
    tag = "user",
    params(("username" = String, Path, description = "The name that needs to be deleted")),
    responses(
        (status = 200, description = "User deleted"),
        (status = 400, description = "Invalid username supplied"),
        (status = 404, description = "User not found"),
    ),
)]
pub async fn delete_user(
    State(state): State<PetstoreState>,
    _format: Format,
    PathParams(username): PathParams<String>,
) -> Result<Response, ApiError> {
    let mut tx = state.db.begin_write().await?;
    let deleted = sqlx::query("DELETE FROM users WHERE username = $1")
        .bind(&username)
        .execute(tx.conn())
        .await?;
    if deleted.rows_affected() == 0 {
        return Err(user_not_found(&username));
    }
    tx.commit().await?;
    Ok(StatusCode::OK.into_response())
}
