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
use axum::extract::rejection::BytesRejection;
use axum::extract::{FromRequest, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::access::ops::tokens::{
    self, OAuthError, OAuthErrorCode, PresentedClient, Refusal, TokenResponse,
};
use crate::config::Scope;
use crate::http::challenges::{self, Challenge};
use crate::http::error::Error;
use crate::portfolio::state::PortfolioState;

/// The realm of the Basic challenge.
const REALM: &str = "portfolio";

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
        crate::http::error::mark_rendered(&mut response);
        response
    }
}

/// A call to the token or revocation endpoint: its headers, its body (a
/// form, read by [`OAuthCall::answer`]) and the client's address.
pub(crate) struct OAuthCall {
    headers: HeaderMap,
    body: Bytes,
    address: Option<IpAddr>,
}

impl<S: Send + Sync> FromRequest<S> for OAuthCall {
    type Rejection = BytesRejection;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        let address = crate::http::extract::client_address(request.extensions());
        let headers = request.headers().clone();
        let body = Bytes::from_request(request, state).await?;
        Ok(OAuthCall {
            headers,
            body,
            address,
        })
    }
}

impl OAuthCall {
    /// Reads the form (with these fields; others are ignored) and the
    /// client it presents, runs `operation`, and answers. A client that
    /// failed HTTP Basic authentication gets the `Basic` challenge RFC 6749
    /// (section 5.2) asks for, except when a script of a web page sent the
    /// request (Swagger UI's Authorize): the browser would answer the
    /// challenge with a password dialog of its own and hold the request, so
    /// the page would never see the error.
    async fn answer(
        &self,
        fields: &[&str],
        operation: impl AsyncFnOnce(&Form, PresentedClient) -> Result<Response, Refusal>,
    ) -> Response {
        let result = match Form::read(&self.headers, &self.body, fields) {
            Err(error) => Err(error.into()),
            Ok(form) => {
                let client = PresentedClient {
                    credentials: presented_client(&self.headers, &form),
                    address: self.address,
                };
                operation(&form, client).await
            }
        };
        let mut response = result.into_response();
        if response.status() == StatusCode::UNAUTHORIZED {
            let basic = [Challenge::Basic { realm: REALM }];
            for challenge in challenges::values(&basic, &self.headers) {
                response
                    .headers_mut()
                    .insert(header::WWW_AUTHENTICATE, challenge);
            }
        }
        response
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        match self {
            Refusal::OAuth(error) => error.into_response(),
            Refusal::Service(failure) => Error::from(failure).into_response(),
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
            crate::http::extract::has_media_type(headers, "application/x-www-form-urlencoded");
        if !form_type {
            return Err(OAuthError::invalid_request(
                "the body must be application/x-www-form-urlencoded",
            ));
        }
        let fields = crate::http::extract::single_fields(body, known).map_err(|name| {
            OAuthError::invalid_request(format!("the parameter {name} is given more than once"))
        })?;
        Ok(Form(fields))
    }

    /// A field's value, if given and not empty (an empty one counts as
    /// absent, RFC 6749 section 3.1).
    fn get(&self, name: &str) -> Option<&str> {
        crate::http::extract::field(&self.0, name)
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

/// The answer of both endpoints to a client that failed to authenticate.
#[derive(utoipa::ToResponse)]
#[response(
    description = "The client failed to authenticate",
    headers(("WWW-Authenticate" = String, description = "`Basic realm=\"portfolio\"` (not to scripts of web pages: a browser would answer it with a password dialog of its own)")),
)]
#[allow(dead_code)] // It documents the answer; `OAuthCall::answer` builds it.
struct ClientAuthFailed(OAuthError);

/// Issues a bearer token to a client (client credentials grant).
#[utoipa::path(
    post, path = "/api/oauth/token",
    tag = "oauth",
    request_body(content((TokenRequest = "application/x-www-form-urlencoded"))),
    responses(
        (status = 200, description = "A token", body = TokenResponse,
            headers(
                ("Cache-Control" = String, description = "`no-store`"),
                ("Pragma" = String, description = "`no-cache`"),
            )),
        (status = 400, description = "A malformed request, an unsupported grant or an invalid scope (RFC 6749 section 5.2)", body = OAuthError),
        (status = 401, response = inline(ClientAuthFailed)),
    ),
)]
pub(crate) async fn issue_token(State(state): State<PortfolioState>, call: OAuthCall) -> Response {
    let fields = ["grant_type", "scope", "client_id", "client_secret"];
    call.answer(&fields, async |form, client| {
        let (grant_type, scope) = (form.get("grant_type"), form.get("scope"));
        let token = tokens::issue(state.token_service(), grant_type, scope, client).await?;
        Ok((no_store(), Json(token)).into_response())
    })
    .await
}

/// Revokes a token (RFC 7009). An unknown token is no error.
#[utoipa::path(
    post, path = "/api/oauth/revoke",
    tag = "oauth",
    request_body(content((RevocationRequest = "application/x-www-form-urlencoded"))),
    responses(
        (status = 200, description = "Revoked, or not a token in force"),
        (status = 400, description = "A malformed request, or a token of another client", body = OAuthError),
        (status = 401, response = inline(ClientAuthFailed)),
    ),
)]
pub(crate) async fn revoke_token(State(state): State<PortfolioState>, call: OAuthCall) -> Response {
    let fields = ["token", "token_type_hint", "client_id", "client_secret"];
    call.answer(&fields, async |form, client| {
        tokens::revoke(state.token_service(), form.get("token"), client).await?;
        Ok((StatusCode::OK, no_store()).into_response())
    })
    .await
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
    get, path = "/.well-known/oauth-authorization-server",
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
