//! The HTTP plumbing around the pet store: request ids, compression, CORS,
//! and settings that are refused.

use end_to_end_tests::{Db, TestServer};
use petstore_portfolio_server::config::AuthMode;
use petstore_portfolio_server::{Config, Server};

use crate::support::http;

#[tokio::test]
async fn every_response_has_a_request_id_cors_and_negotiated_compression() {
    let server = TestServer::start_with(Db::Sqlite, |c| c.petstore.demo_data = true).await;
    let response = http()
        .get(server.at("/v2/pet/findByStatus?status=available,pending,sold"))
        .header("accept-encoding", "gzip")
        .header("origin", "https://example.test")
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    assert!(
        header("x-request-id").is_some_and(|id| id.len() >= 32),
        "{:?}",
        response.headers()
    );
    assert_eq!(header("content-encoding").as_deref(), Some("gzip"));
    assert_eq!(header("access-control-allow-origin").as_deref(), Some("*"));

    // A client's own request id is kept.
    let response = http()
        .get(server.at("/v2/pet/404"))
        .header("x-request-id", "trace-me-42")
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        response
            .headers()
            .get("x-request-id")
            .and_then(|v| v.to_str().ok()),
        Some("trace-me-42")
    );
    server.stop().await;
}

#[tokio::test]
async fn enforce_mode_is_refused_until_it_exists() {
    let data = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut config = Config {
        bind: ([127, 0, 0, 1], 0).into(),
        data_dir: data.path().to_path_buf(),
        ..Config::default()
    };
    config.petstore.auth_mode = AuthMode::Enforce;
    let error = Server::bind(config)
        .await
        .map(|_| ())
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        error.contains("enforce"),
        "starting in enforce mode must fail clearly, got {error:?}"
    );
}
