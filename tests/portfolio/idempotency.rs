//! `Idempotency-Key` on the portfolio's creating operations: a retried
//! request replays its first answer (a new API key's secret included, to
//! the same caller only) and creates nothing more.

use end_to_end_tests::{Db, TestServer, header, on_every_database};
use petstore_portfolio_server::config::Scope;
use serde_json::{Value, json};

on_every_database!(
    a_retried_key_creation_replays_the_same_secret_and_makes_one_key,
    anonymous_callers_are_told_apart_by_address_and_the_envelope_says_why,
);

async fn post(
    server: &TestServer,
    path: &str,
    key: &str,
    token: Option<&str>,
    body: &Value,
) -> (u16, bool, Value) {
    let mut request = server.post_json(path, body).header("Idempotency-Key", key);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.expect("an answer");
    let status = response.status().as_u16();
    let replayed = header(response.headers(), "idempotency-replayed") == Some("true");
    let body = response.json().await.unwrap_or(Value::Null);
    (status, replayed, body)
}

async fn a_retried_key_creation_replays_the_same_secret_and_makes_one_key(db: Db) {
    let server = TestServer::start(db).await;
    let token = server
        .bearer_token(&[Scope::KeysManage, Scope::ContextRead])
        .await;
    let before = server.count("api_keys").await;
    let spec = json!({"name": "retried", "scopes": ["context:read"]});
    let path = "/api/admin/api-keys";
    let (status, replayed, first) = post(&server, path, "key-1", Some(&token), &spec).await;
    assert_eq!((status, replayed), (201, false), "{first}");
    let (status, replayed, again) = post(&server, path, "key-1", Some(&token), &spec).await;
    assert_eq!((status, replayed), (201, true), "{again}");
    assert_eq!(again["key"], first["key"], "the same secret, shown again");
    assert_eq!(server.count("api_keys").await, before + 1);
    // Another credential with the same key is another caller: it makes its
    // own key and never sees the first one's secret.
    let other = server
        .bearer_token(&[Scope::KeysManage, Scope::ContextRead])
        .await;
    let (status, replayed, theirs) = post(&server, path, "key-1", Some(&other), &spec).await;
    assert_eq!((status, replayed), (201, false));
    assert_ne!(theirs["key"], first["key"]);
    assert_eq!(server.count("api_keys").await, before + 2);
}

async fn anonymous_callers_are_told_apart_by_address_and_the_envelope_says_why(db: Db) {
    let server = TestServer::start(db).await;
    let path = "/api/newsletter";
    let subscribe = json!({"email": "reader@example.com"});
    let (status, replayed, first) = post(&server, path, "n-1", None, &subscribe).await;
    assert_eq!((status, replayed), (202, false), "{first}");
    let (status, replayed, again) = post(&server, path, "n-1", None, &subscribe).await;
    assert_eq!((status, replayed), (202, true));
    assert_eq!(again, first);
    let other = json!({"email": "someone.else@example.com"});
    let (status, _, body) = post(&server, path, "n-1", None, &other).await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["error"]["code"], "VALIDATION_FAILED");
    assert_eq!(body["error"]["details"]["header"], "Idempotency-Key");
    assert_eq!(
        server
            .count_where("subscribers", "email = 'someone.else@example.com'")
            .await,
        0
    );
    let (status, _, body) = post(&server, path, &"x".repeat(256), None, &other).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["error"]["code"], "BAD_REQUEST");
}
