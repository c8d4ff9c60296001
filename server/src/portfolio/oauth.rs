//! The portfolio's OAuth 2.0 authorization server: bearer tokens for the
//! clients the operator registers, by the client credentials grant
//! (RFC 6749 section 4.4), their revocation (RFC 7009), and the server's
//! metadata (RFC 8414).
//!
//! These endpoints speak OAuth's own dialect, not the portfolio's: form
//! bodies, and errors in RFC 6749's JSON (`{"error": "invalid_client",
//! "error_description": ...}`). Only what OAuth does not define (a rate
//! limit, a database that is down) is answered in the portfolio's envelope.

use std::net::IpAddr;

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use chrono::Utc;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::PortfolioState;
use crate::access::challenges::{self, Challenge};
use crate::access::db::{self as access_db, StoredClient};
use crate::access::tokens::{self, TokenVerdict};
use crate::config::Scope;
use crate::error::{Error, ErrorCode};
use crate::extract::ClientAddress;
use crate::limits::Limiter;

/// The longest client id and secret worth comparing.
const MAX_CLIENT_ID_CHARS: usize = 100;
const MAX_SECRET_CHARS: usize = 200;

/// The realm of the Basic challenge.
const REALM: &str = "portfolio";

/// The error codes of RFC 6749 section 5.2 and RFC 7009 section 2.2.1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum OAuthErrorCode {
    InvalidRequest,
    InvalidClient,
    InvalidGrant,
    UnauthorizedClient,
    UnsupportedGrantType,
    InvalidScope,
    UnsupportedTokenType,
}

/// An error of the token and revocation endpoints, in OAuth's format.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub(crate) struct OAuthError {
    pub(crate) error: OAuthErrorCode,
    /// What went wrong, for the developer.
    pub(crate) error_description: String,
}

impl OAuthError {
    fn new(error: OAuthErrorCode, description: impl Into<String>) -> Self {
        OAuthError {
            error,
            error_description: description.into(),
        }
    }

    fn invalid_request(description: impl Into<String>) -> Self {
        Self::new(OAuthErrorCode::InvalidRequest, description)
    }

    fn invalid_client(description: impl Into<String>) -> Self {
        Self::new(OAuthErrorCode::InvalidClient, description)
    }
}

impl IntoResponse for OAuthError {
    fn into_response(self) -> Response {
        // A client that failed to authenticate is 401 with a challenge
        // (RFC 6749 section 5.2); everything else 400.
        let status = if self.error == OAuthErrorCode::InvalidClient {
            StatusCode::UNAUTHORIZED
        } else {
            StatusCode::BAD_REQUEST
        };
        let mut response = (status, no_store(), Json(self)).into_response();
        crate::error::mark_rendered(&mut response);
        response
    }
}

/// The answer of an OAuth endpoint. A client that failed HTTP Basic
/// authentication gets the `Basic` challenge RFC 6749 (section 5.2) asks
/// for, except when a script of a web page sent the request (Swagger UI's
/// Authorize): the browser would answer the challenge with a password dialog
/// of its own and hold the request, so the page would never see the error.
fn answer(result: Result<Response, Refusal>, headers: &HeaderMap) -> Response {
    let mut response = result.into_response();
    if response.status() == StatusCode::UNAUTHORIZED {
        let basic = [Challenge::Basic { realm: REALM }];
        for challenge in challenges::values(&basic, headers) {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, challenge);
        }
    }
    response
}

/// Why a token or revocation request failed: in OAuth's terms, or (a rate
/// limit, the database) in the portfolio's.
#[derive(Debug)]
pub(crate) enum Refusal {
    OAuth(OAuthError),
    Service(Error),
}

impl From<OAuthError> for Refusal {
    fn from(error: OAuthError) -> Self {
        Refusal::OAuth(error)
    }
}

impl From<Error> for Refusal {
    fn from(error: Error) -> Self {
        Refusal::Service(error)
    }
}

impl From<crate::storage::StoreError> for Refusal {
    fn from(error: crate::storage::StoreError) -> Self {
        Refusal::Service(error.into())
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        match self {
            Refusal::OAuth(error) => error.into_response(),
            Refusal::Service(error) => error.into_response(),
        }
    }
}

/// Tokens and errors must not be cached (RFC 6749 section 5.1).
fn no_store() -> [(header::HeaderName, HeaderValue); 2] {
    [
        (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
        (header::PRAGMA, HeaderValue::from_static("no-cache")),
    ]
}

/// The body of a token request (`application/x-www-form-urlencoded`).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub(crate) struct TokenRequest {
    /// Must be `client_credentials`.
    #[schema(pattern = "^client_credentials$")]
    pub(crate) grant_type: String,
    /// Space-separated scopes; default: every scope the client has.
    pub(crate) scope: Option<String>,
    /// With `client_secret`, in place of HTTP Basic.
    pub(crate) client_id: Option<String>,
    pub(crate) client_secret: Option<String>,
}

/// A token issued (RFC 6749 section 5.1).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub(crate) struct TokenResponse {
    /// Send it as `Authorization: Bearer <access_token>`.
    pub(crate) access_token: String,
    /// Always `Bearer`.
    pub(crate) token_type: String,
    /// Seconds until it expires.
    pub(crate) expires_in: u64,
    /// The scopes it carries, space-separated.
    pub(crate) scope: String,
}

/// The body of a revocation request (RFC 7009).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub(crate) struct RevocationRequest {
    /// The token to revoke.
    #[schema(min_length = 1)]
    pub(crate) token: String,
    /// `access_token` (the only kind there is); others are ignored.
    pub(crate) token_type_hint: Option<String>,
    pub(crate) client_id: Option<String>,
    pub(crate) client_secret: Option<String>,
}

/// The fields of a form body; each at most once (RFC 6749 section 3.2).
struct Form(Vec<(String, String)>);

impl Form {
    /// The form of a request with these parameters (others are ignored).
    fn read(headers: &HeaderMap, body: &[u8], known: &[&str]) -> Result<Self, OAuthError> {
        let form_type =
            crate::extract::has_media_type(headers, "application/x-www-form-urlencoded");
        if !form_type {
            return Err(OAuthError::invalid_request(
                "the body must be application/x-www-form-urlencoded",
            ));
        }
        let fields = crate::extract::single_fields(body, known).map_err(|name| {
            OAuthError::invalid_request(format!("the parameter {name} is given more than once"))
        })?;
        Ok(Form(fields))
    }

    /// A field's value, if given and not empty (an empty one counts as
    /// absent, RFC 6749 section 3.1).
    fn get(&self, name: &str) -> Option<&str> {
        crate::extract::field(&self.0, name)
    }
}

/// The client's id and secret, from HTTP Basic or the form, not both.
fn presented_client(headers: &HeaderMap, form: &Form) -> Result<(String, String), OAuthError> {
    let in_form = (form.get("client_id"), form.get("client_secret"));
    let Some(authorization) = headers.get(header::AUTHORIZATION) else {
        return match in_form {
            (Some(id), Some(secret)) => Ok((id.to_owned(), secret.to_owned())),
            (Some(_), None) => Err(OAuthError::invalid_client("client_secret is missing")),
            _ => Err(OAuthError::invalid_client(
                "authenticate the client with HTTP Basic, or client_id and client_secret in the body",
            )),
        };
    };
    // Another scheme (a bearer token, say) is an unsupported client
    // authentication method: invalid_client (RFC 6749 section 5.2).
    let basic = authorization
        .to_str()
        .ok()
        .and_then(|value| value.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("basic"))
        .map(|(_, credentials)| credentials.trim());
    let Some(encoded) = basic else {
        return Err(OAuthError::invalid_client(
            "the Authorization header must use the Basic scheme here",
        ));
    };
    if in_form.1.is_some() {
        return Err(OAuthError::invalid_request(
            "authenticate the client one way: HTTP Basic or the body, not both",
        ));
    }
    let malformed = || OAuthError::invalid_client("the Basic credentials are malformed");
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .map_err(|_| malformed())?;
    let decoded = String::from_utf8(decoded).map_err(|_| malformed())?;
    let (id, secret) = decoded.split_once(':').ok_or_else(malformed)?;
    // RFC 6749 section 2.3.1: each part is form-encoded first.
    let unescape = |part: &str| -> String {
        form_urlencoded::parse(format!("x={part}").as_bytes())
            .next()
            .map(|(_, value)| value.into_owned())
            .unwrap_or_default()
    };
    let (id, secret) = (unescape(id), unescape(secret));
    if let Some(form_id) = in_form.0
        && form_id != id
    {
        return Err(OAuthError::invalid_request(
            "client_id in the body differs from the one in HTTP Basic",
        ));
    }
    Ok((id, secret))
}

/// The registered client the request authenticates as. Failures are
/// limited per client id and address, and (higher) per client id and per
/// address ([`Limiter::failure_callers`]); past a limit the answer is 429
/// whatever the credentials.
async fn authenticate_client(
    state: &PortfolioState,
    address: Option<std::net::IpAddr>,
    headers: &HeaderMap,
    form: &Form,
) -> Result<StoredClient, Refusal> {
    let (client_id, secret) = presented_client(headers, form)?;
    let callers = Limiter::failure_callers(
        &format!("client:{client_id}"),
        address,
        state.config.oauth.failed_client_auth_per_minute,
    );
    let now = Utc::now().timestamp();
    let _turn = state.client_auth_failures.turn(&callers[0].0).await;
    state
        .client_auth_failures
        .refuse_after_failures(&callers, now)
        .await
        .map_err(|retry_after| {
            Error::new(
                ErrorCode::RateLimited,
                format!("too many failed client authentications; retry in {retry_after} s"),
            )
            .with_retry_after(retry_after)
        })?;
    let client = if client_id.chars().count() <= MAX_CLIENT_ID_CHARS
        && secret.chars().count() <= MAX_SECRET_CHARS
    {
        access_db::get_client(&state.db, &client_id).await?
    } else {
        None
    };
    // The same answer, after the same work, whether the client is unknown,
    // revoked, or the secret wrong: nothing to learn about which ids exist.
    if tokens::client_secret_matches(client.as_ref(), &secret)
        && let Some(client) = client
    {
        return Ok(client);
    }
    state
        .client_auth_failures
        .count_failure(&callers, now)
        .await;
    Err(OAuthError::invalid_client("client authentication failed").into())
}

/// The scopes a token request asks for (space-separated), each one the
/// client may have; none asked: all of the client's.
fn requested_scopes(client: &StoredClient, scope: Option<&str>) -> Result<Vec<Scope>, OAuthError> {
    let Some(scope) = scope else {
        return Ok(client.client.scopes.clone());
    };
    let mut scopes = Vec::new();
    for name in scope.split(' ').filter(|name| !name.is_empty()) {
        let scope: Scope = name.parse().map_err(|_| {
            OAuthError::new(
                OAuthErrorCode::InvalidScope,
                format!("unknown scope {name:?}"),
            )
        })?;
        if !scope.granted_by(&client.client.scopes) {
            return Err(OAuthError::new(
                OAuthErrorCode::InvalidScope,
                format!("the client may not have the scope {scope}"),
            ));
        }
        if !scopes.contains(&scope) {
            scopes.push(scope);
        }
    }
    if scopes.is_empty() {
        return Ok(client.client.scopes.clone());
    }
    Ok(scopes)
}

/// Issues a bearer token to a client (client credentials grant).
#[utoipa::path(
    post,
    path = "/api/oauth/token",
    operation_id = "issueToken",
    tag = "oauth",
    request_body(content((TokenRequest = "application/x-www-form-urlencoded"))),
    responses(
        (status = 200, description = "A token", body = TokenResponse,
            headers(
                ("Cache-Control" = String, description = "`no-store`"),
                ("Pragma" = String, description = "`no-cache`"),
            )),
        (status = 400, description = "A malformed request, an unsupported grant or an invalid scope (RFC 6749 section 5.2)", body = OAuthError),
        (status = 401, description = "The client failed to authenticate", body = OAuthError,
            headers(("WWW-Authenticate" = String, description = "`Basic realm=\"portfolio\"` (not to scripts of web pages: a browser would answer it with a password dialog of its own)"))),
    ),
)]
pub(crate) async fn issue_token(
    State(state): State<PortfolioState>,
    ClientAddress(address): ClientAddress,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    answer(issue(&state, address, &headers, &body).await, &headers)
}

async fn issue(
    state: &PortfolioState,
    address: Option<IpAddr>,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<Response, Refusal> {
    let form = Form::read(
        headers,
        body,
        &["grant_type", "scope", "client_id", "client_secret"],
    )?;
    match form.get("grant_type") {
        None => return Err(OAuthError::invalid_request("grant_type is required").into()),
        Some("client_credentials") => {}
        Some(other) => {
            return Err(OAuthError::new(
                OAuthErrorCode::UnsupportedGrantType,
                format!("the grant type {other:?} is not supported; use client_credentials"),
            )
            .into());
        }
    }
    let client = authenticate_client(state, address, headers, &form).await?;
    let scopes = requested_scopes(&client, form.get("scope"))?;
    let ttl_secs = state.config.oauth.token_ttl_secs.max(1);
    let issued = tokens::mint(
        &client.client.client_id,
        scopes,
        i64::try_from(ttl_secs.saturating_mul(1000)).unwrap_or(i64::MAX),
    );
    access_db::insert_token(&state.db, &issued.stored).await?;
    state.access.tokens.remember(&issued.stored);
    let token = TokenResponse {
        access_token: issued.token,
        token_type: "Bearer".to_owned(),
        expires_in: ttl_secs,
        scope: Scope::join(&issued.stored.scopes),
    };
    Ok((no_store(), Json(token)).into_response())
}

/// Revokes a token (RFC 7009). An unknown token is no error.
#[utoipa::path(
    post,
    path = "/api/oauth/revoke",
    operation_id = "revokeToken",
    tag = "oauth",
    request_body(content((RevocationRequest = "application/x-www-form-urlencoded"))),
    responses(
        (status = 200, description = "Revoked, or not a token in force"),
        (status = 400, description = "A malformed request, or a token of another client", body = OAuthError),
        (status = 401, description = "The client failed to authenticate", body = OAuthError,
            headers(("WWW-Authenticate" = String, description = "`Basic realm=\"portfolio\"` (not to scripts of web pages: a browser would answer it with a password dialog of its own)"))),
    ),
)]
pub(crate) async fn revoke_token(
    State(state): State<PortfolioState>,
    ClientAddress(address): ClientAddress,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    answer(revoke(&state, address, &headers, &body).await, &headers)
}

async fn revoke(
    state: &PortfolioState,
    address: Option<IpAddr>,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<Response, Refusal> {
    let form = Form::read(
        headers,
        body,
        &["token", "token_type_hint", "client_id", "client_secret"],
    )?;
    let Some(token) = form.get("token").map(str::to_owned) else {
        return Err(OAuthError::invalid_request("token is required").into());
    };
    let client = authenticate_client(state, address, headers, &form).await?;
    match state.access.tokens.verify(&state.db, &token).await? {
        TokenVerdict::Valid { client_id, id, .. } => {
            if client_id != client.client.client_id {
                return Err(OAuthError::new(
                    OAuthErrorCode::UnauthorizedClient,
                    "the token was issued to another client",
                )
                .into());
            }
            state.access.revoke_token(&state.db, &id).await?;
        }
        TokenVerdict::NoLongerValid | TokenVerdict::Unknown => {}
    }
    Ok((StatusCode::OK, no_store()).into_response())
}

/// The authorization server's metadata (RFC 8414).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub(crate) struct AuthorizationServerMetadata {
    pub(crate) issuer: String,
    pub(crate) token_endpoint: String,
    pub(crate) revocation_endpoint: String,
    pub(crate) grant_types_supported: Vec<String>,
    /// None: there is no authorization endpoint (client credentials only).
    pub(crate) response_types_supported: Vec<String>,
    pub(crate) token_endpoint_auth_methods_supported: Vec<String>,
    pub(crate) revocation_endpoint_auth_methods_supported: Vec<String>,
    pub(crate) scopes_supported: Vec<String>,
}

/// Says where the token and revocation endpoints are and what they take.
#[utoipa::path(
    get,
    path = "/.well-known/oauth-authorization-server",
    operation_id = "getAuthorizationServerMetadata",
    tag = "oauth",
    responses((status = 200, description = "The metadata", body = AuthorizationServerMetadata)),
)]
pub(crate) async fn get_authorization_server_metadata(
    State(state): State<PortfolioState>,
) -> Json<AuthorizationServerMetadata> {
    let base = &state.public_url;
    let auth_methods = vec![
        "client_secret_basic".to_owned(),
        "client_secret_post".to_owned(),
    ];
    Json(AuthorizationServerMetadata {
        issuer: base.to_string(),
        token_endpoint: format!("{base}/api/oauth/token"),
        revocation_endpoint: format!("{base}/api/oauth/revoke"),
        grant_types_supported: vec!["client_credentials".to_owned()],
        response_types_supported: Vec::new(),
        token_endpoint_auth_methods_supported: auth_methods.clone(),
        revocation_endpoint_auth_methods_supported: auth_methods,
        scopes_supported: Scope::ALL.iter().map(|s| s.as_str().to_owned()).collect(),
    })
}
