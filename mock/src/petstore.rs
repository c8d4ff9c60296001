//! The pet store's typed mocks (`MockServerExt`, one method per operation)
//! and its error body.

// progenitor's output: its regexes are built from the document's paths.
#[allow(clippy::all, clippy::unwrap_used)]
#[path = "generated/petstore.rs"]
mod generated;

use std::time::Duration;

pub use generated::*;
use petstore_portfolio_client::petstore::types::ApiResponse;

/// The pet store's error body for `status`, as the server writes it: an
/// `ApiResponse` with the status as `code` and the error code as `type`.
pub fn error_body(status: u16, message: &str) -> ApiResponse {
    ApiResponse {
        code: Some(i32::from(status)),
        type_: Some(crate::error_code_for(status).as_str().to_owned()),
        message: Some(message.to_owned()),
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
