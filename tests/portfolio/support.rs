//! Helpers shared by the portfolio tests.

use end_to_end_tests::send_json;
use petstore_portfolio_client::portfolio::{Error, types};

/// The status and envelope of an error the server answered.
pub fn api_error<T>(result: Result<T, Error>) -> (u16, types::ErrorDetail) {
    match result {
        Ok(_) => panic!("expected an error, got a success"),
        Err(error) => match error.api() {
            // The envelope the server answered, as the SDK reads it.
            Some(answer) => (
                answer.status().as_u16(),
                types::ErrorDetail {
                    code: answer.code().to_owned(),
                    message: answer.message().to_owned(),
                    details: answer.details().clone(),
                },
            ),
            None => panic!("expected the error envelope, got {error:?}"),
        },
    }
}

/// Asserts that the SDK call failed with `status` and an envelope of `code`;
/// returns the envelope's content.
pub fn assert_api_error<T>(
    result: Result<T, Error>,
    status: u16,
    code: &str,
) -> types::ErrorDetail {
    let (got, error) = api_error(result);
    assert_eq!((got, error.code.as_str()), (status, code), "{error:?}");
    error
}

/// Asserts the envelope's shape and code.
pub fn assert_envelope(body: &serde_json::Value, code: &str) {
    assert_eq!(body["error"]["code"], code, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()),
        "{body}"
    );
    assert!(body["error"]["details"].is_object(), "{body}");
}

/// Sends a raw request and asserts that it is refused with `status` and a
/// JSON envelope of `code`; returns the whole body.
pub async fn assert_refused(
    request: reqwest::RequestBuilder,
    status: u16,
    code: &str,
) -> serde_json::Value {
    let (got, content_type, body) = send_json(request).await;
    assert_eq!(got, status, "{code}: {body}");
    assert!(
        content_type.starts_with("application/json"),
        "{content_type}"
    );
    assert_envelope(&body, code);
    body
}

/// A slug, a path or another string the SDK checks before sending.
pub fn parse<T: std::str::FromStr<Err: std::fmt::Display>>(value: &str) -> T {
    value.parse().unwrap_or_else(|e| panic!("{value:?}: {e}"))
}
