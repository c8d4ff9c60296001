//! `key-requests` and `clients`, on the database of a running server: an
//! approved request's key is printed once and emailed by the server; a
//! client made here gets tokens there, and its revocation ends them within
//! about a second.

use end_to_end_tests::smtp::SmtpServer;
use end_to_end_tests::{Db, TestServer, http, on_every_database, send_json, wait_until};
use serde_json::{Value, json};

use super::{WAIT, cli, cli_fails, run};

on_every_database!(
    a_key_request_approved_by_the_cli_is_emailed_and_works,
    a_client_made_by_the_cli_gets_tokens_until_it_is_revoked,
    what_came_from_outside_is_printed_escaped,
);

fn text<'a>(value: &'a Value, field: &str) -> &'a str {
    value[field]
        .as_str()
        .unwrap_or_else(|| panic!("no {field} in {value}"))
}

async fn a_key_request_approved_by_the_cli_is_emailed_and_works(db: Db) {
    let Some((server, port)) = TestServer::start_with_smtp_down(db, |_| {}).await else {
        return;
    };
    let smtp = SmtpServer::start_on(port);
    let (status, _, asked) = send_json(server.post_json(
        "/api/key-requests",
        json!({
            "name": "Ada", "organisation": "Acme", "intended_use": "a dashboard",
            "expected_volume": "little", "technical_contact": "ada@example.test"
        }),
    ))
    .await;
    assert_eq!(status, 202, "{asked}");
    let id = text(&asked, "id");

    let pending = cli(&server, &["key-requests", "list", "--status", "pending"]);
    assert_eq!(pending.as_array().map(Vec::len), Some(1), "{pending}");
    let approved = cli(
        &server,
        &["key-requests", "approve", id, "--scope", "context:read"],
    );
    assert_eq!(approved["request"]["status"], "approved");
    let key = text(&approved, "key");
    wait_until(WAIT, "the server takes the approved key", async || {
        let (status, _, _) = send_json(
            http()
                .get(server.at("/api/llm-context"))
                .header("x-api-key", key),
        )
        .await;
        status == 200
    })
    .await;
    let emails = smtp.wait_for(2, WAIT).await;
    assert!(
        emails
            .iter()
            .any(|m| m.rcpt_tos.contains(&"ada@example.test".to_owned()) && m.body.contains(key)),
        "{emails:?}"
    );
    let again = cli_fails(&server, &["key-requests", "reject", id]);
    assert!(again.contains("approved already"), "{again}");
    let unknown = cli_fails(&server, &["key-requests", "approve", "kr_nope"]);
    assert!(unknown.contains("no key request"), "{unknown}");
    server.stop().await;
}

async fn a_client_made_by_the_cli_gets_tokens_until_it_is_revoked(db: Db) {
    let server = TestServer::start(db).await;
    let made = cli(
        &server,
        &[
            "clients",
            "create",
            "--name",
            "backend",
            "--scope",
            "keys:manage",
        ],
    );
    let (id, secret) = (
        text(&made["client"], "client_id"),
        text(&made, "client_secret"),
    );
    let (status, _, token) = send_json(
        http()
            .post(server.at("/api/oauth/token"))
            .basic_auth(id, Some(secret))
            .form(&[("grant_type", "client_credentials")]),
    )
    .await;
    assert_eq!(status, 200, "{token}");
    let token = text(&token, "access_token").to_owned();
    let admin_read = async || {
        let (status, _, _) = send_json(
            http()
                .get(server.at("/api/admin/api-keys"))
                .bearer_auth(&token),
        )
        .await;
        status
    };
    assert_eq!(admin_read().await, 200);

    let listed = cli(&server, &["clients", "list"]);
    assert_eq!(text(&listed[0], "client_id"), id);
    assert!(!listed.to_string().contains(secret), "{listed}");
    cli(&server, &["clients", "revoke", id]);
    wait_until(WAIT, "the server ends the client's tokens", async || {
        admin_read().await == 401
    })
    .await;
    let again = cli_fails(&server, &["clients", "revoke", id]);
    assert!(again.contains("revoked already"), "{again}");
    let bad = cli_fails(&server, &["clients", "create", "--name", "x"]);
    assert!(bad.contains("scopes: give at least one scope"), "{bad}");
    server.stop().await;
}

/// A key request stored before the text policy refused control characters
/// (written straight into the database here) is listed with its escape
/// sequences shown, not played: the operator's screen is not cleared, no
/// row is faked, the window title stays.
async fn what_came_from_outside_is_printed_escaped(db: Db) {
    let server = TestServer::start(db).await;
    server
        .execute(
            "INSERT INTO key_requests (id, name, organisation, intended_use, expected_volume, \
             technical_contact, status, created_at_ms) VALUES ('kr_0000000000000001', \
             $1, $2, 'use', 'little', 'ada@example.test', 'pending', 1)",
            &["Ada\u{1b}[2J", "Acme\r\nkr_fake  pending"],
        )
        .await;
    let listed = run(&server, &["key-requests", "list"]);
    assert!(listed.status.success());
    let out = String::from_utf8(listed.stdout).unwrap();
    assert!(!out.contains('\u{1b}') && !out.contains('\r'), "{out:?}");
    assert!(out.contains("Ada\\u{1b}[2J"), "{out}");
    assert_eq!(out.lines().count(), 1, "one request, one line: {out}");
    // The columns are separated by tabs, not by escapes of tabs.
    assert_eq!(out.trim_end().split('\t').count(), 6, "{out:?}");
    server.stop().await;
}
