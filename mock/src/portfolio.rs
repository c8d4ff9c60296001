//! The portfolio's typed mocks (`MockServerExt`, one method per operation)
//! and its error envelope.

// progenitor's output: its regexes are built from the document's paths.
#[allow(clippy::all, clippy::unwrap_used)]
#[path = "generated/portfolio.rs"]
mod generated;

use std::time::Duration;

pub use generated::*;
use petstore_portfolio_client::portfolio::types::{ErrorBody, ErrorDetail};

/// The portfolio's error envelope for `status`, as the server writes it
/// (no details).
pub fn error_body(status: u16, message: &str) -> ErrorBody {
    ErrorBody {
        error: ErrorDetail {
            code: crate::error_code_for(status).as_str().to_owned(),
            details: serde_json::Map::new(),
            message: message.to_owned(),
        },
    }
}

/// `then` answering with [`error_body`] (the generated `error` answers).
pub(crate) fn error_answer(
    then: httpmock::Then,
    status: u16,
    message: &str,
    retry_after: Option<Duration>,
) -> httpmock::Then {
    crate::error_then(then, status, &error_body(status, message), retry_after)
}
