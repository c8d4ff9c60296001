//! The one error type every operation of both services returns.
//!
//! `format!("{err}")` is one line: for an answer, the status, the service's
//! error code and its message (`404 NOT_FOUND: pet 987654321 not found`);
//! for a request that got no answer, what failed. `format!("{err:#}")` adds
//! the causes (the refused connection, the certificate), as does `anyhow`'s
//! `{:#}` through [`std::error::Error::source`]. Neither, nor `{:?}`, ever
//! shows a credential.

use std::fmt;
use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{HeaderMap, InvalidHeaderValue};
use serde_json::{Map, Value};

use crate::auth::TokenError;

/// Why an operation failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The server answered with an error status; what it said.
    Api(ApiError),
    /// No answer came: the connection was refused or dropped, TLS failed,
    /// or the time ran out (after the retries the policy allows).
    Transport(TransportError),
    /// No bearer token could be had from the token endpoint.
    Token(TokenError),
    /// The answer came but could not be read as the document says.
    Decode { status: StatusCode, message: String },
    /// The request could not be made from what was given (a builder
    /// field that breaks its rule, say).
    InvalidRequest(String),
    /// The client's `before_send` hook stopped the request before it left,
    /// for this reason; nothing was sent.
    Stopped(String),
}

/// How a stop by the `before_send` hook crosses progenitor's error type
/// (its `Custom` text), to come out as [`Error::Stopped`].
pub(crate) const STOPPED_MARK: &str = "\u{0}stopped by before_send: ";

/// An error answer: status, the service's code and message, and what else
/// it said.
#[derive(Clone)]
pub struct ApiError {
    status: StatusCode,
    code: String,
    message: String,
    details: Map<String, Value>,
    request_id: Option<String>,
    retry_after: Option<Duration>,
    headers: HeaderMap,
}

/// A request that got no answer, with the operation it was for.
#[derive(Debug)]
pub struct TransportError {
    operation: &'static str,
    /// The server's origin (`https://host:port`): never the path or query,
    /// which may carry a secret (`login_user` sends the password there).
    origin: Option<String>,
    /// reqwest's error, without its URL.
    source: reqwest::Error,
}

impl Error {
    /// The HTTP status, when the server answered.
    pub fn status(&self) -> Option<StatusCode> {
        match self {
            Error::Api(e) => Some(e.status),
            Error::Decode { status, .. } => Some(*status),
            Error::Token(e) => e.status(),
            _ => None,
        }
    }

    /// The service's error code (`NOT_FOUND`, `RATE_LIMITED`, ...), when
    /// the server answered with one.
    pub fn code(&self) -> Option<&str> {
        match self {
            Error::Api(e) => Some(&e.code),
            Error::Token(e) => e.oauth_error(),
            _ => None,
        }
    }

    /// The service's error code as an [`ErrorCode`], when the server
    /// answered with one (an OAuth token error is not one: see
    /// [`Error::code`]).
    ///
    /// ```no_run
    /// # async fn demo(client: &petstore_portfolio_client::petstore::Client) {
    /// use petstore_portfolio_client::ErrorCode;
    ///
    /// match client.get_pet_by_id().pet_id(7_u64).send().await {
    ///     Ok(pet) => println!("{}", pet.name.as_str()),
    ///     Err(e) if e.error_code() == Some(ErrorCode::NotFound) => println!("no pet 7"),
    ///     Err(e) => eprintln!("{e}"),
    /// }
    /// # }
    /// ```
    pub fn error_code(&self) -> Option<ErrorCode> {
        match self {
            Error::Api(e) => Some(e.error_code()),
            _ => None,
        }
    }

    /// The server answered `NOT_FOUND`.
    pub fn is_not_found(&self) -> bool {
        self.error_code() == Some(ErrorCode::NotFound)
    }

    /// The server answered `UNAUTHORIZED`: no credential it takes, or one it
    /// does not know.
    pub fn is_unauthorized(&self) -> bool {
        self.error_code() == Some(ErrorCode::Unauthorized)
    }

    /// The server answered `FORBIDDEN`: the credential lacks a scope.
    pub fn is_forbidden(&self) -> bool {
        self.error_code() == Some(ErrorCode::Forbidden)
    }

    /// The server answered `CONFLICT`.
    pub fn is_conflict(&self) -> bool {
        self.error_code() == Some(ErrorCode::Conflict)
    }

    /// The server answered `VALIDATION_FAILED`: see [`Error::details`].
    pub fn is_validation_failed(&self) -> bool {
        self.error_code() == Some(ErrorCode::ValidationFailed)
    }

    /// The server answered `RATE_LIMITED`: see [`Error::retry_after`].
    pub fn is_rate_limited(&self) -> bool {
        self.error_code() == Some(ErrorCode::RateLimited)
    }

    /// What went wrong, in words (the server's message for an answer).
    pub fn message(&self) -> String {
        match self {
            Error::Api(e) => e.message.clone(),
            other => other.to_string(),
        }
    }

    /// The error body's `details` (the portfolio's: the fields that break
    /// a rule, the scope or header required), empty when there are none.
    pub fn details(&self) -> Option<&Map<String, Value>> {
        match self {
            Error::Api(e) => Some(&e.details),
            _ => None,
        }
    }

    /// The request id the server gave the answer (`X-Request-Id`): quote
    /// it when you report a problem.
    pub fn request_id(&self) -> Option<&str> {
        match self {
            Error::Api(e) => e.request_id.as_deref(),
            _ => None,
        }
    }

    /// How long the server asked to wait before trying again
    /// (`Retry-After` on a 429 or 503).
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Error::Api(e) => e.retry_after,
            Error::Token(TokenError::Unexpected { retry_after, .. }) => *retry_after,
            _ => None,
        }
    }

    /// The answer, when the server gave one.
    pub fn api(&self) -> Option<&ApiError> {
        match self {
            Error::Api(e) => Some(e),
            _ => None,
        }
    }

    /// Whether the server did not answer in time, or the call's own time
    /// ran out.
    pub fn is_timeout(&self) -> bool {
        matches!(self, Error::Transport(e) if e.source.is_timeout())
    }

    /// Whether the server could not be reached at all.
    pub fn is_connect(&self) -> bool {
        matches!(self, Error::Transport(e) if e.source.is_connect())
    }
}

impl ApiError {
    /// Reads an error answer: its status, headers and body (either
    /// service's error format; any other body is kept as the message).
    pub(crate) fn new(status: StatusCode, headers: &HeaderMap, body: &[u8]) -> Self {
        let (code, message, details) = match serde_json::from_slice::<Value>(body) {
            Ok(value) => read_error_body(&value),
            Err(_) => (None, None, Map::new()),
        };
        let message = message.unwrap_or_else(|| {
            let text = String::from_utf8_lossy(body);
            let text: String = text.chars().filter(|c| !c.is_control()).take(200).collect();
            if text.trim().is_empty() {
                status.canonical_reason().unwrap_or("error").to_lowercase()
            } else {
                text
            }
        });
        ApiError {
            status,
            code: code.unwrap_or_else(|| code_of_status(status)),
            message,
            details,
            request_id: headers
                .get("x-request-id")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned),
            retry_after: crate::auth::retry_after(headers),
            headers: headers.clone(),
        }
    }

    pub fn status(&self) -> StatusCode {
        self.status
    }

    pub fn code(&self) -> &str {
        &self.code
    }

    /// The code as an [`ErrorCode`], to match on (`ErrorCode::Other` for a
    /// code this SDK does not know).
    pub fn error_code(&self) -> ErrorCode {
        ErrorCode::parse(&self.code)
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    pub fn details(&self) -> &Map<String, Value> {
        &self.details
    }

    pub fn request_id(&self) -> Option<&str> {
        self.request_id.as_deref()
    }

    pub fn retry_after(&self) -> Option<Duration> {
        self.retry_after
    }

    /// The answer's headers (`WWW-Authenticate`, the rate-limit headers).
    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }
}

/// The code, message and details of either service's error body: the
/// portfolio's `{"error": {"code", "message", "details"}}`, the pet
/// store's `{"code": 404, "type": "NOT_FOUND", "message"}`.
fn read_error_body(value: &Value) -> (Option<String>, Option<String>, Map<String, Value>) {
    let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_owned);
    if let Some(error) = value.get("error").filter(|e| e.is_object()) {
        let details = error
            .get("details")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        return (text(error.get("code")), text(error.get("message")), details);
    }
    (
        text(value.get("type")),
        text(value.get("message")),
        Map::new(),
    )
}

/// The error codes the documents list, as an enum (generated).
#[rustfmt::skip]
#[path = "generated/error_codes.rs"]
mod error_codes;

pub use error_codes::ErrorCode;

/// `404` -> `NOT_FOUND`: the code of an answer that did not give one.
fn code_of_status(status: StatusCode) -> String {
    status
        .canonical_reason()
        .map(|reason| reason.to_uppercase().replace([' ', '-'], "_"))
        .unwrap_or_else(|| "ERROR".to_owned())
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Api(e) => fmt::Display::fmt(e, f),
            Error::Transport(e) => {
                write!(f, "{} got no answer: {}", e.operation, describe(e))?;
                if f.alternate() {
                    write_causes(f, &e.source)?;
                }
                Ok(())
            }
            Error::Token(e) => {
                write!(f, "cannot get a bearer token: {e}")?;
                if f.alternate() {
                    write_causes(f, e)?;
                }
                Ok(())
            }
            Error::Decode { status, message } => {
                write!(f, "{} answer cannot be read: {message}", status.as_u16())
            }
            Error::InvalidRequest(why) => write!(f, "invalid request: {why}"),
            Error::Stopped(why) => write!(f, "not sent: {why}"),
        }
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {}: {}",
            self.status.as_u16(),
            self.code,
            self.message
        )
    }
}

/// Shows what the server said, never the headers (they may echo
/// credentials).
impl fmt::Debug for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ApiError")
            .field("status", &self.status.as_u16())
            .field("code", &self.code)
            .field("message", &self.message)
            .field("details", &self.details)
            .field("request_id", &self.request_id)
            .field("retry_after", &self.retry_after)
            .finish()
    }
}

/// What failed, and where: `cannot connect (http://127.0.0.1:8080)`.
fn describe(error: &TransportError) -> String {
    let source = &error.source;
    let kind = if source.is_timeout() {
        "timed out"
    } else if source.is_connect() {
        "cannot connect"
    } else if source.is_body() || source.is_decode() {
        "the answer was cut off"
    } else {
        "the connection failed"
    };
    match &error.origin {
        Some(origin) => format!("{kind} ({origin})"),
        None => kind.to_owned(),
    }
}

fn write_causes(f: &mut fmt::Formatter<'_>, error: &dyn std::error::Error) -> fmt::Result {
    let mut cause = error.source();
    while let Some(error) = cause {
        write!(f, ": {error}")?;
        cause = error.source();
    }
    Ok(())
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Transport(e) => Some(&e.source),
            Error::Token(e) => Some(e),
            _ => None,
        }
    }
}

impl std::error::Error for ApiError {}

impl From<TokenError> for Error {
    fn from(e: TokenError) -> Self {
        Error::Token(e)
    }
}

impl Error {
    pub(crate) fn transport(operation: &'static str, source: reqwest::Error) -> Self {
        let origin = source.url().map(|url| url.origin().ascii_serialization());
        Error::Transport(TransportError {
            operation,
            origin,
            source: source.without_url(),
        })
    }

    /// The SDK's error for what progenitor's generated code returned;
    /// reads the body of an answer the document does not list.
    pub(crate) async fn from_generated<E: serde::Serialize>(
        operation: &'static str,
        error: progenitor_client::Error<E>,
    ) -> Self {
        use progenitor_client::Error as Generated;
        match error {
            Generated::ErrorResponse(answer) => {
                let status = answer.status();
                let headers = answer.headers().clone();
                let body = serde_json::to_vec(answer.as_ref()).unwrap_or_default();
                Error::Api(ApiError::new(status, &headers, &body))
            }
            Generated::UnexpectedResponse(response) => {
                let status = response.status();
                let headers = response.headers().clone();
                match response.bytes().await {
                    Ok(body) if status.is_client_error() || status.is_server_error() => {
                        Error::Api(ApiError::new(status, &headers, &body))
                    }
                    Ok(_) => Error::Decode {
                        status,
                        message: "the document does not list this status".to_owned(),
                    },
                    Err(e) => Error::transport(operation, e),
                }
            }
            Generated::CommunicationError(e) | Generated::ResponseBodyError(e) => {
                Error::transport(operation, e)
            }
            Generated::InvalidResponsePayload(_, e) => Error::Decode {
                status: StatusCode::OK,
                message: e.to_string(),
            },
            Generated::InvalidRequest(why) => Error::InvalidRequest(why),
            Generated::InvalidUpgrade(e) => Error::transport(operation, e),
            Generated::Custom(why) => match why.strip_prefix(STOPPED_MARK) {
                Some(why) => Error::Stopped(why.to_owned()),
                None => Error::InvalidRequest(why),
            },
        }
    }
}

/// Why a client could not be built.
#[derive(Debug)]
#[non_exhaustive]
pub enum BuildError {
    /// The server URL is not one the SDK can use, and why.
    Url { url: String, why: String },
    /// An environment variable that `from_env` needs is not set (its name).
    MissingVariable(&'static str),
    /// A credential is not a valid header value.
    Header(InvalidHeaderValue),
    /// A root certificate is not PEM (why).
    Certificate(String),
    /// TLS could not be set up (why).
    Tls(String),
    /// The HTTP client could not be set up.
    Http(reqwest::Error),
    /// Two settings that do not go together, and what to do instead.
    Conflict(&'static str),
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::Url { url, why } => write!(f, "cannot use the server URL {url:?}: {why}"),
            BuildError::MissingVariable(name) => {
                write!(f, "the environment variable {name} is not set")
            }
            BuildError::Header(_) => {
                f.write_str("a credential or the User-Agent is not a valid HTTP header value")
            }
            BuildError::Certificate(e) => write!(f, "a root certificate is not PEM: {e}"),
            BuildError::Tls(e) => write!(f, "cannot set up TLS: {e}"),
            BuildError::Http(e) => write!(f, "cannot build the HTTP client: {e}"),
            BuildError::Conflict(what) => f.write_str(what),
        }
    }
}

impl std::error::Error for BuildError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BuildError::Header(e) => Some(e),
            BuildError::Http(e) => Some(e),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_prints_as_one_line_from_either_format() {
        let petstore = ApiError::new(
            StatusCode::NOT_FOUND,
            &HeaderMap::new(),
            br#"{"code":404,"type":"NOT_FOUND","message":"pet 987654321 not found"}"#,
        );
        assert_eq!(
            petstore.to_string(),
            "404 NOT_FOUND: pet 987654321 not found"
        );
        let portfolio = ApiError::new(
            StatusCode::FORBIDDEN,
            &HeaderMap::new(),
            br#"{"error":{"code":"FORBIDDEN","message":"needs a scope","details":{"required_scope":"admin"}}}"#,
        );
        assert_eq!(portfolio.to_string(), "403 FORBIDDEN: needs a scope");
        assert_eq!(portfolio.details()["required_scope"], "admin");
        let bare = ApiError::new(StatusCode::BAD_GATEWAY, &HeaderMap::new(), b"");
        assert_eq!(bare.to_string(), "502 BAD_GATEWAY: bad gateway");
    }

    #[test]
    fn debug_output_leaves_the_headers_out() {
        let mut headers = HeaderMap::new();
        headers.insert("x-echo", "s3cret".parse().unwrap());
        let error = Error::Api(ApiError::new(StatusCode::UNAUTHORIZED, &headers, b"{}"));
        assert!(!format!("{error:?}").contains("s3cret"));
    }
}
