//! `keys create | list | rotate | revoke`, on the database of a running
//! server, which takes each change within about a second.

use std::time::Instant;

use end_to_end_tests::{Db, TestServer, http, on_every_database, send_json, wait_until};
use serde_json::Value;

use super::{WAIT, cli, cli_fails};

on_every_database!(
    a_key_made_by_the_cli_works_at_once_and_a_revoked_one_stops,
    a_rotated_key_hands_over_to_its_replacement,
    bad_key_requests_are_refused_with_their_reasons,
);

/// The status of `GET /api/llm-context` with `key`, and the error message.
async fn llm_context_with(server: &TestServer, key: &str) -> (u16, String) {
    let (status, _, body) = send_json(
        http()
            .get(server.at("/api/llm-context"))
            .header("x-api-key", key),
    )
    .await;
    let message = body["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    (status, message)
}

fn text<'a>(value: &'a Value, field: &str) -> &'a str {
    value[field]
        .as_str()
        .unwrap_or_else(|| panic!("no {field} in {value}"))
}

async fn a_key_made_by_the_cli_works_at_once_and_a_revoked_one_stops(db: Db) {
    let server = TestServer::start(db).await;
    let made = cli(
        &server,
        &[
            "keys",
            "create",
            "--name",
            "Acme",
            "--scope",
            "context:read",
        ],
    );
    let (id, key) = (text(&made["api_key"], "id"), text(&made, "key"));
    assert!(key.starts_with(&format!("pk_{id}_")), "{made}");
    assert_eq!(
        made["api_key"]["scopes"],
        serde_json::json!(["context:read"])
    );
    wait_until(WAIT, "the server takes the new key", async || {
        llm_context_with(&server, key).await.0 == 200
    })
    .await;

    // Listed, with when it was last used, and never with its secret.
    wait_until(WAIT, "the key's use is recorded", async || {
        let listed = cli(&server, &["keys", "list"]);
        listed[0]["last_used_at"].is_string()
    })
    .await;
    let listed = cli(&server, &["keys", "list"]);
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{listed}");
    assert_eq!(text(&listed[0], "id"), id);
    // `pk_<id>_<secret>`: the secret may hold `_` itself.
    let secret = key.splitn(3, '_').nth(2).unwrap_or_default();
    assert!(!listed.to_string().contains(secret), "{listed}");

    let revoked = cli(&server, &["keys", "revoke", id]);
    assert_eq!(text(&revoked, "revoked"), id);
    let started = Instant::now();
    wait_until(WAIT, "the server refuses the revoked key", async || {
        llm_context_with(&server, key).await
            == (401, "the API key is revoked or expired".to_owned())
    })
    .await;
    println!(
        "a revocation by the CLI took {:?} to reach the server",
        started.elapsed()
    );
    let again = cli_fails(&server, &["keys", "revoke", id]);
    assert!(again.contains("revoked already"), "{again}");
    server.stop().await;
}

async fn a_rotated_key_hands_over_to_its_replacement(db: Db) {
    let server = TestServer::start(db).await;
    let made = cli(
        &server,
        &[
            "keys",
            "create",
            "--name",
            "site",
            "--scope",
            "context:read",
            "--expires-in-days",
            "30",
        ],
    );
    let (id, old_key) = (text(&made["api_key"], "id"), text(&made, "key"));

    // With the default grace, both keys work for a day.
    let rotated = cli(&server, &["keys", "rotate", id]);
    let new = &rotated["new"];
    let new_key = text(new, "key");
    assert_eq!(text(&rotated, "replaced"), id);
    assert_eq!(new["api_key"]["scopes"], made["api_key"]["scopes"]);
    assert_eq!(
        new["api_key"]["expires_at"], made["api_key"]["expires_at"],
        "the replacement lives as long"
    );
    wait_until(WAIT, "the server takes the replacement", async || {
        llm_context_with(&server, new_key).await.0 == 200
    })
    .await;
    assert_eq!(
        llm_context_with(&server, old_key).await.0,
        200,
        "still in its grace"
    );
    let again = cli_fails(&server, &["keys", "rotate", id]);
    assert!(again.contains("rotated already"), "{again}");

    // With no grace, the old key stops at once.
    let rotated = cli(
        &server,
        &[
            "keys",
            "rotate",
            text(&new["api_key"], "id"),
            "--old-key-valid-for-hours",
            "0",
        ],
    );
    let newest = text(&rotated["new"], "key");
    wait_until(WAIT, "the rotated key stops", async || {
        llm_context_with(&server, new_key).await.0 == 401
    })
    .await;
    assert_eq!(llm_context_with(&server, newest).await.0, 200);
    server.stop().await;
}

async fn bad_key_requests_are_refused_with_their_reasons(db: Db) {
    let server = TestServer::start(db).await;
    let refused = [
        (
            vec!["keys", "create", "--name", " ", "--scope", "admin"],
            "name: must not be empty",
        ),
        (
            vec!["keys", "create", "--name", "x"],
            "scopes: give at least one scope",
        ),
        (
            vec![
                "keys",
                "create",
                "--name",
                "x",
                "--service",
                "petstore",
                "--scope",
                "context:read",
            ],
            "a pet store key takes no scope but admin",
        ),
        (
            vec![
                "keys",
                "create",
                "--name",
                "x",
                "--scope",
                "admin",
                "--expires-in-days",
                "0",
            ],
            "expires_in_days: must be from 1 to 3650",
        ),
        (
            vec!["keys", "create", "--name", "x", "--scope", "root"],
            "unknown scope \"root\"",
        ),
        (vec!["keys", "rotate", "nope"], "no key \"nope\" in force"),
        (vec!["keys", "revoke", "nope"], "no key \"nope\""),
    ];
    for (args, reason) in refused {
        let stderr = cli_fails(&server, &args);
        assert!(stderr.contains(reason), "{args:?}: {stderr}");
    }
    assert_eq!(cli(&server, &["keys", "list"]), serde_json::json!([]));
    server.stop().await;
}
