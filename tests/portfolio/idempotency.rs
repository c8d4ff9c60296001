//! `Idempotency-Key` on the portfolio's creating operations: a retried
//! request replays its first answer (a new API key's secret included, to
//! the same caller only) and creates nothing more. A key is looked at only
//! once the request's credentials pass: a credential no longer valid gets
//! its refusal, never a kept answer, and a refused request is never read.

use std::time::Duration;

use end_to_end_tests::{Db, TestServer, header, http, on_every_database, send, wait_until};
use petstore_portfolio_server::config::Scope;
use serde_json::{Value, json};

on_every_database!(
    a_retried_key_creation_replays_the_same_secret_and_makes_one_key,
    anonymous_callers_are_told_apart_by_address_and_the_envelope_says_why,
    a_revoked_token_gets_401_not_the_kept_answer,
    an_expired_token_gets_401_not_the_kept_answer,
    a_revoked_or_rotated_out_api_key_gets_401_not_the_kept_answer,
    a_refused_request_with_a_key_is_answered_before_its_body_arrives,
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

/// Asserts that `answer` is the refusal of a credential no longer valid:
/// 401 in the envelope, nothing replayed.
fn refused_not_replayed((status, replayed, body): (u16, bool, Value)) {
    assert_eq!((status, replayed), (401, false), "{body}");
    assert_eq!(body["error"]["code"], "UNAUTHORIZED", "{body}");
    assert!(body.get("key").is_none(), "no secret in a refusal: {body}");
}

async fn a_revoked_token_gets_401_not_the_kept_answer(db: Db) {
    let server = TestServer::start(db).await;
    let (id, secret) = server.oauth_client(&[Scope::Admin]).await;
    let token = server.token_of_client(&id, &secret).await;
    let spec = json!({"name": "made before the revocation", "scopes": ["context:read"]});
    let path = "/api/admin/api-keys";
    let (status, _, first) = post(&server, path, "k1", Some(&token), &spec).await;
    assert_eq!(status, 201, "{first}");
    let (status, _, _) = send(
        http()
            .post(server.at("/api/oauth/revoke"))
            .basic_auth(&id, Some(&secret))
            .form(&[("token", token.as_str())]),
    )
    .await;
    assert_eq!(status, 200);
    refused_not_replayed(post(&server, path, "k1", Some(&token), &spec).await);
}

async fn an_expired_token_gets_401_not_the_kept_answer(db: Db) {
    let server = TestServer::start_with(db, |c| c.portfolio.oauth.token_ttl_secs = 1).await;
    let token = server.bearer_token(&[Scope::Admin]).await;
    let spec = json!({"name": "made before the expiry", "scopes": ["context:read"]});
    let path = "/api/admin/api-keys";
    let (status, _, first) = post(&server, path, "k1", Some(&token), &spec).await;
    assert_eq!(status, 201, "{first}");
    wait_until(Duration::from_secs(10), "the token expires", async || {
        let (status, _, _) = send(http().get(server.at(path)).bearer_auth(&token)).await;
        status == 401
    })
    .await;
    refused_not_replayed(post(&server, path, "k1", Some(&token), &spec).await);
}

async fn a_revoked_or_rotated_out_api_key_gets_401_not_the_kept_answer(db: Db) {
    let server = TestServer::start(db).await;
    let admin = server.bearer_token(&[Scope::Admin]).await;
    let contact = json!({"name": "Ada", "email": "ada@example.com", "message": "hello"});
    for (n, retire) in ["revoke", "rotate?old_key_valid_for_hours=0"]
        .into_iter()
        .enumerate()
    {
        let (status, _, made) = post(
            &server,
            "/api/admin/api-keys",
            &format!("make-{n}"),
            Some(&admin),
            &json!({"name": format!("site {n}"), "scopes": ["contact:write"]}),
        )
        .await;
        assert_eq!(status, 201, "{made}");
        let (id, key) = (
            made["api_key"]["id"].as_str().unwrap(),
            made["key"].as_str().unwrap(),
        );
        let send_contact = async || {
            let response = server
                .post_json("/api/contact", &contact)
                .header("X-API-Key", key)
                .header("Idempotency-Key", "c1")
                .send()
                .await
                .expect("an answer");
            let status = response.status().as_u16();
            let replayed = header(response.headers(), "idempotency-replayed") == Some("true");
            (
                status,
                replayed,
                response.json().await.unwrap_or(Value::Null),
            )
        };
        let (status, _, first) = send_contact().await;
        assert_eq!(status, 201, "{first}");
        let (status, _, _) = send(
            http()
                .post(server.at(&format!("/api/admin/api-keys/{id}/{retire}")))
                .bearer_auth(&admin),
        )
        .await;
        assert_eq!(status, 200, "{retire}");
        refused_not_replayed(send_contact().await);
    }
    assert_eq!(server.count("contact_submissions").await, 2);
}

/// Without credentials, a request that declares a large body and sends one
/// byte of it is refused at once with a key as without one: its body is
/// not waited for (the server's body timeout is far beyond the wait here)
/// and the key store is not touched.
async fn a_refused_request_with_a_key_is_answered_before_its_body_arrives(db: Db) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let server = TestServer::start_with(db, |c| c.http.body_read_timeout_secs = 120).await;
    for key in [None, Some("slow-1")] {
        let mut stream = tokio::net::TcpStream::connect(server.url.trim_start_matches("http://"))
            .await
            .unwrap();
        let key_header = key.map_or(String::new(), |k| format!("Idempotency-Key: {k}\r\n"));
        let head = format!(
            "POST /api/admin/projects HTTP/1.1\r\nHost: localhost\r\n\
             Content-Type: application/json\r\nContent-Length: 100000\r\n{key_header}\r\n{{"
        );
        stream.write_all(head.as_bytes()).await.unwrap();
        let mut answer = vec![0; 4096];
        let read = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut answer))
            .await
            .expect("answered while the body is still due");
        let answer = String::from_utf8_lossy(&answer[..read.unwrap()]).into_owned();
        assert!(answer.starts_with("HTTP/1.1 401"), "{key:?}: {answer}");
        assert!(answer.contains("UNAUTHORIZED"), "{answer}");
    }
    assert_eq!(server.count("idempotency_keys").await, 0);
}
