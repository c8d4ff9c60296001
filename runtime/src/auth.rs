//! Credentials a client sends, and what the server says when it refuses
//! them.
//!
//! A [`Credentials`] value rides in each generated client (progenitor's
//! "inner" value) and is applied to every request by the client's hooks:
//! fixed headers (an API key, a bearer token, HTTP Basic), or a bearer token
//! fetched from the portfolio's token endpoint with client credentials and
//! fetched again before it expires (or once, at once, if the server refuses
//! it).

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::lock::Mutex;
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderName, HeaderValue, RETRY_AFTER, USER_AGENT};
use serde::Deserialize;

use crate::trace::{TRACEPARENT, Trace};

/// What a client sends to prove who it is.
#[derive(Clone, Default)]
pub struct Credentials {
    /// Sent as they are (values marked sensitive).
    headers: Vec<(HeaderName, HeaderValue)>,
    /// Bearer tokens for client credentials, when the client has some.
    tokens: Option<Arc<TokenSource>>,
}

/// Shows which credentials are set, never their values.
impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: Vec<String> = self
            .headers
            .iter()
            .map(|(name, _)| format!("{name}: ***"))
            .collect();
        f.debug_struct("Credentials")
            .field("headers", &headers)
            .field("client_credentials", &self.tokens)
            .finish()
    }
}

impl Credentials {
    pub(crate) fn new(
        headers: Vec<(HeaderName, HeaderValue)>,
        tokens: Option<TokenSource>,
    ) -> Self {
        Credentials {
            headers,
            tokens: tokens.map(Arc::new),
        }
    }

    /// Adds the credentials to a request about to leave.
    pub(crate) async fn apply(
        &self,
        http: &reqwest::Client,
        request: &mut reqwest::Request,
    ) -> Result<(), TokenError> {
        for (name, value) in &self.headers {
            request.headers_mut().insert(name.clone(), value.clone());
        }
        if let Some(tokens) = &self.tokens {
            let token = tokens.token(http, &Trace::child_of(request)).await?;
            request
                .headers_mut()
                .insert(AUTHORIZATION, bearer_header(&token)?);
        }
        Ok(())
    }

    /// Gets a bearer token now, when the client uses client credentials
    /// and holds none that is fresh: so that a failure to get one is told
    /// as what it is.
    pub(crate) async fn ready(
        &self,
        http: &reqwest::Client,
        traceparent: &HeaderValue,
    ) -> Result<(), TokenError> {
        if let Some(tokens) = &self.tokens {
            tokens.token(http, traceparent).await?;
        }
        Ok(())
    }

    /// Sends `request`; with client credentials, a 401 (the token revoked or
    /// expired early) fetches a new token and sends the request once more.
    pub(crate) async fn execute(
        &self,
        http: &reqwest::Client,
        request: reqwest::Request,
    ) -> reqwest::Result<reqwest::Response> {
        let Some(tokens) = &self.tokens else {
            return http.execute(request).await;
        };
        let retry = request.try_clone();
        let traceparent = Trace::child_of(&request);
        let response = http.execute(request).await?;
        if response.status() != reqwest::StatusCode::UNAUTHORIZED {
            return Ok(response);
        }
        let Some(mut retry) = retry else {
            return Ok(response);
        };
        tokens.forget().await;
        match tokens
            .token(http, &traceparent)
            .await
            .and_then(|t| bearer_header(&t))
        {
            Ok(header) => {
                retry.headers_mut().insert(AUTHORIZATION, header);
                http.execute(retry).await
            }
            // The first answer says more than a failed refresh would.
            Err(_) => Ok(response),
        }
    }
}

fn bearer_header(token: &str) -> Result<HeaderValue, TokenError> {
    let mut value = HeaderValue::from_str(&format!("Bearer {token}"))
        .map_err(|_| TokenError::Malformed("the token is not a valid header value".to_owned()))?;
    value.set_sensitive(true);
    Ok(value)
}

/// A bearer token from the portfolio's token endpoint (the client
/// credentials grant), kept until shortly before it expires.
pub struct TokenSource {
    token_url: String,
    client_id: String,
    client_secret: String,
    scope: Option<String>,
    /// The `User-Agent` of the calls the tokens are for.
    user_agent: HeaderValue,
    current: Mutex<Option<CachedToken>>,
}

struct CachedToken {
    token: String,
    /// When to fetch a new one: a tenth of its life (at most a minute)
    /// before it expires, so that no request carries a token about to end.
    refresh_at: Instant,
}

impl fmt::Debug for TokenSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenSource")
            .field("token_url", &self.token_url)
            .field("client_id", &self.client_id)
            .field("client_secret", &"***")
            .field("scope", &self.scope)
            .finish_non_exhaustive()
    }
}

/// The token endpoint's answer (RFC 6749 section 5.1).
#[derive(Deserialize)]
struct TokenResponse {
    access_token: String,
    expires_in: u64,
}

/// The token endpoint's error (RFC 6749 section 5.2).
#[derive(Debug, Clone, Deserialize)]
pub struct OAuthError {
    pub error: String,
    #[serde(default)]
    pub error_description: Option<String>,
}

/// Why no token could be had from the portfolio's token endpoint.
#[derive(Debug)]
#[non_exhaustive]
pub enum TokenError {
    /// The token endpoint could not be reached (why: the connection, the
    /// certificate, the time).
    Unreachable(reqwest::Error),
    /// `invalid_client`: the client id or secret is wrong, or the client
    /// was revoked.
    InvalidClient { description: Option<String> },
    /// `invalid_scope`: the client may not have a scope it asked for.
    InvalidScope { description: Option<String> },
    /// Another OAuth error (`unauthorized_client`, `invalid_request`, ...).
    Refused {
        status: reqwest::StatusCode,
        error: OAuthError,
    },
    /// It answered something else: a 429 (with how long to wait), a 5xx.
    Unexpected {
        status: reqwest::StatusCode,
        retry_after: Option<Duration>,
    },
    /// Its answer could not be read.
    Malformed(String),
}

impl TokenError {
    /// The HTTP status the token endpoint answered, if it answered.
    pub fn status(&self) -> Option<reqwest::StatusCode> {
        match self {
            TokenError::InvalidClient { .. } => Some(reqwest::StatusCode::UNAUTHORIZED),
            TokenError::InvalidScope { .. } => Some(reqwest::StatusCode::BAD_REQUEST),
            TokenError::Refused { status, .. } | TokenError::Unexpected { status, .. } => {
                Some(*status)
            }
            TokenError::Unreachable(_) | TokenError::Malformed(_) => None,
        }
    }

    /// OAuth's error code (`invalid_client`, `invalid_scope`, ...), if the
    /// endpoint gave one.
    pub fn oauth_error(&self) -> Option<&str> {
        match self {
            TokenError::InvalidClient { .. } => Some("invalid_client"),
            TokenError::InvalidScope { .. } => Some("invalid_scope"),
            TokenError::Refused { error, .. } => Some(&error.error),
            _ => None,
        }
    }

    fn from_oauth(status: reqwest::StatusCode, error: OAuthError) -> Self {
        match error.error.as_str() {
            "invalid_client" => TokenError::InvalidClient {
                description: error.error_description,
            },
            "invalid_scope" => TokenError::InvalidScope {
                description: error.error_description,
            },
            _ => TokenError::Refused { status, error },
        }
    }
}

impl fmt::Display for TokenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let described = |f: &mut fmt::Formatter<'_>, d: &Option<String>| match d {
            Some(d) => write!(f, ": {d}"),
            None => Ok(()),
        };
        match self {
            TokenError::Unreachable(_) => f.write_str("the token endpoint cannot be reached"),
            TokenError::InvalidClient { description } => {
                f.write_str("invalid_client: the client id or secret is not accepted")?;
                described(f, description)
            }
            TokenError::InvalidScope { description } => {
                f.write_str("invalid_scope: the client may not have a scope it asked for")?;
                described(f, description)
            }
            TokenError::Refused { status, error } => {
                write!(f, "{}: the token endpoint refused ({status})", error.error)?;
                described(f, &error.error_description)
            }
            TokenError::Unexpected {
                status,
                retry_after,
            } => {
                write!(f, "the token endpoint answered {status}")?;
                if let Some(wait) = retry_after {
                    write!(f, "; retry after {} s", wait.as_secs())?;
                }
                Ok(())
            }
            TokenError::Malformed(e) => write!(f, "the token endpoint's answer is malformed: {e}"),
        }
    }
}

impl std::error::Error for TokenError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TokenError::Unreachable(e) => Some(e),
            _ => None,
        }
    }
}

impl TokenSource {
    pub(crate) fn new(
        server_url: &str,
        client_id: String,
        client_secret: String,
        scope: Option<String>,
        user_agent: HeaderValue,
    ) -> Self {
        TokenSource {
            token_url: format!("{}/api/oauth/token", server_url.trim_end_matches('/')),
            client_id,
            client_secret,
            scope,
            user_agent,
            current: Mutex::new(None),
        }
    }

    /// The current token, fetched first if there is none or it is about
    /// to expire. Callers at once wait for one fetch.
    async fn token(
        &self,
        http: &reqwest::Client,
        traceparent: &HeaderValue,
    ) -> Result<String, TokenError> {
        let mut current = self.current.lock().await;
        if let Some(cached) = current.as_ref()
            && Instant::now() < cached.refresh_at
        {
            return Ok(cached.token.clone());
        }
        let fetched = self.fetch(http, traceparent).await;
        crate::observe::token_fetch(
            &self.token_url,
            fetched.as_ref().err().map(|e| e as &dyn std::fmt::Display),
        );
        let fetched = fetched?;
        let token = fetched.token.clone();
        *current = Some(fetched);
        Ok(token)
    }

    /// Drops the current token (the server refused it).
    async fn forget(&self) {
        *self.current.lock().await = None;
    }

    /// Asks the token endpoint for a token, as part of the trace of
    /// `traceparent`.
    async fn fetch(
        &self,
        http: &reqwest::Client,
        traceparent: &HeaderValue,
    ) -> Result<CachedToken, TokenError> {
        let mut form = vec![("grant_type", "client_credentials")];
        if let Some(scope) = &self.scope {
            form.push(("scope", scope));
        }
        let requested = Instant::now();
        let response = http
            .post(&self.token_url)
            .header(TRACEPARENT, traceparent.clone())
            .header(USER_AGENT, self.user_agent.clone())
            .basic_auth(
                form_encoded(&self.client_id),
                Some(form_encoded(&self.client_secret)),
            )
            .form(&form)
            .send()
            .await
            .map_err(TokenError::Unreachable)?;
        let status = response.status();
        if status.is_success() {
            let answer: TokenResponse = response
                .json()
                .await
                .map_err(|e| TokenError::Malformed(e.to_string()))?;
            let life = Duration::from_secs(answer.expires_in);
            let margin = (life / 10).min(Duration::from_secs(60));
            return Ok(CachedToken {
                token: answer.access_token,
                refresh_at: requested + life.saturating_sub(margin),
            });
        }
        let retry_after = retry_after(response.headers());
        let body = response.bytes().await.map_err(TokenError::Unreachable)?;
        match serde_json::from_slice::<OAuthError>(&body) {
            Ok(error) if matches!(status.as_u16(), 400 | 401) => {
                Err(TokenError::from_oauth(status, error))
            }
            _ => Err(TokenError::Unexpected {
                status,
                retry_after,
            }),
        }
    }
}

/// RFC 6749 section 2.3.1: the client id and secret are form-encoded before
/// they go into HTTP Basic.
fn form_encoded(text: &str) -> String {
    form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

/// Why the server refused a request: a 401, 403 or 429 in a form a program
/// can act on (each service's `refusal` reads its error body into it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// 401: no credential the operation takes, or one that is unknown,
    /// revoked or expired.
    Unauthorized {
        message: String,
        /// The header the credential goes in (the portfolio says).
        required_header: Option<String>,
        /// The `WWW-Authenticate` challenges.
        challenges: Vec<String>,
    },
    /// 403: the credential lacks a scope.
    Forbidden {
        message: String,
        /// The scope it needs (the portfolio says).
        required_scope: Option<String>,
    },
    /// 429: over a limit; try again after `retry_after`.
    RateLimited {
        message: String,
        retry_after: Option<Duration>,
    },
}

impl Refusal {
    /// Reads a refusal from an error answer's status, headers and the
    /// fields of its body.
    #[doc(hidden)]
    pub fn from_parts(
        status: reqwest::StatusCode,
        headers: &HeaderMap,
        message: String,
        detail: impl Fn(&str) -> Option<String>,
    ) -> Option<Refusal> {
        match status.as_u16() {
            401 => Some(Refusal::Unauthorized {
                message,
                required_header: detail("required_header"),
                challenges: headers
                    .get_all(reqwest::header::WWW_AUTHENTICATE)
                    .iter()
                    .filter_map(|v| v.to_str().ok().map(str::to_owned))
                    .collect(),
            }),
            403 => Some(Refusal::Forbidden {
                message,
                required_scope: detail("required_scope"),
            }),
            429 => Some(Refusal::RateLimited {
                message,
                retry_after: retry_after(headers),
            }),
            _ => None,
        }
    }
}

/// `Retry-After` in seconds, if the answer has one.
pub fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    headers
        .get(RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse::<u64>()
        .ok()
        .map(Duration::from_secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_ids_and_secrets_are_form_encoded_for_basic() {
        assert_eq!(form_encoded("pc_1a-2.b"), "pc_1a-2.b");
        assert_eq!(form_encoded("a b:c%é"), "a+b%3Ac%25%C3%A9");
    }

    #[test]
    fn debug_output_never_shows_secrets() {
        let credentials = Credentials::new(
            vec![(
                HeaderName::from_static("x-api-key"),
                HeaderValue::from_static("s3cret-key"),
            )],
            Some(TokenSource::new(
                "http://127.0.0.1:1",
                "pc_1".to_owned(),
                "s3cret-secret".to_owned(),
                None,
                HeaderValue::from_static(crate::transport::SDK_USER_AGENT),
            )),
        );
        let printed = format!("{credentials:?}");
        assert!(!printed.contains("s3cret"), "{printed}");
        assert!(printed.contains("pc_1"), "{printed}");
    }
}
