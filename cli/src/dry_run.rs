//! `--dry-run`: the request the command would send, as a curl command,
//! with every credential redacted; nothing is sent. The SDK's
//! `before_send` hook sees the request whole (its `Idempotency-Key` too)
//! and stops it with the command as its reason.

use petstore_portfolio_client::builder::SERVER_URL_VARIABLE;
use petstore_portfolio_client::{petstore, portfolio, reqwest};

/// Headers whose values are secrets.
const SECRET_HEADERS: [&str; 4] = ["authorization", "api_key", "x-api-key", "cookie"];

/// Headers that differ at every call and say nothing about the request.
const NOISE_HEADERS: [&str; 1] = ["traceparent"];

/// Stops the request: its curl command is the reason.
pub(crate) fn stop_with_curl(request: &mut reqwest::Request) -> Result<(), String> {
    Err(curl(request))
}

/// A pet store client for a dry run: the credentials the environment names,
/// as placeholders (a dry run needs no secret and fetches no token).
pub(crate) fn petstore_builder() -> anyhow::Result<petstore::ClientBuilder> {
    let mut builder = petstore::ClientBuilder::new(server_url()?);
    if set("PETSTORE_API_KEY") {
        builder = builder.api_key("REDACTED");
    }
    if set("PETSTORE_BEARER_TOKEN") {
        builder = builder.bearer_token("REDACTED");
    }
    if set("PETSTORE_USERNAME") {
        builder = builder.basic_auth("REDACTED", "REDACTED");
    }
    Ok(builder)
}

/// Like [`petstore_builder`], for the portfolio (client credentials become
/// a bearer token: the token request is not made).
pub(crate) fn portfolio_builder() -> anyhow::Result<portfolio::ClientBuilder> {
    let mut builder = portfolio::ClientBuilder::new(server_url()?);
    if set("PORTFOLIO_API_KEY") {
        builder = builder.api_key("REDACTED");
    }
    if set("PORTFOLIO_BEARER_TOKEN") || set("PORTFOLIO_CLIENT_ID") {
        builder = builder.bearer_token("REDACTED");
    }
    Ok(builder)
}

fn server_url() -> anyhow::Result<String> {
    std::env::var(SERVER_URL_VARIABLE)
        .ok()
        .filter(|url| !url.trim().is_empty())
        .ok_or_else(|| anyhow::anyhow!("{SERVER_URL_VARIABLE} is not set: it names the server"))
}

fn set(variable: &str) -> bool {
    std::env::var(variable).is_ok_and(|value| !value.trim().is_empty())
}

/// `request` as a curl command: method, URL, headers (secrets redacted)
/// and body, each quoted for a POSIX shell.
fn curl(request: &reqwest::Request) -> String {
    let mut parts = vec![
        "curl".to_owned(),
        "-X".to_owned(),
        request.method().to_string(),
        quote(request.url().as_str()),
    ];
    for (name, value) in request.headers() {
        if NOISE_HEADERS.contains(&name.as_str()) {
            continue;
        }
        let value = if SECRET_HEADERS.contains(&name.as_str()) {
            redacted(value.to_str().unwrap_or_default())
        } else {
            String::from_utf8_lossy(value.as_bytes()).into_owned()
        };
        parts.push("-H".to_owned());
        parts.push(quote(&format!("{name}: {value}")));
    }
    if let Some(body) = request.body().and_then(reqwest::Body::as_bytes) {
        parts.push("--data-binary".to_owned());
        parts.push(quote(&String::from_utf8_lossy(body)));
    }
    parts.join(" ")
}

/// A credential's value without its secret: the scheme of an
/// `Authorization` header stays (`Bearer REDACTED`).
fn redacted(value: &str) -> String {
    match value.split_once(' ') {
        Some((scheme, _))
            if scheme.eq_ignore_ascii_case("bearer") || scheme.eq_ignore_ascii_case("basic") =>
        {
            format!("{scheme} REDACTED")
        }
        _ => "REDACTED".to_owned(),
    }
}

/// `text` in single quotes, each `'` in it closed, escaped and reopened.
fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_redacted_and_the_rest_is_quoted() {
        let mut request = reqwest::Request::new(
            reqwest::Method::POST,
            "http://127.0.0.1:8080/api/posts?x=1".parse().unwrap(),
        );
        let headers = request.headers_mut();
        headers.insert("authorization", "Bearer s3cret".parse().unwrap());
        headers.insert("x-api-key", "pk_1_s3cret".parse().unwrap());
        headers.insert("idempotency-key", "k1".parse().unwrap());
        headers.insert("traceparent", "00-abc-def-01".parse().unwrap());
        *request.body_mut() = Some(reqwest::Body::from(r#"{"title":"it's"}"#));
        let command = curl(&request);
        assert!(!command.contains("s3cret"), "{command}");
        assert_eq!(
            command,
            "curl -X POST 'http://127.0.0.1:8080/api/posts?x=1' \
             -H 'authorization: Bearer REDACTED' -H 'x-api-key: REDACTED' \
             -H 'idempotency-key: k1' --data-binary '{\"title\":\"it'\\''s\"}'"
        );
    }
}
