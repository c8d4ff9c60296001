//! The portfolio's error envelope (DESIGN 4.3, the seed's format):
//! `{"error": {"code": "...", "message": "...", "details": {...}}}`.

use axum::extract::Request;
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use utoipa::ToSchema;

use crate::error::ErrorCode;

/// Every answer that is not 2xx.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ErrorDetail {
    /// Upper case, e.g. `NOT_FOUND`, `UNAUTHORIZED`, `FORBIDDEN`.
    pub code: String,
    pub message: String,
    /// More context; may be empty. `required_header` (401), `required_scope`
    /// (403), `fields` (422: field -> problem).
    #[schema(additional_properties = true)]
    pub details: Map<String, Value>,
}

/// A portfolio error: code, message for the client, details.
#[derive(Debug)]
pub struct PortfolioError {
    code: ErrorCode,
    message: String,
    details: Map<String, Value>,
}

impl PortfolioError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            details: Map::new(),
        }
    }

    pub fn with_detail(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.details.insert(key.to_owned(), value.into());
        self
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::BadRequest, message)
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::NotFound, message)
    }

    /// 422 with `details.fields`: field -> problem.
    pub fn validation(fields: impl IntoIterator<Item = (String, String)>) -> Self {
        let fields: Map<String, Value> = fields
            .into_iter()
            .map(|(k, v)| (k, Value::String(v)))
            .collect();
        Self::new(
            ErrorCode::ValidationFailed,
            "the request breaks the rules of its fields",
        )
        .with_detail("fields", Value::Object(fields))
    }

    /// Logs the cause inside the request's span (with its request id); the
    /// client learns only that something went wrong.
    pub fn internal(context: &str, cause: impl std::fmt::Display) -> Self {
        tracing::error!(error = %cause, "{context}");
        Self::new(
            ErrorCode::InternalError,
            "internal error; the server log has the details",
        )
    }

    pub fn code(&self) -> ErrorCode {
        self.code
    }

    pub fn body(&self) -> ErrorBody {
        ErrorBody {
            error: ErrorDetail {
                code: self.code.as_str().to_owned(),
                message: self.message.clone(),
                details: self.details.clone(),
            },
        }
    }
}

impl From<sqlx::Error> for PortfolioError {
    fn from(err: sqlx::Error) -> Self {
        PortfolioError::internal("database error", err)
    }
}

impl IntoResponse for PortfolioError {
    fn into_response(self) -> Response {
        let body = self.body();
        let mut response = (self.code.status(), axum::Json(&body)).into_response();
        response.extensions_mut().insert(body);
        response
    }
}

/// Middleware over the portfolio's routes: errors produced outside the
/// handlers (no route, wrong method, body limits, timeouts, panics) leave as
/// the envelope too.
pub async fn render_errors(request: Request, next: Next) -> Response {
    let response = next.run(request).await;
    let status = response.status();
    let is_error = status.is_client_error() || status.is_server_error();
    if !is_error || response.extensions().get::<ErrorBody>().is_some() {
        return response;
    }
    let (mut parts, _) = response.into_parts();
    let (code, message) = ErrorCode::for_status(status);
    let body = json!({"error": {"code": code.as_str(), "message": message, "details": {}}});
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    Response::from_parts(parts, axum::body::Body::from(body.to_string()))
}
