//! Publishing to a Mastodon-compatible API, faked at the HTTP level (wiremock).

use std::time::Duration;

use end_to_end_tests::{Db, TestServer, keys, on_every_database, send_json};
use petstore_portfolio_client::portfolio::{Client, Error, types};
use petstore_portfolio_server::config::MastodonConfig;
use serde_json::json;
use wiremock::matchers::{body_partial_json, header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::support::{assert_api_error, assert_refused, parse};

on_every_database!(
    without_a_network_it_is_a_dry_run,
    publishing_posts_once_with_the_token_and_an_idempotency_key,
    the_callers_trace_goes_on_to_the_social_network,
    publishing_again_reports_without_sending,
    the_deprecated_path_reports_without_sending,
    upstream_failures_are_503_and_record_nothing,
    after_an_upstream_failure_publishing_works,
    publishing_without_a_key_is_401,
    publishing_without_the_scope_is_403,
    publishing_an_unknown_post_is_404,
    publishing_with_a_malformed_body_is_400,
);

fn mastodon(server: &MockServer, timeout_secs: u64) -> MastodonConfig {
    MastodonConfig {
        instance_url: server.uri(),
        access_token: "test-token".to_owned().into(),
        visibility: "public".to_owned(),
        timeout_secs,
    }
}

/// A server that publishes to `mastodon_server`, giving it `timeout_secs`.
async fn start_with_mastodon(
    db: Db,
    mastodon_server: &MockServer,
    timeout_secs: u64,
) -> TestServer {
    let config = mastodon(mastodon_server, timeout_secs);
    TestServer::start_with(db, move |c| c.portfolio.mastodon = Some(config)).await
}

async fn publish(client: &Client, slug: &str) -> Result<types::PublishResult, Error> {
    let request = types::PublishRequest {
        post_slug: parse(slug),
    };
    let answer = client.social_publish().body(request).send().await;
    answer.map(|result| result.into_inner())
}

async fn without_a_network_it_is_a_dry_run(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.portfolio_with_key(Some(keys::ADMIN));
    for _ in 0..2 {
        let result = publish(&client, "outbox-pattern")
            .await
            .expect("socialPublish");
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

/// A fake Mastodon that expects exactly one status for `outbox-pattern`,
/// with the token and the idempotency key, and answers it as status 109.
/// Dropping it checks that exactly one status was posted.
async fn mastodon_expecting_one_status() -> MockServer {
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
    mastodon_server
}

async fn publishing_posts_once_with_the_token_and_an_idempotency_key(db: Db) {
    let mastodon_server = mastodon_expecting_one_status().await;
    let server = start_with_mastodon(db, &mastodon_server, 5).await;
    let client = server.portfolio_with_key(Some(keys::ADMIN));
    let first = publish(&client, "outbox-pattern")
        .await
        .expect("socialPublish");
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
    server.stop().await;
}

/// The SDK sends its caller's trace (`with_traceparent`); the server
/// continues it, and its call to the instance carries it on, from a span
/// of its own.
async fn the_callers_trace_goes_on_to_the_social_network(db: Db) {
    let mastodon_server = mastodon_expecting_one_status().await;
    let server = start_with_mastodon(db, &mastodon_server, 5).await;
    let trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    let caller_span = "00f067aa0ba902b7";
    let client = server
        .portfolio_with_key(Some(keys::ADMIN))
        .with_traceparent(&format!("00-{trace}-{caller_span}-01"));
    publish(&client, "outbox-pattern")
        .await
        .expect("socialPublish");
    let sent = mastodon_server
        .received_requests()
        .await
        .unwrap_or_default();
    let traceparent = sent[0]
        .headers
        .get("traceparent")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let parts: Vec<&str> = traceparent.split('-').collect();
    assert_eq!(parts.len(), 4, "{traceparent:?}");
    assert_eq!((parts[0], parts[1], parts[3]), ("00", trace, "01"));
    assert_eq!(parts[2].len(), 16);
    assert_ne!(parts[2], caller_span);
    server.stop().await;
}

async fn publishing_again_reports_without_sending(db: Db) {
    let mastodon_server = mastodon_expecting_one_status().await;
    let server = start_with_mastodon(db, &mastodon_server, 5).await;
    let client = server.portfolio_with_key(Some(keys::ADMIN));
    publish(&client, "outbox-pattern")
        .await
        .expect("socialPublish");
    let again = publish(&client, "outbox-pattern")
        .await
        .expect("socialPublish again");
    assert!(again.already_published);
    assert_eq!(again.remote_id.as_deref(), Some("109"));
    server.stop().await;
}

async fn the_deprecated_path_reports_without_sending(db: Db) {
    let mastodon_server = mastodon_expecting_one_status().await;
    let server = start_with_mastodon(db, &mastodon_server, 5).await;
    let client = server.portfolio_with_key(Some(keys::ADMIN));
    publish(&client, "outbox-pattern")
        .await
        .expect("socialPublish");
    let (status, _, body) = send_json(
        server
            .post_json("/social-publish", json!({"post_slug": "outbox-pattern"}))
            .header("x-api-key", keys::ADMIN),
    )
    .await;
    assert_eq!(
        (status, body["already_published"].as_bool()),
        (200, Some(true)),
        "{body}"
    );
    server.stop().await;
}

/// Makes the fake Mastodon answer every status with `answer`, and nothing else.
async fn mastodon_answers(mastodon_server: &MockServer, answer: ResponseTemplate) {
    mastodon_server.reset().await;
    Mock::given(method("POST"))
        .and(path("/api/v1/statuses"))
        .respond_with(answer)
        .mount(mastodon_server)
        .await;
}

async fn upstream_failures_are_503_and_record_nothing(db: Db) {
    let mastodon_server = MockServer::start().await;
    let server = start_with_mastodon(db, &mastodon_server, 1).await;
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
        mastodon_answers(&mastodon_server, answer).await;
        let published = publish(&client, "why-contract-first").await;
        let error = assert_api_error(published, 503, "SERVICE_UNAVAILABLE");
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
    server.stop().await;
}

/// Once the network works again, the post is published.
async fn after_an_upstream_failure_publishing_works(db: Db) {
    let mastodon_server = MockServer::start().await;
    let server = start_with_mastodon(db, &mastodon_server, 1).await;
    let client = server.portfolio_with_key(Some(keys::ADMIN));
    mastodon_answers(&mastodon_server, ResponseTemplate::new(503)).await;
    let failed = publish(&client, "why-contract-first").await;
    assert_api_error(failed, 503, "SERVICE_UNAVAILABLE");

    let published = json!({"id": "7", "url": null});
    mastodon_answers(
        &mastodon_server,
        ResponseTemplate::new(200).set_body_json(published),
    )
    .await;
    let result = publish(&client, "why-contract-first")
        .await
        .expect("socialPublish");
    assert_eq!(
        (result.remote_id.as_deref(), result.already_published),
        (Some("7"), false)
    );
    server.stop().await;
}

async fn publishing_without_a_key_is_401(db: Db) {
    let server = TestServer::start(db).await;
    let published = publish(&server.portfolio(), "outbox-pattern").await;
    assert_api_error(published, 401, "UNAUTHORIZED");
    server.stop().await;
}

async fn publishing_without_the_scope_is_403(db: Db) {
    let server = TestServer::start(db).await;
    let reader = server.portfolio_with_key(Some(keys::CONTEXT_READER));
    let error = assert_api_error(publish(&reader, "outbox-pattern").await, 403, "FORBIDDEN");
    assert_eq!(
        error.details.get("required_scope"),
        Some(&json!("social:publish"))
    );
    server.stop().await;
}

async fn publishing_an_unknown_post_is_404(db: Db) {
    let server = TestServer::start(db).await;
    let admin = server.portfolio_with_key(Some(keys::ADMIN));
    assert_api_error(publish(&admin, "no-such-post").await, 404, "NOT_FOUND");
    server.stop().await;
}

async fn publishing_with_a_malformed_body_is_400(db: Db) {
    let server = TestServer::start(db).await;
    let request = server
        .post_json("/api/social-publish", "{\"post_slug\": 5}")
        .header("x-api-key", keys::ADMIN);
    assert_refused(request, 400, "BAD_REQUEST").await;
    server.stop().await;
}
