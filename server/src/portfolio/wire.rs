//! The portfolio's error body, the seed's envelope:
//! `{"error": {"code": "...", "message": "...", "details": {...}}}`.
//! What the errors are is the shared core's ([`crate::http::error`]).

use axum::http::{HeaderMap, StatusCode};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;

use crate::http::error::{Error, ErrorFormat};

/// Every answer that is not 2xx.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub(crate) struct ErrorBody {
    pub(crate) error: ErrorDetail,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub(crate) struct ErrorDetail {
    /// Upper case, e.g. `NOT_FOUND`, `UNAUTHORIZED`, `FORBIDDEN`.
    pub(crate) code: String,
    pub(crate) message: String,
    /// More context; may be empty. `required_header` (401), `required_scope`
    /// (403), `fields` (422: field -> problem).
    #[schema(additional_properties = true)]
    pub(crate) details: Map<String, Value>,
}

impl From<&Error> for ErrorBody {
    fn from(error: &Error) -> Self {
        ErrorBody {
            error: ErrorDetail {
                code: error.code().as_str().to_owned(),
                message: error.message().to_owned(),
                details: error.details().clone(),
            },
        }
    }
}

/// The portfolio's errors: the envelope, always JSON.
#[derive(Debug)]
pub(crate) struct PortfolioErrors;

impl ErrorFormat for PortfolioErrors {
    type Negotiated = ();

    fn negotiate(_request_headers: &HeaderMap) {}

    fn render(error: &Error, _status: StatusCode, (): &()) -> (&'static str, String) {
        let body = serde_json::to_string(&ErrorBody::from(error))
            .unwrap_or_else(|_| String::from(r#"{"error":{}}"#));
        ("application/json", body)
    }
}
