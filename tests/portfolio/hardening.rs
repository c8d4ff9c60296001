//! Requests a hostile or careless client sends: refused in the portfolio's
//! envelope before anything is read or stored.

use end_to_end_tests::{Db, TestServer, http, keys, on_every_database};
use serde_json::json;

use crate::support::assert_refused;

on_every_database!(
    a_nul_byte_in_a_contact_body_is_400_and_stores_nothing,
    a_nul_byte_in_a_portfolio_path_or_query_is_400,
);

/// Every protected operation with a body, and the scope it needs.
const PROTECTED_WITH_BODIES: [(&str, &str); 5] = [
    ("/api/contact", "contact:write"),
    ("/api/social-publish", "social:publish"),
    ("/api/notify-subscribers", "subscribers:notify"),
    ("/social-publish", "social:publish"),
    ("/notify-subscribers", "subscribers:notify"),
];

#[tokio::test]
async fn without_a_key_a_malformed_body_is_401_not_400() {
    let server = TestServer::start(Db::Sqlite).await;
    for (path, _) in PROTECTED_WITH_BODIES {
        let request = http()
            .post(server.at(path))
            .header("content-type", "application/json")
            .body("{not json");
        let body = assert_refused(request, 401, "UNAUTHORIZED").await;
        assert_eq!(body["error"]["details"]["required_header"], "X-API-Key");
    }
    server.stop().await;
}

#[tokio::test]
async fn without_a_key_a_body_over_the_limit_is_401_not_413() {
    let server = TestServer::start(Db::Sqlite).await;
    let huge = "x".repeat(2 * 1024 * 1024);
    for (path, _) in PROTECTED_WITH_BODIES {
        let request = http()
            .post(server.at(path))
            .header("content-type", "application/json")
            .body(huge.clone());
        assert_refused(request, 401, "UNAUTHORIZED").await;
    }
    server.stop().await;
}

#[tokio::test]
async fn with_an_unknown_key_a_body_in_another_media_type_is_401_not_415() {
    let server = TestServer::start(Db::Sqlite).await;
    for (path, _) in PROTECTED_WITH_BODIES {
        let request = http()
            .post(server.at(path))
            .header("x-api-key", "not-a-key")
            .header("content-type", "text/plain")
            .body("hello");
        assert_refused(request, 401, "UNAUTHORIZED").await;
    }
    server.stop().await;
}

#[tokio::test]
async fn with_a_key_lacking_the_scope_a_malformed_body_is_403_not_400() {
    let server = TestServer::start(Db::Sqlite).await;
    for (path, scope) in PROTECTED_WITH_BODIES {
        let request = http()
            .post(server.at(path))
            .header("x-api-key", keys::NO_SCOPE)
            .header("content-type", "application/json")
            .body("[]");
        let body = assert_refused(request, 403, "FORBIDDEN").await;
        assert_eq!(body["error"]["details"]["required_scope"], scope);
    }
    server.stop().await;
}

#[tokio::test]
async fn without_a_key_a_malformed_analytics_query_is_401_not_400() {
    let server = TestServer::start(Db::Sqlite).await;
    assert_refused(
        http().get(server.at("/api/analytics/summary?from=yesterday")),
        401,
        "UNAUTHORIZED",
    )
    .await;
    server.stop().await;
}

async fn a_nul_byte_in_a_contact_body_is_400_and_stores_nothing(db: Db) {
    let server = TestServer::start(db).await;
    let request = server
        .post_json(
            "/api/contact",
            json!({"name": "Ad\u{0}a", "email": "ada@example.com"}),
        )
        .header("x-api-key", keys::ADMIN);
    assert_refused(request, 400, "BAD_REQUEST").await;
    assert_eq!(server.count("contact_submissions").await, 0);
    assert_eq!(server.count("outbox").await, 0);
    server.stop().await;
}

async fn a_nul_byte_in_a_portfolio_path_or_query_is_400(db: Db) {
    let server = TestServer::start(db).await;
    for path in [
        "/api/posts/a%00b",
        "/api/newsletter/unsubscribe?token=a%00b",
    ] {
        assert_refused(http().get(server.at(path)), 400, "BAD_REQUEST").await;
    }
    server.stop().await;
}
