//! The contact form, the newsletter and subscriber notification, with email
//! over real SMTP (aiosmtpd) through the outbox.

use std::time::Duration;

use end_to_end_tests::smtp::{self, SmtpServer, free_port, smtp_config};
use end_to_end_tests::{Db, TestServer, keys, on_every_database};
use petstore_portfolio_client::portfolio::types;
use serde_json::json;

use crate::support::{api_error, assert_envelope, send_json};

on_every_database!(
    contact_is_stored_and_the_owner_notified,
    bad_contact_input_is_refused_and_changes_nothing,
    subscribing_welcomes_and_the_links_work,
    subscribing_answers_alike_and_does_not_flood,
    double_opt_in_confirms_by_link,
    bad_tokens_are_refused,
    notify_subscribers_once_per_post,
    smtp_down_then_up_loses_nothing_sends_nothing_twice,
    a_restart_loses_nothing_and_sends_nothing_twice,
    a_rejected_recipient_fails_visibly_and_others_go_on,
    without_smtp_emails_are_eml_files,
);

const WAIT: Duration = Duration::from_secs(20);

async fn with_smtp(db: Db, smtp: &SmtpServer) -> TestServer {
    let config = smtp.config();
    TestServer::start_with(db, move |c| c.mail.smtp = Some(config)).await
}

fn contact(name: &str, email: &str) -> types::ContactRequest {
    types::ContactRequest {
        name: name.parse().unwrap_or_else(|e| panic!("{e}")),
        email: email.parse().unwrap_or_else(|e| panic!("{e}")),
        subject: Some("Hello".parse().unwrap_or_else(|e| panic!("{e}"))),
        message: Some("Nice site.".parse().unwrap_or_else(|e| panic!("{e}"))),
    }
}

async fn subscribe(server: &TestServer, email: &str) -> types::SubscribeAccepted {
    let request = types::SubscribeRequest {
        email: email.parse().unwrap_or_else(|e| panic!("{e}")),
    };
    let accepted = server
        .portfolio()
        .subscribe_newsletter()
        .body(request)
        .send()
        .await;
    accepted
        .unwrap_or_else(|e| panic!("subscribeNewsletter: {e}"))
        .into_inner()
}

async fn contact_is_stored_and_the_owner_notified(db: Db) {
    if !smtp::available("contact_is_stored_and_the_owner_notified") {
        return;
    }
    let smtp = SmtpServer::start();
    let server = with_smtp(db, &smtp).await;
    let client = server.portfolio_with_key(Some(keys::ADMIN));
    let receipt = client
        .submit_contact()
        .body(contact("Grace", "grace@example.test"))
        .send()
        .await;
    let receipt = receipt.unwrap_or_else(|e| panic!("submitContact: {e}"));
    assert_eq!(receipt.status().as_u16(), 201);
    assert!(receipt.id > 0);
    assert_eq!(server.count("contact_submissions").await, 1);

    let messages = smtp.wait_for(1, WAIT).await;
    let owner = &messages[0];
    assert_eq!(owner.rcpt_tos, ["owner@localhost"]);
    assert_eq!(owner.header("Subject"), Some("Contact form: Hello"));
    assert!(
        owner.body.contains("Grace <grace@example.test>") && owner.body.contains("Nice site."),
        "{owner:?}"
    );
    assert!(
        owner.header("List-Unsubscribe").is_none(),
        "not a newsletter email"
    );
    server.stop().await;
}

async fn bad_contact_input_is_refused_and_changes_nothing(db: Db) {
    let server = TestServer::start(db).await;
    let http = reqwest::Client::new();
    let post = |key: Option<&str>, body: String| {
        let mut request = http
            .post(server.at("/api/contact"))
            .header("content-type", "application/json")
            .body(body);
        if let Some(key) = key {
            request = request.header("x-api-key", key);
        }
        request
    };
    let ok = json!({"name": "Grace", "email": "grace@example.test"}).to_string();
    let cases = [
        (post(None, ok.clone()), 401, "UNAUTHORIZED"),
        (post(Some("not-a-key"), ok.clone()), 401, "UNAUTHORIZED"),
        (
            post(Some(keys::CONTEXT_READER), ok.clone()),
            403,
            "FORBIDDEN",
        ),
        (
            post(Some(keys::ADMIN), "{\"name\": ".to_owned()),
            400,
            "BAD_REQUEST",
        ),
        (
            post(
                Some(keys::ADMIN),
                json!({"email": "grace@example.test"}).to_string(),
            ),
            422,
            "VALIDATION_FAILED",
        ),
        (
            post(Some(keys::ADMIN), json!({"name": "Grace"}).to_string()),
            422,
            "VALIDATION_FAILED",
        ),
        (
            post(
                Some(keys::ADMIN),
                json!({"name": "Grace", "email": "not an address"}).to_string(),
            ),
            422,
            "VALIDATION_FAILED",
        ),
        (
            post(
                Some(keys::ADMIN),
                json!({"name": "G".repeat(101), "email": "g@example.test"}).to_string(),
            ),
            422,
            "VALIDATION_FAILED",
        ),
        (
            post(
                Some(keys::ADMIN),
                json!({"name": "G", "email": "g@example.test", "message": "m".repeat(5001)})
                    .to_string(),
            ),
            422,
            "VALIDATION_FAILED",
        ),
        (
            post(
                Some(keys::ADMIN),
                json!({"name": null, "email": "g@example.test"}).to_string(),
            ),
            400,
            "BAD_REQUEST",
        ),
        (
            http.post(server.at("/api/contact"))
                .header("x-api-key", keys::ADMIN)
                .header("content-type", "text/plain")
                .body("hi"),
            415,
            "UNSUPPORTED_MEDIA_TYPE",
        ),
    ];
    for (request, status, code) in cases {
        let (got, _, body) = send_json(request).await;
        assert_eq!(got, status, "{code}: {body}");
        assert_envelope(&body, code);
        if code == "UNAUTHORIZED" {
            assert_eq!(body["error"]["details"]["required_header"], "X-API-Key");
        }
        if code == "FORBIDDEN" {
            assert_eq!(body["error"]["details"]["required_scope"], "contact:write");
        }
    }
    let (_, _, body) =
        send_json(post(Some(keys::ADMIN), json!({"email": "bad"}).to_string())).await;
    assert_eq!(
        body["error"]["details"]["fields"],
        json!({"name": "required", "email": "not an email address"})
    );
    assert_eq!(server.count("contact_submissions").await, 0);
    assert_eq!(server.count("outbox").await, 0);
    server.stop().await;
}

async fn subscribing_welcomes_and_the_links_work(db: Db) {
    if !smtp::available("subscribing_welcomes_and_the_links_work") {
        return;
    }
    let smtp = SmtpServer::start();
    let server = with_smtp(db, &smtp).await;
    let accepted = subscribe(&server, "Reader@Example.test").await;
    assert_eq!(accepted.status, types::SubscribeAcceptedStatus::Accepted);

    let welcome = smtp.wait_for(1, WAIT).await.remove(0);
    assert_eq!(welcome.rcpt_tos, ["reader@example.test"]);
    assert_eq!(welcome.header("Subject"), Some("Welcome to the newsletter"));
    let link = welcome
        .link(&format!("{}/api/newsletter/unsubscribe?token=", server.url))
        .unwrap_or_default();
    assert!(
        !link.is_empty(),
        "the body has the unsubscribe link: {welcome:?}"
    );
    assert_eq!(
        welcome.header("List-Unsubscribe"),
        Some(format!("<{link}>").as_str())
    );
    assert_eq!(
        welcome.header("List-Unsubscribe-Post"),
        Some("List-Unsubscribe=One-Click")
    );

    // One click (RFC 8058): a POST to the header's URL.
    let (status, _, body) = send_json(
        reqwest::Client::new()
            .post(&link)
            .header("content-type", "application/x-www-form-urlencoded")
            .body("List-Unsubscribe=One-Click"),
    )
    .await;
    assert_eq!(
        (status, body["status"].as_str()),
        (200, Some("unsubscribed"))
    );
    // The link in the body works as well, and again.
    let (status, _, body) = send_json(reqwest::Client::new().get(&link)).await;
    assert_eq!(
        (status, body["status"].as_str()),
        (200, Some("unsubscribed"))
    );
    server.stop().await;
}

async fn subscribing_answers_alike_and_does_not_flood(db: Db) {
    if !smtp::available("subscribing_answers_alike_and_does_not_flood") {
        return;
    }
    let smtp = SmtpServer::start();
    let server = with_smtp(db, &smtp).await;
    let first = subscribe(&server, "flood@example.test").await;
    for _ in 0..5 {
        let again = subscribe(&server, "flood@example.test").await;
        assert_eq!(
            again.message, first.message,
            "known addresses get the same answer"
        );
    }
    smtp.wait_for(1, WAIT).await;
    // Everything queued is delivered by now or waits in the outbox: one email.
    assert_eq!(
        server.count("outbox").await,
        1,
        "a flood at one address sends one email"
    );
    assert_eq!(server.count("subscribers").await, 1);

    // A bad address is refused, and the refusal reveals nothing else.
    let (status, _, body) = send_json(
        reqwest::Client::new()
            .post(server.at("/api/newsletter"))
            .header("content-type", "application/json")
            .body(json!({"email": "nope"}).to_string()),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    assert_envelope(&body, "VALIDATION_FAILED");
    server.stop().await;
}

async fn double_opt_in_confirms_by_link(db: Db) {
    if !smtp::available("double_opt_in_confirms_by_link") {
        return;
    }
    let smtp = SmtpServer::start();
    let config = smtp.config();
    let server = TestServer::start_with(db, move |c| {
        c.mail.smtp = Some(config);
        c.portfolio.newsletter.double_opt_in = true;
    })
    .await;
    subscribe(&server, "careful@example.test").await;
    let confirmation = smtp.wait_for(1, WAIT).await.remove(0);
    assert_eq!(
        confirmation.header("Subject"),
        Some("Please confirm your subscription")
    );
    let link = confirmation.link(&format!("{}/api/newsletter/confirm?token=", server.url));
    let link = link.unwrap_or_else(|| panic!("no confirmation link: {confirmation:?}"));

    // Not subscribed yet: a notification reaches nobody.
    let notifier = server.portfolio_with_key(Some(keys::ADMIN));
    let request = types::NotifyRequest {
        post_slug: "why-contract-first"
            .parse()
            .unwrap_or_else(|e| panic!("{e}")),
    };
    let result = notifier
        .notify_subscribers()
        .body(request)
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(result.queued, 0);

    let (status, _, body) = send_json(reqwest::Client::new().get(&link)).await;
    assert_eq!(
        (status, body["status"].as_str()),
        (200, Some("subscribed")),
        "{body}"
    );
    let messages = smtp.wait_for(2, WAIT).await;
    assert_eq!(
        messages[1].header("Subject"),
        Some("Welcome to the newsletter")
    );
    assert!(messages[1].header("List-Unsubscribe").is_some());

    // The link works once.
    let (status, _, body) = send_json(reqwest::Client::new().get(&link)).await;
    assert_eq!(status, 404, "{body}");
    server.stop().await;
}

async fn bad_tokens_are_refused(db: Db) {
    if !smtp::available("bad_tokens_are_refused") {
        return;
    }
    let smtp = SmtpServer::start();
    let config = smtp.config();
    let server = TestServer::start_with(db, move |c| {
        c.mail.smtp = Some(config);
        c.portfolio.newsletter.double_opt_in = true;
        c.portfolio.newsletter.confirmation_ttl_hours = 0;
    })
    .await;
    subscribe(&server, "late@example.test").await;
    let confirmation = smtp.wait_for(1, WAIT).await.remove(0);
    let link = confirmation
        .link(&format!("{}/api/newsletter/confirm?token=", server.url))
        .unwrap_or_default();
    let http = reqwest::Client::new();

    let (status, _, body) = send_json(http.get(&link)).await;
    assert_eq!(status, 400, "an expired link: {body}");
    assert_envelope(&body, "BAD_REQUEST");

    let tampered = format!("{}x", link);
    for (request, status, code) in [
        (http.get(&tampered), 404, "NOT_FOUND"),
        (
            http.get(server.at("/api/newsletter/confirm?token=unknown")),
            404,
            "NOT_FOUND",
        ),
        (
            http.get(server.at("/api/newsletter/unsubscribe?token=unknown")),
            404,
            "NOT_FOUND",
        ),
        (
            http.post(server.at("/api/newsletter/unsubscribe?token=unknown")),
            404,
            "NOT_FOUND",
        ),
        (
            http.get(server.at("/api/newsletter/unsubscribe")),
            400,
            "BAD_REQUEST",
        ),
        (
            http.get(server.at(&format!(
                "/api/newsletter/unsubscribe?token={}",
                "t".repeat(101)
            ))),
            400,
            "BAD_REQUEST",
        ),
    ] {
        let (got, _, body) = send_json(request).await;
        assert_eq!(got, status, "{body}");
        assert_envelope(&body, code);
    }
    server.stop().await;
}

async fn notify_subscribers_once_per_post(db: Db) {
    if !smtp::available("notify_subscribers_once_per_post") {
        return;
    }
    let smtp = SmtpServer::start();
    let server = with_smtp(db, &smtp).await;
    for address in ["a@example.test", "b@example.test", "gone@example.test"] {
        subscribe(&server, address).await;
    }
    let welcomes = smtp.wait_for(3, WAIT).await;
    let gone = welcomes
        .iter()
        .find(|m| m.rcpt_tos == ["gone@example.test"])
        .unwrap_or_else(|| panic!("{welcomes:?}"));
    let link = gone
        .link(&format!("{}/api/newsletter/unsubscribe?token=", server.url))
        .unwrap_or_default();
    let (status, _, _) = send_json(reqwest::Client::new().get(&link)).await;
    assert_eq!(status, 200);

    let request = || types::NotifyRequest {
        post_slug: "outbox-pattern".parse().unwrap_or_else(|e| panic!("{e}")),
    };
    let (status, error) = api_error(
        server
            .portfolio()
            .notify_subscribers()
            .body(request())
            .send()
            .await,
    );
    assert_eq!((status, error.code.as_str()), (401, "UNAUTHORIZED"));
    let (status, error) = api_error(
        server
            .portfolio_with_key(Some(keys::CONTEXT_READER))
            .notify_subscribers()
            .body(request())
            .send()
            .await,
    );
    assert_eq!((status, error.code.as_str()), (403, "FORBIDDEN"));
    assert_eq!(
        error.details.get("required_scope"),
        Some(&json!("subscribers:notify"))
    );

    let client = server.portfolio_with_key(Some(keys::ADMIN));
    let first = client
        .notify_subscribers()
        .body(request())
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((first.queued, first.already_notified), (2, false));
    let messages = smtp.wait_for(5, WAIT).await;
    let news: Vec<_> = messages
        .iter()
        .filter(|m| m.header("Subject") == Some("New post: Emails that are never lost"))
        .collect();
    let mut to: Vec<&str> = news.iter().map(|m| m.rcpt_tos[0].as_str()).collect();
    to.sort_unstable();
    assert_eq!(to, ["a@example.test", "b@example.test"]);
    assert!(
        news.iter()
            .all(|m| m.header("List-Unsubscribe-Post") == Some("List-Unsubscribe=One-Click"))
    );
    assert!(
        news[0]
            .body
            .contains(&format!("{}/api/posts/outbox-pattern", server.url))
    );

    let again = client
        .notify_subscribers()
        .body(request())
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((again.queued, again.already_notified), (2, true));
    assert_eq!(server.count("outbox").await, 5, "nothing queued twice");

    let missing = types::NotifyRequest {
        post_slug: "no-such-post".parse().unwrap_or_else(|e| panic!("{e}")),
    };
    let (status, error) = api_error(client.notify_subscribers().body(missing).send().await);
    assert_eq!((status, error.code.as_str()), (404, "NOT_FOUND"));
    server.stop().await;
}

async fn sent_and_pending(server: &TestServer) -> (i64, i64) {
    (
        server.count_where("outbox", "status = 'sent'").await,
        server.count_where("outbox", "status = 'pending'").await,
    )
}

async fn smtp_down_then_up_loses_nothing_sends_nothing_twice(db: Db) {
    if !smtp::available("smtp_down_then_up_loses_nothing_sends_nothing_twice") {
        return;
    }
    let port = free_port();
    let server = TestServer::start_with(db, move |c| c.mail.smtp = Some(smtp_config(port))).await;
    let client = server.portfolio_with_key(Some(keys::ADMIN));
    for name in ["One", "Two"] {
        client
            .submit_contact()
            .body(contact(name, "x@example.test"))
            .send()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    }
    // Nobody listens: the emails wait, retried, and readiness says so.
    let deadline = std::time::Instant::now() + WAIT;
    while server.count_where("outbox", "attempts >= 2").await < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "the worker did not retry"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (status, _, body) =
        send_json(reqwest::Client::new().get(server.at("/api/health/ready"))).await;
    assert_eq!(status, 503, "{body}");
    assert_envelope(&body, "SERVICE_UNAVAILABLE");
    assert_eq!(body["error"]["details"]["checks"]["mail"]["ok"], false);
    assert_eq!(body["error"]["details"]["checks"]["outbox"]["pending"], 2);

    let smtp = SmtpServer::start_on(port);
    let messages = smtp.wait_for(2, WAIT).await;
    let deadline = std::time::Instant::now() + WAIT;
    while sent_and_pending(&server).await != (2, 0) {
        assert!(
            std::time::Instant::now() < deadline,
            "the outbox did not drain"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(smtp.messages().len(), 2, "each email once: {messages:#?}");
    let ids: std::collections::BTreeSet<_> = messages
        .iter()
        .filter_map(|m| m.header("Message-ID"))
        .collect();
    assert_eq!(ids.len(), 2);
    let ready = server
        .portfolio()
        .get_readiness()
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(ready.checks.mail.ok && ready.checks.outbox.ok);
    server.stop().await;
}

async fn a_restart_loses_nothing_and_sends_nothing_twice(db: Db) {
    if !smtp::available("a_restart_loses_nothing_and_sends_nothing_twice") {
        return;
    }
    let port = free_port();
    let server = TestServer::start_with(db, move |c| c.mail.smtp = Some(smtp_config(port))).await;
    for address in ["r1@example.test", "r2@example.test", "r3@example.test"] {
        subscribe(&server, address).await;
    }
    assert_eq!(server.count_where("outbox", "status = 'pending'").await, 3);
    let smtp = SmtpServer::start_on(port);
    let server = server.restart(|_| {}).await;
    let messages = smtp.wait_for(3, WAIT).await;
    let deadline = std::time::Instant::now() + WAIT;
    while server.count_where("outbox", "status = 'sent'").await < 3 {
        assert!(
            std::time::Instant::now() < deadline,
            "the outbox did not drain"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mut to: Vec<&str> = messages.iter().map(|m| m.rcpt_tos[0].as_str()).collect();
    to.sort_unstable();
    assert_eq!(
        to,
        ["r1@example.test", "r2@example.test", "r3@example.test"]
    );
    assert_eq!(smtp.messages().len(), 3, "nothing twice");
    server.stop().await;
}

async fn a_rejected_recipient_fails_visibly_and_others_go_on(db: Db) {
    if !smtp::available("a_rejected_recipient_fails_visibly_and_others_go_on") {
        return;
    }
    let smtp = SmtpServer::start();
    let server = with_smtp(db, &smtp).await;
    subscribe(&server, "reject-me@example.test").await;
    subscribe(&server, "fine@example.test").await;
    let messages = smtp.wait_for(1, WAIT).await;
    assert_eq!(messages[0].rcpt_tos, ["fine@example.test"]);
    let deadline = std::time::Instant::now() + WAIT;
    while server
        .count_where("outbox", "status = 'failed' AND last_error LIKE '%550%'")
        .await
        < 1
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the rejection was not recorded"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let ready = server
        .portfolio()
        .get_readiness()
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ready.checks.outbox.failed, 1, "the failure is visible");
    server.stop().await;
}

async fn without_smtp_emails_are_eml_files(db: Db) {
    let server = TestServer::start(db).await;
    subscribe(&server, "files@example.test").await;
    let folder = server.data_dir().join("outbox");
    let deadline = std::time::Instant::now() + WAIT;
    let eml = loop {
        let found = std::fs::read_dir(&folder).ok().and_then(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .find(|p| p.extension().is_some_and(|x| x == "eml"))
        });
        if let Some(path) = found {
            break std::fs::read_to_string(path).unwrap_or_default();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no .eml file in {}",
            folder.display()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(eml.contains("To: files@example.test"), "{eml}");
    assert!(
        eml.contains("List-Unsubscribe-Post: List-Unsubscribe=One-Click"),
        "{eml}"
    );
    let ready = server
        .portfolio()
        .get_readiness()
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ready.status, types::ReadinessStatus::Ready);
    server.stop().await;
}
