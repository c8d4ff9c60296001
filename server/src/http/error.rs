//! The error core both services share: what went wrong (a code, a message
//! for the client, details), the HTTP status each code means, how storage
//! errors map onto codes, and the one middleware that renders every error
//! response. Each service says only how its error body looks, by
//! implementing [`ErrorFormat`]: the pet store's `ApiResponse`, the
//! portfolio's `{"error": {...}}` envelope.
//!
//! Handlers, extractors and middleware return [`Error`]; its response carries
//! the error in its extensions and no body. [`ErrorRenderer`] (each
//! service's edge, `edge.rs`; [`render_errors_around`] elsewhere),
//! wrapped around each service, writes the body in the service's format,
//! including for the bare error statuses that axum and tower-http produce by
//! themselves (no route, wrong method, timeouts), and logs internal errors
//! once, with the request id. Operations fail with a
//! [`Failure`](crate::core::failure::Failure), made an [`Error`] in one `From`.

use std::borrow::Cow;

use axum::extract::Request;
use axum::extract::path::ErrorKind;
use axum::extract::rejection::{BytesRejection, PathRejection};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value};

use crate::core::failure::Failure;
use crate::storage::StoreError;

/// Machine-readable error codes, upper case on the wire; the same in both
/// services.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ErrorCode {
    BadRequest,
    ValidationFailed,
    Unauthorized,
    Forbidden,
    NotFound,
    MethodNotAllowed,
    Conflict,
    PayloadTooLarge,
    UnsupportedMediaType,
    NotAcceptable,
    RequestTimeout,
    RateLimited,
    InternalError,
    ServiceUnavailable,
}

impl ErrorCode {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            ErrorCode::BadRequest => "BAD_REQUEST",
            ErrorCode::ValidationFailed => "VALIDATION_FAILED",
            ErrorCode::Unauthorized => "UNAUTHORIZED",
            ErrorCode::Forbidden => "FORBIDDEN",
            ErrorCode::NotFound => "NOT_FOUND",
            ErrorCode::MethodNotAllowed => "METHOD_NOT_ALLOWED",
            ErrorCode::Conflict => "CONFLICT",
            ErrorCode::PayloadTooLarge => "PAYLOAD_TOO_LARGE",
            ErrorCode::UnsupportedMediaType => "UNSUPPORTED_MEDIA_TYPE",
            ErrorCode::NotAcceptable => "NOT_ACCEPTABLE",
            ErrorCode::RequestTimeout => "REQUEST_TIMEOUT",
            ErrorCode::RateLimited => "RATE_LIMITED",
            ErrorCode::InternalError => "INTERNAL_ERROR",
            ErrorCode::ServiceUnavailable => "SERVICE_UNAVAILABLE",
        }
    }

    /// The HTTP status of an error with this code: the only place that says.
    pub(crate) fn status(self) -> StatusCode {
        match self {
            ErrorCode::BadRequest => StatusCode::BAD_REQUEST,
            ErrorCode::ValidationFailed => StatusCode::UNPROCESSABLE_ENTITY,
            ErrorCode::Unauthorized => StatusCode::UNAUTHORIZED,
            ErrorCode::Forbidden => StatusCode::FORBIDDEN,
            ErrorCode::NotFound => StatusCode::NOT_FOUND,
            ErrorCode::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            ErrorCode::Conflict => StatusCode::CONFLICT,
            ErrorCode::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            ErrorCode::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ErrorCode::NotAcceptable => StatusCode::NOT_ACCEPTABLE,
            ErrorCode::RequestTimeout => StatusCode::REQUEST_TIMEOUT,
            ErrorCode::RateLimited => StatusCode::TOO_MANY_REQUESTS,
            ErrorCode::InternalError => StatusCode::INTERNAL_SERVER_ERROR,
            ErrorCode::ServiceUnavailable => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    /// The code for an error status produced outside our handlers (routing,
    /// timeouts), with the message to show for it.
    pub(crate) fn for_status(status: StatusCode) -> (Self, &'static str) {
        match status {
            StatusCode::NOT_FOUND => (ErrorCode::NotFound, "no such resource"),
            StatusCode::METHOD_NOT_ALLOWED => (
                ErrorCode::MethodNotAllowed,
                "this method is not allowed on this path",
            ),
            StatusCode::PAYLOAD_TOO_LARGE => {
                (ErrorCode::PayloadTooLarge, "the request body is too large")
            }
            StatusCode::UNSUPPORTED_MEDIA_TYPE => (
                ErrorCode::UnsupportedMediaType,
                "unsupported request content type",
            ),
            StatusCode::NOT_ACCEPTABLE => {
                (ErrorCode::NotAcceptable, "no acceptable response format")
            }
            StatusCode::UNAUTHORIZED => (ErrorCode::Unauthorized, "authentication required"),
            StatusCode::FORBIDDEN => (ErrorCode::Forbidden, "forbidden"),
            StatusCode::CONFLICT => (ErrorCode::Conflict, "conflict"),
            StatusCode::UNPROCESSABLE_ENTITY => (ErrorCode::ValidationFailed, "validation failed"),
            StatusCode::TOO_MANY_REQUESTS => (ErrorCode::RateLimited, "too many requests"),
            StatusCode::SERVICE_UNAVAILABLE => (
                ErrorCode::ServiceUnavailable,
                "the service could not answer in time",
            ),
            StatusCode::REQUEST_TIMEOUT => (
                ErrorCode::RequestTimeout,
                "the request body arrived too slowly",
            ),
            s if s.is_server_error() => (ErrorCode::InternalError, "internal error"),
            _ => (ErrorCode::BadRequest, "bad request"),
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An error answer: what the client is told, and (for server faults) what
/// the log is told.
#[derive(Debug, Clone)]
pub(crate) struct Error {
    code: ErrorCode,
    message: Cow<'static, str>,
    details: Map<String, Value>,
    /// What really went wrong, for the log only (server faults).
    cause: Option<String>,
    /// Seconds after which a retry may succeed (`Retry-After`).
    retry_after: Option<u64>,
    /// Headers the answer carries (a `WWW-Authenticate` challenge, say).
    headers: Vec<(HeaderName, HeaderValue)>,
}

impl Error {
    pub(crate) fn new(code: ErrorCode, message: impl Into<Cow<'static, str>>) -> Self {
        Self {
            code,
            message: message.into(),
            details: Map::new(),
            cause: None,
            retry_after: None,
            headers: Vec::new(),
        }
    }

    pub(crate) fn bad_request(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorCode::BadRequest, message)
    }

    /// 422: readable, but a rule is broken; the message says which.
    pub(crate) fn validation(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorCode::ValidationFailed, message)
    }

    pub(crate) fn not_found(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorCode::NotFound, message)
    }

    pub(crate) fn conflict(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorCode::Conflict, message)
    }

    pub(crate) fn unsupported_media_type(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorCode::UnsupportedMediaType, message)
    }

    pub(crate) fn payload_too_large(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorCode::PayloadTooLarge, message)
    }

    /// A fault of the server: the client learns only that something went
    /// wrong; `context` and `cause` go to the log when the answer is rendered.
    pub(crate) fn internal(context: &str, cause: impl std::fmt::Display) -> Self {
        Self::new(
            ErrorCode::InternalError,
            "internal error; the server log has the details",
        )
        .with_cause(format!("{context}: {cause}"))
    }

    /// Adds a detail for the client (the portfolio shows details; the pet
    /// store's `ApiResponse` has no room for them).
    pub(crate) fn with_detail(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.details.insert(key.to_owned(), value.into());
        self
    }

    /// Records what went wrong for the log (never shown to the client).
    pub(crate) fn with_cause(mut self, cause: impl Into<String>) -> Self {
        self.cause = Some(cause.into());
        self
    }

    /// Tells the client when to try again (`Retry-After`, in seconds).
    pub(crate) fn with_retry_after(mut self, seconds: u64) -> Self {
        self.retry_after = Some(seconds);
        self
    }

    /// Adds a header to the answer (several of one name are all sent).
    pub(crate) fn with_header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        self.headers.push((name, value));
        self
    }

    #[cfg(test)]
    pub(crate) fn headers(&self) -> &[(HeaderName, HeaderValue)] {
        &self.headers
    }

    pub(crate) fn code(&self) -> ErrorCode {
        self.code
    }

    #[cfg(test)]
    pub(crate) fn retry_after(&self) -> Option<u64> {
        self.retry_after
    }

    pub(crate) fn message(&self) -> &str {
        &self.message
    }

    pub(crate) fn details(&self) -> &Map<String, Value> {
        &self.details
    }

    pub(crate) fn status(&self) -> StatusCode {
        self.code.status()
    }

    /// The error a bare status stands for (an answer axum or tower-http made
    /// without a body of ours).
    pub(crate) fn for_status(status: StatusCode) -> Self {
        let (code, message) = ErrorCode::for_status(status);
        Self::new(code, message)
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)?;
        if let Some(cause) = &self.cause {
            write!(f, " ({cause})")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

/// How storage failures reach the client: a unique violation is a conflict,
/// a database that cannot be reached is 503, anything else a server fault.
impl From<StoreError> for Error {
    fn from(err: StoreError) -> Self {
        match err {
            StoreError::NotFound => Error::not_found("no such resource"),
            StoreError::Conflict { .. } => {
                Error::conflict("the request conflicts with what is stored")
            }
            StoreError::Unavailable(cause) => Error::new(
                ErrorCode::ServiceUnavailable,
                "the database is unavailable; try again later",
            )
            .with_cause(format!("database unavailable: {cause}")),
            StoreError::Corrupt(what) => Error::internal("corrupt data in the database", what),
            StoreError::Database(cause) => Error::internal("database error", cause),
        }
    }
}

/// The one place an operation's failure becomes an answer: its status and
/// message, `details.fields` for broken fields, `details.required_scope`
/// for a refusal.
impl From<Failure> for Error {
    fn from(failure: Failure) -> Self {
        match failure {
            Failure::NotFound(message) => Error::not_found(message),
            Failure::Conflict(message) => Error::conflict(message),
            Failure::Invalid { message, fields } => {
                let invalid = Error::validation(message);
                if fields.is_empty() {
                    return invalid;
                }
                let fields: Map<String, Value> = fields
                    .into_iter()
                    .map(|(field, problem)| (field, Value::String(problem)))
                    .collect();
                invalid.with_detail("fields", Value::Object(fields))
            }
            Failure::Malformed(message) => Error::bad_request(message),
            Failure::Refused { message, scope } => {
                let refused = Error::new(ErrorCode::Forbidden, message);
                match scope {
                    Some(scope) => refused.with_detail("required_scope", scope),
                    None => refused,
                }
            }
            Failure::Busy {
                message,
                per_caller,
                retry_after,
            } => {
                let code = if per_caller {
                    ErrorCode::RateLimited
                } else {
                    ErrorCode::ServiceUnavailable
                };
                Error::new(code, message).with_retry_after(retry_after)
            }
            Failure::Fault { context, cause } => Error::internal(context, cause),
            Failure::Upstream { message, status } => {
                let error = Error::new(ErrorCode::ServiceUnavailable, message);
                match status {
                    Some(status) => error.with_detail("upstream_status", status),
                    None => error,
                }
            }
            Failure::Storage(error) => Error::from(error),
        }
    }
}

/// For bodies whose wire shape is the type itself.
impl From<std::convert::Infallible> for Error {
    fn from(never: std::convert::Infallible) -> Self {
        match never {}
    }
}

impl From<PathRejection> for Error {
    fn from(rejection: PathRejection) -> Self {
        // A value our own type refused (a slug, say) says why by itself;
        // axum's own messages keep their "Invalid URL" prefix.
        if let PathRejection::FailedToDeserializePathParams(e) = &rejection
            && let ErrorKind::Message(message) = e.kind()
        {
            return Error::bad_request(message.clone());
        }
        Error::bad_request(rejection.body_text())
    }
}

impl From<axum_extra::extract::QueryRejection> for Error {
    fn from(rejection: axum_extra::extract::QueryRejection) -> Self {
        let reason = match &rejection {
            axum_extra::extract::QueryRejection::FailedToDeserializeQueryString(e) => e.body_text(),
            other => other.to_string(),
        };
        Error::bad_request(format!("invalid query string: {reason}"))
    }
}

/// A body that could not be read: over the limit is 413, one that arrives
/// too slowly 408, anything else 400.
impl From<BytesRejection> for Error {
    fn from(rejection: BytesRejection) -> Self {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            Error::payload_too_large("the request body is too large")
        } else if body_timed_out(&rejection) {
            body_timeout()
        } else {
            Error::bad_request(format!(
                "cannot read the request body: {}",
                rejection.body_text()
            ))
        }
    }
}

/// Whether reading a body failed because its next part did not arrive in
/// time (tower-http's body timeout, somewhere in the error's causes).
pub(crate) fn body_timed_out(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(error) = cause {
        if error.is::<tower_http::timeout::TimeoutError>() {
            return true;
        }
        cause = error.source();
    }
    false
}

/// 408: the body's next part did not arrive within the body-read timeout.
pub(crate) fn body_timeout() -> Error {
    Error::new(
        ErrorCode::RequestTimeout,
        "the request body arrived too slowly; send it again",
    )
}

impl IntoResponse for Error {
    /// The status and the error itself; [`render_errors_around`] writes the
    /// body.
    fn into_response(self) -> Response {
        let mut response = self.status().into_response();
        for (name, value) in &self.headers {
            response.headers_mut().append(name.clone(), value.clone());
        }
        response.extensions_mut().insert(self);
        response
    }
}

/// How a service writes its error bodies.
pub(crate) trait ErrorFormat: Send + Sync + 'static {
    /// What the request says about the format of the answer (the pet store
    /// negotiates JSON or XML), read before the request is handed on.
    type Negotiated: Send + 'static;

    fn negotiate(request_headers: &HeaderMap) -> Self::Negotiated;

    /// The content type and body of `error`, answered with `status`.
    fn render(
        error: &Error,
        status: StatusCode,
        negotiated: &Self::Negotiated,
    ) -> (&'static str, String);
}

/// Marks a response whose error body is written, so that an outer renderer
/// leaves it alone.
#[derive(Debug, Clone, Copy)]
struct Rendered;

/// [`render_errors_around`] as a middleware of its own.
#[cfg(test)]
pub(crate) async fn render_errors<F: ErrorFormat>(
    request: Request,
    next: axum::middleware::Next,
) -> Response {
    render_errors_around::<F, _>(request, |request| next.run(request)).await
}

/// Renders the errors of the answer `next` gives: every 4xx and 5xx answer
/// leaves with the body of format `F`, and server faults are logged here,
/// once, with the request id ([`ErrorRenderer`], for a middleware that does
/// more than render: each service's edge, `edge.rs`).
pub(crate) async fn render_errors_around<F: ErrorFormat, Answer: Future<Output = Response>>(
    request: Request,
    next: impl FnOnce(Request) -> Answer,
) -> Response {
    let renderer = ErrorRenderer::<F>::of(&request);
    renderer.render(next(request).await)
}

/// What the error renderer reads of a request before handing it on (the
/// format it asked for, its id), and renders its answer with. It also
/// leaves the request's route template, for the metrics and the access log
/// outside, where the observing layer asked for it
/// ([`crate::telemetry::RouteSlot`]).
pub(crate) struct ErrorRenderer<F: ErrorFormat> {
    negotiated: F::Negotiated,
    /// Kept as the header (a count taken, not a copy): read only to log a
    /// fault.
    request_id: Option<HeaderValue>,
}

impl<F: ErrorFormat> ErrorRenderer<F> {
    pub(crate) fn of(request: &Request) -> Self {
        let extensions = request.extensions();
        if let Some(slot) = extensions.get::<crate::telemetry::RouteSlot>()
            && let Some(route) = extensions.get::<axum::extract::MatchedPath>()
        {
            slot.fill(route);
        }
        ErrorRenderer {
            negotiated: F::negotiate(request.headers()),
            request_id: request.headers().get(crate::telemetry::REQUEST_ID).cloned(),
        }
    }

    /// `response` as it leaves the service: a 4xx or 5xx with the body of
    /// format `F` (a fault logged), anything else as it is.
    pub(crate) fn render(self, response: Response) -> Response {
        let status = response.status();
        if !(status.is_client_error() || status.is_server_error())
            || response.extensions().get::<Rendered>().is_some()
        {
            return response;
        }
        let (mut parts, _) = response.into_parts();
        let error = parts
            .extensions
            .remove::<Error>()
            .unwrap_or_else(|| Error::for_status(status));
        log(
            &error,
            status,
            self.request_id
                .as_ref()
                .and_then(|id| id.to_str().ok())
                .unwrap_or("-"),
        );
        if let Some(seconds) = error.retry_after {
            parts
                .headers
                .entry(header::RETRY_AFTER)
                .or_insert_with(|| HeaderValue::from(seconds));
        }
        let (content_type, body) = F::render(&error, status, &self.negotiated);
        parts.headers.remove(header::CONTENT_LENGTH);
        parts
            .headers
            .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
        parts.extensions.insert(Rendered);
        Response::from_parts(parts, axum::body::Body::from(body))
    }
}

/// Marks a response whose error body is written in a format of its own
/// (OAuth's), so that the service's renderer leaves it alone.
pub(crate) fn mark_rendered(response: &mut Response) {
    response.extensions_mut().insert(Rendered);
}

/// Renders an error in format `F` outside a service's middleware (the
/// router's last fallback).
pub(crate) fn render_now<F: ErrorFormat>(error: Error, request_headers: &HeaderMap) -> Response {
    let status = error.status();
    render_now_as::<F>(error, status, request_headers)
}

/// Like [`render_now`], with a status of the error's family other than its
/// code's own (a 502 is an `INTERNAL_ERROR` too).
pub(crate) fn render_now_as<F: ErrorFormat>(
    error: Error,
    status: StatusCode,
    request_headers: &HeaderMap,
) -> Response {
    let (content_type, body) = F::render(&error, status, &F::negotiate(request_headers));
    let mut response = (status, body).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    if let Some(seconds) = error.retry_after {
        headers.insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    }
    for (name, value) in &error.headers {
        headers.insert(name.clone(), value.clone());
    }
    response.extensions_mut().insert(Rendered);
    response
}

/// Server faults go to the log with their cause; client errors do not (the
/// trace layer logs every answer's status).
fn log(error: &Error, status: StatusCode, request_id: &str) {
    let cause = error.cause.as_deref().unwrap_or(error.message());
    match error.code {
        ErrorCode::InternalError => {
            tracing::error!(request_id, %status, error = %cause, "internal error");
        }
        ErrorCode::ServiceUnavailable if error.cause.is_some() => {
            tracing::warn!(request_id, %status, error = %cause, "service unavailable");
        }
        // A slow client, not a fault of ours: worth knowing, not an error.
        ErrorCode::RequestTimeout => {
            tracing::warn!(request_id, %status, "the request body arrived too slowly");
        }
        _ => {}
    }
}

/// A panic in a handler: logged (by [`ErrorRenderer`]) and answered 500
/// without internals. For each service's edge (`edge.rs`), which catches
/// it.
pub(crate) fn panic_response(panic: Box<dyn std::any::Any + Send + 'static>) -> Response {
    let message = panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned());
    Error::internal("handler panicked", message).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storage_errors_map_to_codes_in_one_place() {
        let conflict = Error::from(StoreError::Conflict { constraint: None });
        assert_eq!(conflict.status(), StatusCode::CONFLICT);
        let unavailable = Error::from(StoreError::Unavailable("pool timed out".into()));
        assert_eq!(unavailable.status(), StatusCode::SERVICE_UNAVAILABLE);
        let fault = Error::from(StoreError::Database("syntax error".into()));
        assert_eq!(fault.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert!(
            !fault.message().contains("syntax"),
            "no internals reach the client"
        );
    }

    /// Answers `error` through the portfolio's renderer, for a request with
    /// the id `req-42`; returns the status, the body and what was logged.
    async fn rendered_with_logs(error: Error) -> (StatusCode, String, String) {
        use tower::ServiceExt as _;
        let (logs, _guard) = crate::telemetry::CapturedLogs::start();
        let app = axum::Router::new()
            .route(
                "/fails",
                axum::routing::get(move || async move { Err::<(), _>(error) }),
            )
            .layer(axum::middleware::from_fn(
                render_errors::<crate::portfolio::wire::PortfolioErrors>,
            ));
        let request = Request::builder()
            .uri("/fails")
            .header(crate::telemetry::REQUEST_ID, "req-42")
            .body(axum::body::Body::empty())
            .unwrap();
        let response = app.oneshot(request).await.unwrap();
        let status = response.status();
        let body = axum::body::to_bytes(response.into_body(), 1 << 16)
            .await
            .unwrap();
        (
            status,
            String::from_utf8_lossy(&body).into_owned(),
            logs.text(),
        )
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_fault_is_logged_once_with_the_request_id_and_hidden_from_the_client() {
        let fault = Error::internal("loading a pet", "disk on fire");
        let (status, body, logs) = rendered_with_logs(fault).await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
        assert!(body.contains("INTERNAL_ERROR"), "{body}");
        assert!(!body.contains("disk on fire"), "{body}");
        assert_eq!(logs.matches("disk on fire").count(), 1, "{logs}");
        assert!(logs.contains("req-42"), "{logs}");
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_body_that_arrives_too_slowly_is_a_warning_not_an_error() {
        let (status, body, logs) = rendered_with_logs(body_timeout()).await;
        assert_eq!(status, StatusCode::REQUEST_TIMEOUT);
        assert!(body.contains("REQUEST_TIMEOUT"), "{body}");
        assert!(logs.contains(" WARN "), "{logs}");
        assert!(!logs.contains("ERROR"), "{logs}");
    }

    /// The codes the server answers with are the ones the documents list
    /// for clients (`x-error-codes`, from which the SDK's `ErrorCode` is
    /// generated): every one of them in one document or the other, and
    /// nothing listed that the server never says.
    #[test]
    fn the_documents_list_every_code_the_server_answers_with() {
        use ErrorCode::*;
        let all = [
            BadRequest,
            ValidationFailed,
            Unauthorized,
            Forbidden,
            NotFound,
            MethodNotAllowed,
            Conflict,
            PayloadTooLarge,
            UnsupportedMediaType,
            NotAcceptable,
            RequestTimeout,
            RateLimited,
            InternalError,
            ServiceUnavailable,
        ];
        // A new code fails to compile here until it is in `all`.
        for code in all {
            match code {
                BadRequest | ValidationFailed | Unauthorized | Forbidden | NotFound
                | MethodNotAllowed | Conflict | PayloadTooLarge | UnsupportedMediaType
                | NotAcceptable | RequestTimeout | RateLimited | InternalError
                | ServiceUnavailable => {}
            }
        }
        fn listed(value: &Value, into: &mut std::collections::BTreeSet<String>) -> usize {
            match value {
                Value::Object(map) => {
                    let own = match map.get("x-error-codes") {
                        Some(Value::Array(codes)) => {
                            into.extend(codes.iter().filter_map(Value::as_str).map(str::to_owned));
                            codes.len()
                        }
                        _ => 0,
                    };
                    own + map.values().map(|v| listed(v, into)).sum::<usize>()
                }
                Value::Array(items) => items.iter().map(|v| listed(v, into)).sum(),
                _ => 0,
            }
        }
        let mut codes = std::collections::BTreeSet::new();
        for yaml in [
            crate::http::docs::PETSTORE_YAML,
            crate::http::docs::PORTFOLIO_YAML,
        ] {
            let document = crate::http::docs::yaml_to_json(yaml).unwrap();
            assert!(
                listed(&document, &mut codes) > 0,
                "a document lists no codes"
            );
        }
        let said: std::collections::BTreeSet<String> =
            all.iter().map(|code| code.as_str().to_owned()).collect();
        assert_eq!(codes, said);
    }
}
