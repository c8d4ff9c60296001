//! Small helpers shared by the pet store tests.

use petstore_portfolio_client::petstore::{Error, error_body, types};

/// A pet with a name, no photos, and the given tags.
pub fn pet(name: &str, tags: &[&str]) -> types::Pet {
    types::Pet {
        id: None,
        name: name
            .parse()
            .unwrap_or_else(|e| panic!("bad pet name {name:?}: {e}")),
        category: Some(types::Category {
            id: Some(1),
            name: Some("Dogs".parse().unwrap_or_else(|e| panic!("{e}"))),
        }),
        photo_urls: vec!["https://example.test/a.png".to_owned()],
        tags: tags
            .iter()
            .map(|t| types::Tag {
                id: None,
                name: Some(t.parse().unwrap_or_else(|e| panic!("{e}"))),
            })
            .collect(),
        status: None,
    }
}

/// The status and `ApiResponse` of an error the server answered.
pub fn api_error<T>(result: Result<T, Error<types::ApiResponse>>) -> (u16, types::ApiResponse) {
    match result {
        Ok(_) => panic!("expected an error, got a success"),
        Err(error) => {
            let status = error.status().map(|s| s.as_u16()).unwrap_or_default();
            match error_body(&error) {
                Some(body) => (status, body.clone()),
                None => panic!("expected an ApiResponse, got {error:?}"),
            }
        }
    }
}

/// Asserts an `ApiResponse` error: its status and `type`.
pub fn assert_error(body: &types::ApiResponse, status: u16, kind: &str) {
    assert_eq!(body.code, Some(i32::from(status)), "{body:?}");
    assert_eq!(body.type_.as_deref(), Some(kind), "{body:?}");
    assert!(
        body.message.as_deref().is_some_and(|m| !m.is_empty()),
        "{body:?}"
    );
}

/// A raw HTTP client for what the SDK does not speak (XML, forms, bad input).
pub fn http() -> reqwest::Client {
    reqwest::Client::new()
}

/// Sends a request and returns status, content type and body text.
pub async fn send(request: reqwest::RequestBuilder) -> (u16, String, String) {
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
    (status, content_type, text)
}

/// Parses a JSON error body and checks its shape.
pub fn json_error(status: u16, content_type: &str, text: &str, kind: &str) -> serde_json::Value {
    assert!(
        content_type.starts_with("application/json"),
        "{status} {content_type}: {text}"
    );
    let body: serde_json::Value =
        serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"));
    assert_eq!(body["code"], serde_json::json!(status), "{text}");
    assert_eq!(body["type"], serde_json::json!(kind), "{text}");
    assert!(
        body["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{text}"
    );
    body
}
