//! `Idempotency-Key` on the operations that create something: a retry
//! with the same key replays the first answer and creates nothing more.

use std::time::Duration;

use end_to_end_tests::{Db, TestServer, header, http, on_every_database, send_json, wait_until};
use petstore_portfolio_server::config::AuthMode;
use serde_json::{Value, json};

on_every_database!(
    a_retry_with_the_same_key_replays_the_first_answer,
    the_same_key_with_another_body_is_422_and_adds_nothing,
    bad_keys_are_400_in_the_services_format_and_add_nothing,
    another_caller_with_the_same_key_is_another_request,
    kept_answers_outlive_a_restart_and_expire,
    an_error_answer_is_not_kept,
    in_enforce_mode_an_old_password_gets_401_not_the_kept_answer,
);

fn pet(name: &str) -> Value {
    json!({"name": name, "photoUrls": [], "status": "available"})
}

/// Posts `body` to `path` with `key`; the status, whether it was a replay,
/// and the body.
async fn post_with_key(
    server: &TestServer,
    path: &str,
    key: &str,
    body: &Value,
    credential: Option<&str>,
) -> (u16, bool, Value) {
    let mut request = server.post_json(path, body).header("Idempotency-Key", key);
    if let Some(credential) = credential {
        request = request.header("api_key", credential);
    }
    let response = request.send().await.expect("an answer");
    let status = response.status().as_u16();
    let replayed = header(response.headers(), "idempotency-replayed") == Some("true");
    let text = response.text().await.unwrap_or_default();
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (status, replayed, body)
}

async fn pets_named(server: &TestServer, name: &str) -> i64 {
    server
        .count_where("pets", &format!("name = '{name}'"))
        .await
}

async fn a_retry_with_the_same_key_replays_the_first_answer(db: Db) {
    let server = TestServer::start(db).await;
    let body = pet("Idem");
    let (status, replayed, first) = post_with_key(&server, "/v2/pet", "k-1", &body, None).await;
    assert_eq!((status, replayed), (200, false), "{first}");
    let (status, replayed, again) = post_with_key(&server, "/v2/pet", "k-1", &body, None).await;
    assert_eq!((status, replayed), (200, true), "{again}");
    assert_eq!(again, first, "the replay is the first answer");
    assert_eq!(pets_named(&server, "Idem").await, 1);
    // The draft's structured-field form is the same key.
    let (_, replayed, quoted) = post_with_key(&server, "/v2/pet", "\"k-1\"", &body, None).await;
    assert!(replayed);
    assert_eq!(quoted, first);
    // Orders and users too.
    let order = json!({"petId": first["id"], "quantity": 1});
    let (status, _, placed) = post_with_key(&server, "/v2/store/order", "o-1", &order, None).await;
    assert_eq!(status, 200, "{placed}");
    let (status, replayed, again) =
        post_with_key(&server, "/v2/store/order", "o-1", &order, None).await;
    assert_eq!((status, replayed, &again), (200, true, &placed));
    assert_eq!(server.count("orders").await, 1);
    let user = json!({"username": "idem", "password": "long enough"});
    for _ in 0..2 {
        let (status, _, _) = post_with_key(&server, "/v2/user", "u-1", &user, None).await;
        assert_eq!(status, 200);
    }
    assert_eq!(server.count_where("users", "username = 'idem'").await, 1);
}

async fn the_same_key_with_another_body_is_422_and_adds_nothing(db: Db) {
    let server = TestServer::start(db).await;
    let (status, _, _) = post_with_key(&server, "/v2/pet", "k-2", &pet("First"), None).await;
    assert_eq!(status, 200);
    let (status, replayed, body) =
        post_with_key(&server, "/v2/pet", "k-2", &pet("Second"), None).await;
    assert_eq!((status, replayed), (422, false), "{body}");
    assert!(
        body["message"]
            .as_str()
            .is_some_and(|m| m.contains("Idempotency-Key")),
        "{body}"
    );
    assert_eq!(pets_named(&server, "Second").await, 0);
    // Another operation with the same key is another request too.
    let order = json!({"petId": 1, "quantity": 1});
    let (status, _, _) = post_with_key(&server, "/v2/store/order", "k-2", &order, None).await;
    assert_eq!(status, 422);
}

async fn bad_keys_are_400_in_the_services_format_and_add_nothing(db: Db) {
    let server = TestServer::start(db).await;
    let before = server.count("pets").await;
    let long = "k".repeat(256);
    for key in ["", "\"\"", long.as_str()] {
        let (status, _, body) = post_with_key(&server, "/v2/pet", key, &pet("Bad"), None).await;
        assert_eq!(status, 400, "{key:?}: {body}");
        assert_eq!(body["code"], 400, "ApiResponse: {body}");
        assert!(
            body["message"]
                .as_str()
                .is_some_and(|m| m.contains("Idempotency-Key")),
            "{body}"
        );
    }
    // Not ASCII: reqwest sends the bytes as they are.
    let (status, _, body) = send_json(server.post_json("/v2/pet", pet("Bad")).header(
        "Idempotency-Key",
        reqwest::header::HeaderValue::from_bytes("clé".as_bytes()).unwrap(),
    ))
    .await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["message"].as_str().unwrap().contains("ASCII"),
        "{body}"
    );
    assert_eq!(server.count("pets").await, before);
    assert_eq!(server.count("idempotency_keys").await, 0);
}

async fn another_caller_with_the_same_key_is_another_request(db: Db) {
    let server = TestServer::start(db).await;
    let body = pet("Twice");
    let (_, replayed, anonymous) = post_with_key(&server, "/v2/pet", "k-3", &body, None).await;
    assert!(!replayed);
    // The open pet store takes any api_key; each is a caller of its own.
    let (_, replayed, keyed) =
        post_with_key(&server, "/v2/pet", "k-3", &body, Some("someone")).await;
    assert!(!replayed, "another caller's answer is not replayed");
    assert_ne!(anonymous["id"], keyed["id"]);
    let (_, replayed, again) =
        post_with_key(&server, "/v2/pet", "k-3", &body, Some("someone")).await;
    assert!(replayed);
    assert_eq!(again, keyed);
    assert_eq!(pets_named(&server, "Twice").await, 2);
}

async fn kept_answers_outlive_a_restart_and_expire(db: Db) {
    let server = TestServer::start(db).await;
    let body = pet("Kept");
    let (_, _, first) = post_with_key(&server, "/v2/pet", "k-4", &body, None).await;
    // Kept for a second only after the restart: then swept.
    let server = server
        .restart(|config| config.http.idempotency_keys_kept_secs = 1)
        .await;
    let (status, replayed, again) = post_with_key(&server, "/v2/pet", "k-4", &body, None).await;
    assert_eq!((status, replayed), (200, true), "kept across the restart");
    assert_eq!(again, first);
    let (_, replayed, _) = post_with_key(&server, "/v2/pet", "k-5", &body, None).await;
    assert!(!replayed);
    wait_until(
        Duration::from_secs(10),
        "the second key is swept",
        async || {
            server
                .count_where("idempotency_keys", "idem_key = 'k-5'")
                .await
                == 0
        },
    )
    .await;
    let (_, replayed, _) = post_with_key(&server, "/v2/pet", "k-5", &body, None).await;
    assert!(!replayed, "an expired key is a new request");
    assert_eq!(pets_named(&server, "Kept").await, 3);
}

async fn an_error_answer_is_not_kept(db: Db) {
    let server = TestServer::start(db).await;
    // Ordering a pet that does not exist is 422 and changes nothing...
    let order = json!({"petId": 987654, "quantity": 1});
    let (status, _, _) = post_with_key(&server, "/v2/store/order", "o-9", &order, None).await;
    assert_eq!(status, 422);
    assert_eq!(server.count("idempotency_keys").await, 0);
    // ...so the same request, once the pet exists, runs.
    let late = json!({"id": 987654, "name": "Late", "photoUrls": [], "status": "available"});
    let (status, _, _) = send_json(server.post_json("/v2/pet", late)).await;
    assert_eq!(status, 200);
    let (status, replayed, placed) =
        post_with_key(&server, "/v2/store/order", "o-9", &order, None).await;
    assert_eq!((status, replayed), (200, false), "{placed}");
}

/// A pet added with Basic credentials and a key; the user changes their
/// password; the same request with the old password is refused as it would
/// be without the key, and the kept answer is not replayed.
async fn in_enforce_mode_an_old_password_gets_401_not_the_kept_answer(db: Db) {
    use base64::Engine as _;
    let server = TestServer::start_with(db, |c| c.petstore.auth_mode = AuthMode::Enforce).await;
    let user = json!({"username": "carol", "password": "carol-password-1"});
    let (status, _, body) = send_json(server.post_json("/v2/user", &user)).await;
    assert_eq!(status, 200, "{body}");
    let basic = |password: &str| {
        let pair = format!("carol:{password}");
        format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(pair)
        )
    };
    let add = async |authorization: &str| {
        let response = server
            .post_json("/v2/pet", pet("Guarded"))
            .header("Authorization", authorization)
            .header("Idempotency-Key", "p-1")
            .send()
            .await
            .expect("an answer");
        let replayed = header(response.headers(), "idempotency-replayed") == Some("true");
        (response.status().as_u16(), replayed)
    };
    let old = basic("carol-password-1");
    assert_eq!(add(&old).await, (200, false));
    assert_eq!(
        add(&old).await,
        (200, true),
        "replayed while the password holds"
    );
    let (status, _, body) = send_json(
        http()
            .put(server.at("/v2/user/carol"))
            .header("Authorization", &old)
            .json(&json!({"username": "carol", "password": "carol-password-2"})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(add(&old).await, (401, false));
    assert_eq!(pets_named(&server, "Guarded").await, 1);
}
