//! Helpers shared by the portfolio tests.

use petstore_portfolio_client::portfolio::{Error, error_body, types};

/// The status and envelope of an error the server answered.
pub fn api_error<T>(result: Result<T, Error<types::ErrorBody>>) -> (u16, types::ErrorDetail) {
    match result {
        Ok(_) => panic!("expected an error, got a success"),
        Err(error) => {
            let status = error.status().map(|s| s.as_u16()).unwrap_or_default();
            match error_body(&error) {
                Some(body) => (status, body.error.clone()),
                None => panic!("expected the error envelope, got {error:?}"),
            }
        }
    }
}

/// Sends a raw request; returns status, content type and the body as JSON.
pub async fn send_json(request: reqwest::RequestBuilder) -> (u16, String, serde_json::Value) {
    let response = request
        .send()
        .await
        .unwrap_or_else(|e| panic!("request failed: {e}"));
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let text = response.text().await.unwrap_or_default();
    let body = serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"));
    (status, content_type, body)
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
