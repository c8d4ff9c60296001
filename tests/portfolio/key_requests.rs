//! Asking for an API key, and the operator's answer: the key is emailed
//! (over real SMTP) to the technical contact, works at once, and the outbox
//! forgets it once delivered.

use std::time::Duration;

use end_to_end_tests::{Db, TestServer, header, http, on_every_database, send_json, wait_until};
use petstore_portfolio_client::portfolio::types;
use petstore_portfolio_server::config::Scope;
use serde_json::{Value, json};

use crate::support::assert_api_error;

on_every_database!(
    an_approved_request_emails_a_key_that_works,
    a_rejected_request_is_told_and_stays_decided,
    bad_requests_are_422_and_store_nothing,
    every_request_gets_the_same_kind_of_answer,
    a_crowd_of_requests_sends_the_owner_a_digest_and_each_address_waits_its_turn,
);

const WAIT: Duration = Duration::from_secs(20);

fn form(contact: &str) -> Value {
    json!({
        "name": "Ada Lovelace",
        "organisation": "Analytical Engines Ltd",
        "intended_use": "Show the latest posts on our intranet",
        "expected_volume": "about 500 requests a day",
        "technical_contact": contact,
    })
}

async fn ask(server: &TestServer, contact: &str) -> types::KeyRequestAccepted {
    let form: types::KeyRequestForm = serde_json::from_value(form(contact)).unwrap();
    let accepted = server
        .portfolio()
        .request_api_key()
        .body(form)
        .send()
        .await
        .expect("the request is recorded");
    assert_eq!(accepted.status().as_u16(), 202);
    accepted.into_inner()
}

async fn an_approved_request_emails_a_key_that_works(db: Db) {
    let Some((server, smtp)) = TestServer::start_with_smtp(db, |_| {}).await else {
        return;
    };
    let asked = ask(&server, "ada@example.test").await;
    assert_eq!(asked.status, types::KeyRequestStatus::Pending);
    // The owner hears of it.
    let notices = smtp.wait_for(1, WAIT).await;
    assert!(notices[0].body.contains(&asked.id), "{}", notices[0].body);

    let operator = server
        .portfolio_with_scopes(&[Scope::KeysManage, Scope::ContextRead])
        .await;
    let pending = operator
        .list_key_requests()
        .status(types::KeyRequestStatus::Pending)
        .send()
        .await
        .unwrap();
    assert_eq!(pending.total, 1);
    assert_eq!(pending.items[0].organisation, "Analytical Engines Ltd");

    let approval: types::Approval =
        serde_json::from_value(json!({"scopes": ["context:read"], "expires_in_days": 90})).unwrap();
    let approved = operator
        .approve_key_request()
        .id(&asked.id)
        .body(approval)
        .send()
        .await
        .unwrap()
        .into_inner();
    assert_eq!(approved.request.status, types::KeyRequestStatus::Approved);
    assert_eq!(approved.api_key.scopes, ["context:read"]);
    assert_eq!(
        approved.request.key_id.as_deref(),
        Some(approved.api_key.id.as_str())
    );
    let (status, _, _) = send_json(
        http()
            .get(server.at("/api/llm-context"))
            .header("x-api-key", &approved.key),
    )
    .await;
    assert_eq!(status, 200, "the key works at once");

    // The technical contact gets the key; once it is sent, the outbox
    // keeps no copy.
    let messages = smtp.wait_for(2, WAIT).await;
    let email = messages
        .iter()
        .find(|m| m.rcpt_tos.contains(&"ada@example.test".to_owned()))
        .expect("an email to the technical contact");
    assert!(email.body.contains(&approved.key), "{}", email.body);
    wait_until(WAIT, "the outbox forgets the key", async || {
        server
            .count_where(
                "outbox",
                "status = 'sent' AND body LIKE '%removed once delivered%'",
            )
            .await
            == 1
    })
    .await;
    // `pk_<id>_<secret>`: the secret may hold `_` itself.
    let secret = approved.key.splitn(3, '_').nth(2).unwrap();
    assert_eq!(
        server
            .count_where("outbox", &format!("body LIKE '%{secret}%'"))
            .await,
        0
    );
    // Deciding twice is a conflict.
    let again = operator
        .approve_key_request()
        .id(&asked.id)
        .body(
            serde_json::from_value::<types::Approval>(json!({"scopes": ["context:read"]})).unwrap(),
        )
        .send()
        .await;
    assert_api_error(again, 409, "CONFLICT");
    server.stop().await;
}

async fn a_rejected_request_is_told_and_stays_decided(db: Db) {
    let Some((server, smtp)) = TestServer::start_with_smtp(db, |_| {}).await else {
        return;
    };
    let asked = ask(&server, "bob@example.test").await;
    let operator = server.portfolio_with_scopes(&[Scope::KeysManage]).await;
    let rejected = operator
        .reject_key_request()
        .id(&asked.id)
        .send()
        .await
        .unwrap();
    assert_eq!(rejected.status, types::KeyRequestStatus::Rejected);
    assert!(rejected.decided_at.is_some());
    let messages = smtp.wait_for(2, WAIT).await;
    assert!(
        messages
            .iter()
            .any(|m| m.rcpt_tos.contains(&"bob@example.test".to_owned())
                && m.body.contains("declined")),
        "{messages:?}"
    );
    let approve = operator
        .approve_key_request()
        .id(&asked.id)
        .body(
            serde_json::from_value::<types::Approval>(json!({"scopes": ["keys:manage"]})).unwrap(),
        )
        .send()
        .await;
    assert_api_error(approve, 409, "CONFLICT");
    assert_eq!(server.count("api_keys").await, 0);
    let unknown = operator.reject_key_request().id("kr_nope").send().await;
    assert_api_error(unknown, 404, "NOT_FOUND");
    server.stop().await;
}

async fn bad_requests_are_422_and_store_nothing(db: Db) {
    let server = TestServer::start(db).await;
    let (status, _, body) = send_json(server.post_json(
        "/api/key-requests",
        json!({"name": "", "organisation": "o".repeat(201), "technical_contact": "not-an-address"}),
    ))
    .await;
    assert_eq!(status, 422, "{body}");
    let fields = &body["error"]["details"]["fields"];
    assert_eq!(fields["name"], "required");
    assert_eq!(fields["organisation"], "at most 200 characters");
    assert_eq!(fields["intended_use"], "required");
    assert_eq!(fields["expected_volume"], "required");
    assert_eq!(fields["technical_contact"], "not an email address");
    let (status, _, _) = send_json(server.post_json("/api/key-requests", "{not json")).await;
    assert_eq!(status, 400);
    assert_eq!(server.count("key_requests").await, 0);
    server.stop().await;
}

/// The same answer whether the contact asked before or not: nothing to
/// learn about who asks.
async fn every_request_gets_the_same_kind_of_answer(db: Db) {
    let server = TestServer::start(db).await;
    let first = ask(&server, "carol@example.test").await;
    let again = ask(&server, "carol@example.test").await;
    let other = ask(&server, "dave@example.test").await;
    assert_ne!(first.id, again.id);
    for accepted in [&first, &again, &other] {
        assert_eq!(accepted.status, types::KeyRequestStatus::Pending);
        assert!(
            accepted.id.starts_with("kr_") && accepted.id.len() == 19,
            "{}",
            accepted.id
        );
    }
    server.stop().await;
}

/// One address may ask so many times an hour; then 429 with Retry-After.
#[tokio::test]
async fn requests_from_one_address_are_limited() {
    let server = TestServer::start_with(Db::Sqlite, |c| {
        c.portfolio.key_requests.per_address_per_hour = 2;
    })
    .await;
    ask(&server, "eve@example.test").await;
    ask(&server, "eve@example.test").await;
    let response = server
        .post_json("/api/key-requests", form("eve@example.test"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 429);
    let retry_after: u64 = header(response.headers(), "retry-after")
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=3601).contains(&retry_after), "{retry_after}");
    assert_eq!(server.count("key_requests").await, 2);
    server.stop().await;
}

/// Past so many waiting requests, new ones wait for the operator: 503.
#[tokio::test]
async fn too_many_pending_requests_is_503() {
    let server = TestServer::start_with(Db::Sqlite, |c| {
        c.portfolio.key_requests.max_pending = 1;
    })
    .await;
    ask(&server, "frank@example.test").await;
    let (status, _, body) =
        send_json(server.post_json("/api/key-requests", form("frank@example.test"))).await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["error"]["code"], "SERVICE_UNAVAILABLE");
    server.stop().await;
}

/// 1,000 requests from 200 addresses once sent the owner 1,000 emails, then
/// refused everyone with 503. Now the owner gets the first request's email
/// at once and one digest when the quiet period ends, and each address may
/// have only so many requests waiting (429 past them), so a crowd cannot
/// fill the global cap.
async fn a_crowd_of_requests_sends_the_owner_a_digest_and_each_address_waits_its_turn(db: Db) {
    let server = TestServer::start_with(db, |c| {
        c.portfolio.key_requests.per_address_per_hour = 100;
        c.portfolio.key_requests.max_pending_per_address = 2;
        c.portfolio.key_requests.max_pending = 50;
    })
    .await;
    let mut statuses = std::collections::BTreeMap::<u16, usize>::new();
    for address in 1..=20_u8 {
        for _ in 0..3 {
            let status = end_to_end_tests::http_from([127, 0, 2, address].into())
                .post(server.at("/api/key-requests"))
                .json(&form("crowd@example.test"))
                .send()
                .await
                .unwrap()
                .status()
                .as_u16();
            *statuses.entry(status).or_default() += 1;
        }
    }
    assert_eq!(
        statuses.get(&202),
        Some(&40),
        "two from each address: {statuses:?}"
    );
    assert_eq!(
        statuses.get(&429),
        Some(&20),
        "the third from each: {statuses:?}"
    );
    assert_eq!(server.count("key_requests").await, 40);
    assert_eq!(
        server
            .count_where("outbox", "subject LIKE 'API key request from %'")
            .await,
        1,
        "one email at once"
    );
    let later = chrono::Utc::now().timestamp_millis() + 9 * 60_000;
    assert_eq!(
        server
            .count_where(
                "outbox",
                &format!(
                    "subject = 'More API key requests are waiting' AND next_attempt_at_ms > {later}"
                )
            )
            .await,
        1,
        "one digest, when the quiet period ends"
    );
    assert_eq!(server.count("outbox").await, 2);
    server.stop().await;
}
