//! Publishing to a Mastodon-compatible API, faked at the HTTP level (wiremock).

use std::time::Duration;

use end_to_end_tests::{Db, TestServer, keys, on_every_database};
use petstore_portfolio_client::portfolio::types;
use petstore_portfolio_server::config::MastodonConfig;
use serde_json::json;
use wiremock::matchers::{body_partial_json, header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::support::{api_error, assert_envelope, send_json};

on_every_database!(
    without_a_network_it_is_a_dry_run,
    publishes_once_with_bearer_token_and_idempotency_key,
    upstream_failures_are_503_and_record_nothing,
    publishing_needs_the_scope_and_a_post,
);

fn mastodon(server: &MockServer, timeout_secs: u64) -> MastodonConfig {
    MastodonConfig {
        instance_url: server.uri(),
        access_token: "test-token".to_owned(),
        visibility: "public".to_owned(),
        timeout_secs,
    }
}

fn request(slug: &str) -> types::PublishRequest {
    types::PublishRequest {
        post_slug: slug.parse().unwrap_or_else(|e| panic!("{e}")),
    }
}

async fn without_a_network_it_is_a_dry_run(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.portfolio_with_key(Some(keys::ADMIN));
    for _ in 0..2 {
        let result = client
            .social_publish()
            .body(request("outbox-pattern"))
            .send()
            .await;
        let result = result.unwrap_or_else(|e| panic!("{e}")).into_inner();
        assert!(result.dry_run);
        assert_eq!(result.status, types::PublishResultStatus::DryRun);
        assert!(!result.already_published);
        assert!(
            result.text.starts_with("Emails that are never lost"),
            "{}",
            result.text
        );
        assert!(
            result
                .text
                .ends_with(&format!("{}/api/posts/outbox-pattern", server.url))
        );
    }
    server.stop().await;
}

async fn publishes_once_with_bearer_token_and_idempotency_key(db: Db) {
    let mastodon_server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/api/v1/statuses"))
        .and(header("authorization", "Bearer test-token"))
        .and(header(
            "idempotency-key",
            "petstore-portfolio-post-outbox-pattern",
        ))
        .and(body_partial_json(json!({"visibility": "public"})))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"id": "109", "url": "https://social.example/@ada/109"})),
        )
        .expect(1)
        .mount(&mastodon_server)
        .await;
    let config = mastodon(&mastodon_server, 5);
    let server = TestServer::start_with(db, move |c| c.portfolio.mastodon = Some(config)).await;
    let client = server.portfolio_with_key(Some(keys::ADMIN));

    let first = client
        .social_publish()
        .body(request("outbox-pattern"))
        .send()
        .await;
    let first = first.unwrap_or_else(|e| panic!("{e}")).into_inner();
    assert_eq!(first.status, types::PublishResultStatus::Published);
    assert!(!first.dry_run && !first.already_published);
    assert_eq!(first.remote_id.as_deref(), Some("109"));
    assert_eq!(
        first.remote_url.as_deref(),
        Some("https://social.example/@ada/109")
    );
    let sent = mastodon_server
        .received_requests()
        .await
        .unwrap_or_default();
    let body: serde_json::Value = serde_json::from_slice(&sent[0].body).unwrap_or_default();
    assert_eq!(body["status"], first.text.as_str());

    // Again, and through the deprecated alias: reported, not sent.
    let again = client
        .social_publish()
        .body(request("outbox-pattern"))
        .send()
        .await;
    let again = again.unwrap_or_else(|e| panic!("{e}")).into_inner();
    assert!(again.already_published);
    assert_eq!(again.remote_id.as_deref(), Some("109"));
    let (status, _, body) = send_json(
        reqwest::Client::new()
            .post(server.at("/social-publish"))
            .header("x-api-key", keys::ADMIN)
            .header("content-type", "application/json")
            .body(json!({"post_slug": "outbox-pattern"}).to_string()),
    )
    .await;
    assert_eq!(
        (status, body["already_published"].as_bool()),
        (200, Some(true)),
        "{body}"
    );
    server.stop().await;
    // Dropping the mock server checks that exactly one status was posted.
}

async fn upstream_failures_are_503_and_record_nothing(db: Db) {
    let mastodon_server = MockServer::start().await;
    let config = mastodon(&mastodon_server, 1);
    let server = TestServer::start_with(db, move |c| c.portfolio.mastodon = Some(config)).await;
    let client = server.portfolio_with_key(Some(keys::ADMIN));
    for (answer, upstream) in [
        (
            ResponseTemplate::new(401)
                .set_body_json(json!({"error": "The access token is invalid"})),
            Some(401_u16),
        ),
        (
            ResponseTemplate::new(422).set_body_json(json!({"error": "Validation failed"})),
            Some(422),
        ),
        (ResponseTemplate::new(503), Some(503)),
        (
            ResponseTemplate::new(200).set_body_string("not json"),
            Some(200),
        ),
        (
            ResponseTemplate::new(200).set_delay(Duration::from_secs(3)),
            None,
        ),
    ] {
        mastodon_server.reset().await;
        Mock::given(method("POST"))
            .and(path("/api/v1/statuses"))
            .respond_with(answer)
            .mount(&mastodon_server)
            .await;
        let (status, error) = api_error(
            client
                .social_publish()
                .body(request("why-contract-first"))
                .send()
                .await,
        );
        assert_eq!(
            (status, error.code.as_str()),
            (503, "SERVICE_UNAVAILABLE"),
            "{error:?}"
        );
        assert_eq!(
            error
                .details
                .get("upstream_status")
                .and_then(|v| v.as_u64()),
            upstream.map(u64::from)
        );
        assert_eq!(
            server.count("social_publications").await,
            0,
            "a failure records nothing"
        );
    }
    // Once the network works again, the post is published.
    mastodon_server.reset().await;
    Mock::given(method("POST"))
        .and(path("/api/v1/statuses"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"id": "7", "url": null})))
        .mount(&mastodon_server)
        .await;
    let result = client
        .social_publish()
        .body(request("why-contract-first"))
        .send()
        .await;
    let result = result.unwrap_or_else(|e| panic!("{e}")).into_inner();
    assert_eq!(
        (result.remote_id.as_deref(), result.already_published),
        (Some("7"), false)
    );
    server.stop().await;
}

async fn publishing_needs_the_scope_and_a_post(db: Db) {
    let server = TestServer::start(db).await;
    let (status, error) = api_error(
        server
            .portfolio()
            .social_publish()
            .body(request("outbox-pattern"))
            .send()
            .await,
    );
    assert_eq!((status, error.code.as_str()), (401, "UNAUTHORIZED"));
    let (status, error) = api_error(
        server
            .portfolio_with_key(Some(keys::CONTEXT_READER))
            .social_publish()
            .body(request("outbox-pattern"))
            .send()
            .await,
    );
    assert_eq!((status, error.code.as_str()), (403, "FORBIDDEN"));
    assert_eq!(
        error.details.get("required_scope"),
        Some(&json!("social:publish"))
    );
    let (status, error) = api_error(
        server
            .portfolio_with_key(Some(keys::ADMIN))
            .social_publish()
            .body(request("no-such-post"))
            .send()
            .await,
    );
    assert_eq!((status, error.code.as_str()), (404, "NOT_FOUND"));
    let (status, _, body) = send_json(
        reqwest::Client::new()
            .post(server.at("/api/social-publish"))
            .header("x-api-key", keys::ADMIN)
            .header("content-type", "application/json")
            .body("{\"post_slug\": 5}"),
    )
    .await;
    assert_eq!(status, 400);
    assert_envelope(&body, "BAD_REQUEST");
    server.stop().await;
}
