//! The SDK's hooks for its callers: the `User-Agent` it sends (and the
//! caller's product before it), headers of the caller's, the caller's own
//! `reqwest::Client`, and a `tracing` span for each call with an event for
//! each retry.

use std::sync::{Arc, Mutex};

use end_to_end_tests::{Db, TestServer, Written};
use petstore_portfolio_client::petstore::BuildError;
use petstore_portfolio_client::petstore::ClientBuilder;
use petstore_portfolio_client::transport::SDK_USER_AGENT;
use reqwest::header::{HeaderName, HeaderValue};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::support::pet;

/// The headers of each request a gateway in front of the server received.
async fn received(gateway: &MockServer, name: &str) -> Vec<String> {
    gateway
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .filter_map(|request| request.headers.get(name))
        .filter_map(|value| value.to_str().ok().map(str::to_owned))
        .collect()
}

async fn gateway_with_an_inventory() -> MockServer {
    let gateway = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v2/store/inventory"))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({"sold": 1})))
        .mount(&gateway)
        .await;
    gateway
}

/// Every request says it comes from the SDK and its version, after the
/// caller's product when it names one, and carries the caller's headers.
#[tokio::test]
async fn the_sdk_names_itself_and_sends_the_callers_headers() {
    let gateway = gateway_with_an_inventory().await;
    let plain = ClientBuilder::new(gateway.uri()).build().unwrap();
    plain.get_inventory().send().await.unwrap();
    assert!(SDK_USER_AGENT.starts_with("petstore-portfolio-client/0."));
    assert_eq!(received(&gateway, "user-agent").await, [SDK_USER_AGENT]);

    gateway.reset().await;
    let gateway = gateway_with_an_inventory().await;
    let named = ClientBuilder::new(gateway.uri())
        .user_agent("pet-shop/2.1")
        .default_header(
            HeaderName::from_static("x-team"),
            HeaderValue::from_static("blue"),
        )
        .build()
        .unwrap();
    named.get_inventory().send().await.unwrap();
    assert_eq!(
        received(&gateway, "user-agent").await,
        [format!("pet-shop/2.1 {SDK_USER_AGENT}")]
    );
    assert_eq!(received(&gateway, "x-team").await, ["blue"]);

    let refused = ClientBuilder::new(gateway.uri())
        .user_agent("bad\nname")
        .build();
    assert!(matches!(refused, Err(BuildError::Header(_))));
}

/// The caller's own `reqwest::Client` carries the requests (its default
/// headers with them), with the SDK's `User-Agent` and credentials; root
/// certificates beside it are refused, saying where they go.
#[tokio::test]
async fn a_callers_own_http_client_carries_the_requests() {
    let gateway = gateway_with_an_inventory().await;
    let mut own_headers = reqwest::header::HeaderMap::new();
    own_headers.insert("x-own-client", HeaderValue::from_static("yes"));
    let own = petstore_portfolio_client::builder::http_client_builder()
        .unwrap()
        .default_headers(own_headers)
        .build()
        .unwrap();
    let client = ClientBuilder::new(gateway.uri())
        .with_reqwest_client(own.clone())
        .api_key("k-123")
        .build()
        .unwrap();
    client.get_inventory().send().await.unwrap();
    assert_eq!(received(&gateway, "x-own-client").await, ["yes"]);
    assert_eq!(received(&gateway, "api_key").await, ["k-123"]);
    assert_eq!(received(&gateway, "user-agent").await, [SDK_USER_AGENT]);

    let both = ClientBuilder::new(gateway.uri())
        .with_reqwest_client(own.clone())
        .add_root_certificate(b"-----BEGIN CERTIFICATE-----".to_vec())
        .build();
    let Err(error) = both else {
        panic!("root certificates beside an own client were taken");
    };
    assert!(matches!(error, BuildError::Conflict(_)));
    assert!(error.to_string().contains("with_reqwest_client"), "{error}");
    let both = ClientBuilder::new(gateway.uri())
        .with_reqwest_client(own)
        .configure_reqwest(|http| http)
        .build();
    assert!(matches!(both, Err(BuildError::Conflict(_))));
}

/// The HTTP client the SDK builds takes the caller's changes.
#[tokio::test]
async fn the_sdks_http_client_takes_the_callers_changes() {
    let gateway = gateway_with_an_inventory().await;
    let client = ClientBuilder::new(gateway.uri())
        .configure_reqwest(|http| {
            let mut headers = reqwest::header::HeaderMap::new();
            headers.insert("x-configured", HeaderValue::from_static("1"));
            http.default_headers(headers)
        })
        .build()
        .unwrap();
    client.get_inventory().send().await.unwrap();
    assert_eq!(received(&gateway, "x-configured").await, ["1"]);
    assert_eq!(received(&gateway, "user-agent").await, [SDK_USER_AGENT]);
}

/// One call whose first answer is cut off (the pet already committed):
/// the subscriber sees the call's span, with its operation, route, status
/// and two attempts, and the retry's event inside it.
#[tokio::test]
async fn a_call_with_a_retry_leaves_its_span_and_a_retry_event() {
    use tracing_subscriber::fmt::format::FmtSpan;
    use tracing_subscriber::layer::SubscriberExt as _;

    let server = TestServer::start(Db::Sqlite).await;
    let upstream = server.url.trim_start_matches("http://").to_owned();
    let (proxy, _cuts) = crate::sdk::cutting_proxy(upstream, "/v2/pet").await;
    let written = Written::default();
    let writer = written.clone();
    let subscriber = tracing_subscriber::registry()
        .with(
            tracing_subscriber::filter::Targets::new()
                .with_target("petstore_portfolio_client", tracing::Level::DEBUG),
        )
        .with(
            tracing_subscriber::fmt::layer()
                .with_ansi(false)
                .with_span_events(FmtSpan::CLOSE)
                .with_writer(move || writer.clone()),
        );
    let guard = tracing::subscriber::set_default(subscriber);
    let client = ClientBuilder::new(&proxy).build().unwrap();
    client
        .add_pet()
        .body(pet("Traced", &[]))
        .send()
        .await
        .expect("retried");
    drop(guard);

    let text = written.text();
    let retry = text
        .lines()
        .find(|line| line.contains("retrying"))
        .unwrap_or_else(|| panic!("no retry event:\n{text}"));
    assert!(
        retry.contains("petstore_portfolio_client.call{operation=\"add_pet\"")
            && retry.contains("attempt=1")
            && retry.contains("why=\"the connection broke\""),
        "{retry}"
    );
    let closed = text
        .lines()
        .find(|line| line.contains("close"))
        .unwrap_or_else(|| panic!("no span closed:\n{text}"));
    for field in [
        "operation=\"add_pet\"",
        "http.request.method=POST",
        "url.template=\"/v2/pet\"",
        "http.response.status_code=200",
        "attempts=2",
        "duration_ms=",
        "request_id=",
    ] {
        assert!(closed.contains(field), "{field} missing: {closed}");
    }
    server.stop().await;
}

/// The token fetches that client credentials make say where they come
/// from too.
#[tokio::test]
async fn a_token_fetch_carries_the_user_agent() {
    let gateway = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/api/oauth/token"))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "access_token": "t-1", "token_type": "Bearer", "expires_in": 3600
        })))
        .mount(&gateway)
        .await;
    let client = petstore_portfolio_client::portfolio::ClientBuilder::new(gateway.uri())
        .client_credentials("c-1", "s-1")
        .user_agent("pet-shop/2.1")
        .build()
        .unwrap();
    // Nothing answers the call itself (a 404): the token was fetched first.
    let _ = client.get_site_info().send().await;
    let requests = gateway.received_requests().await.unwrap_or_default();
    let token = requests
        .iter()
        .find(|request| request.url.path() == "/api/oauth/token")
        .expect("a token fetch");
    assert_eq!(
        token
            .headers
            .get("user-agent")
            .and_then(|v| v.to_str().ok()),
        Some(format!("pet-shop/2.1 {SDK_USER_AGENT}").as_str())
    );
}

/// The `before_send` hook sees each call's request whole (its idempotency
/// key among it), may add to it (the retry sends what it added), and may
/// stop it: a stopped call sends nothing and says why.
#[tokio::test]
async fn a_before_send_hook_changes_or_stops_each_request() {
    let gateway = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v2/pet"))
        .respond_with(ResponseTemplate::new(503))
        .up_to_n_times(1)
        .mount(&gateway)
        .await;
    Mock::given(method("POST"))
        .and(path("/v2/pet"))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "id": 7, "name": "Rex", "photoUrls": []
        })))
        .mount(&gateway)
        .await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let client = ClientBuilder::new(gateway.uri())
        .before_send(move |request| {
            let key = request
                .headers()
                .get("idempotency-key")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("none")
                .to_owned();
            log.lock().unwrap().push(key);
            request
                .headers_mut()
                .insert("x-signed", HeaderValue::from_static("yes"));
            Ok(())
        })
        .build()
        .unwrap();
    client.add_pet().body(pet("Rex", &[])).send().await.unwrap();
    let keys = seen.lock().unwrap().clone();
    assert_eq!(keys.len(), 1, "once per call: {keys:?}");
    assert_ne!(keys[0], "none");
    assert_eq!(
        received(&gateway, "idempotency-key").await,
        [keys[0].clone(), keys[0].clone()]
    );
    assert_eq!(received(&gateway, "x-signed").await, ["yes", "yes"]);

    gateway.reset().await;
    let stopping = ClientBuilder::new(gateway.uri())
        .before_send(|request| {
            Err(format!(
                "{} {} is not allowed",
                request.method(),
                request.url().path()
            ))
        })
        .build()
        .unwrap();
    let error = stopping
        .add_pet()
        .body(pet("Rex", &[]))
        .send()
        .await
        .unwrap_err();
    assert!(
        matches!(&error, petstore_portfolio_client::Error::Stopped(why) if why == "POST /v2/pet is not allowed"),
        "{error:?}"
    );
    assert_eq!(error.to_string(), "not sent: POST /v2/pet is not allowed");
    assert!(
        gateway
            .received_requests()
            .await
            .unwrap_or_default()
            .is_empty()
    );
}
