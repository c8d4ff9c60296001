//! Error codes shared by both services (DESIGN 4.3). Each service renders
//! them in its own body format: the pet store as `ApiResponse`, the
//! portfolio as the `{"error": {...}}` envelope.

use http::StatusCode;

/// Machine-readable error codes, upper case on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
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
    RateLimited,
    InternalError,
    ServiceUnavailable,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
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
            ErrorCode::RateLimited => "RATE_LIMITED",
            ErrorCode::InternalError => "INTERNAL_ERROR",
            ErrorCode::ServiceUnavailable => "SERVICE_UNAVAILABLE",
        }
    }

    pub fn status(self) -> StatusCode {
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
            ErrorCode::RateLimited => StatusCode::TOO_MANY_REQUESTS,
            ErrorCode::InternalError => StatusCode::INTERNAL_SERVER_ERROR,
            ErrorCode::ServiceUnavailable => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    /// The code for an error status produced outside our handlers (routing,
    /// body limits, timeouts), with the message to show for it.
    pub fn for_status(status: StatusCode) -> (Self, &'static str) {
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
            StatusCode::SERVICE_UNAVAILABLE | StatusCode::REQUEST_TIMEOUT => (
                ErrorCode::ServiceUnavailable,
                "the service could not answer in time",
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
