//! The contact form, the newsletter and subscriber notification, with email
//! over real SMTP (aiosmtpd) through the outbox.

use std::time::Duration;

use end_to_end_tests::smtp::{ReceivedMessage, SmtpServer};
use end_to_end_tests::{
    Db, TestServer, eventually, http, keys, on_every_database, send_json, wait_until,
};
use petstore_portfolio_client::portfolio::{Client, ResponseValue, types};
use serde_json::json;

use crate::support::{assert_api_error, assert_refused, parse};

on_every_database!(
    calls_at_once_notify_a_crowd_once_a_chunk_at_a_time,
    a_notification_cut_short_goes_on_where_it_stopped,
    a_contact_is_stored,
    a_contact_is_emailed_to_the_owner,
    contacting_without_a_valid_key_is_401_and_stores_nothing,
    contacting_without_the_scope_is_403_and_stores_nothing,
    malformed_contacts_are_400_and_store_nothing,
    invalid_contact_fields_are_422_and_store_nothing,
    a_contact_that_is_not_json_is_415_and_stores_nothing,
    subscribing_sends_a_welcome_with_an_unsubscribe_link,
    the_unsubscribe_link_works_by_one_click_and_again_by_a_get_that_asks_for_json,
    subscribing_a_known_address_answers_alike,
    a_flood_of_subscriptions_sends_one_email,
    plus_addressing_does_not_get_around_the_flood_guard,
    an_address_the_mail_builder_cannot_send_to_is_422,
    subscribing_a_bad_address_is_422,
    subscribing_with_malformed_json_is_400,
    subscribing_with_a_body_that_is_not_json_is_415,
    double_opt_in_sends_a_confirmation_link,
    an_unconfirmed_subscriber_is_not_notified,
    confirming_subscribes_and_welcomes,
    a_confirmation_link_works_once,
    an_expired_confirmation_link_is_400,
    a_tampered_confirmation_link_is_404,
    unknown_tokens_are_404,
    missing_or_overlong_tokens_are_400,
    notifying_without_a_key_is_401,
    notifying_without_the_scope_is_403,
    a_new_post_is_emailed_to_each_current_subscriber,
    notifying_again_of_a_post_queues_nothing,
    notifying_of_an_unknown_post_is_404,
    smtp_down_then_up_loses_nothing_sends_nothing_twice,
    an_outage_longer_than_many_retries_loses_nothing,
    a_restart_loses_nothing_and_sends_nothing_twice,
    a_rejected_recipient_fails_visibly_and_others_go_on,
    without_smtp_emails_are_eml_files,
);

const WAIT: Duration = Duration::from_secs(20);

fn contact(name: &str, email: &str) -> types::ContactRequest {
    types::ContactRequest {
        name: parse(name),
        email: parse(email),
        subject: Some(parse("Hello")),
        message: Some(parse("Nice site.")),
    }
}

/// Sends the contact form as `name` <grace@example.test>, as the admin.
async fn submit_contact(server: &TestServer, name: &str) -> ResponseValue<types::ContactReceipt> {
    server
        .portfolio_with_key(Some(keys::ADMIN))
        .submit_contact()
        .body(contact(name, "grace@example.test"))
        .send()
        .await
        .expect("submitContact")
}

/// Subscribes `email` through the SDK.
pub(crate) async fn subscribe(server: &TestServer, email: &str) -> types::SubscribeAccepted {
    let request = types::SubscribeRequest {
        email: parse(email),
    };
    server
        .portfolio()
        .subscribe_newsletter()
        .body(request)
        .send()
        .await
        .expect("subscribeNewsletter")
        .into_inner()
}

/// The link in `message` to the newsletter's `action` (`unsubscribe`,
/// `confirm`) on `server`.
fn newsletter_link(server: &TestServer, message: &ReceivedMessage, action: &str) -> String {
    let prefix = format!("{}/api/newsletter/{action}?token=", server.url);
    message
        .link(&prefix)
        .unwrap_or_else(|| panic!("no {action} link: {message:?}"))
}

/// A raw `POST /api/contact` of `body`, with `key` if any.
fn post_contact(
    server: &TestServer,
    key: Option<&str>,
    body: impl std::fmt::Display,
) -> reqwest::RequestBuilder {
    let request = server.post_json("/api/contact", body);
    match key {
        Some(key) => request.header("x-api-key", key),
        None => request,
    }
}

/// Nothing of a refused contact is kept, and no email goes out.
async fn assert_nothing_stored(server: &TestServer) {
    assert_eq!(server.count("contact_submissions").await, 0);
    assert_eq!(server.count("outbox").await, 0);
}

async fn a_contact_is_stored(db: Db) {
    let server = TestServer::start(db).await;
    let receipt = submit_contact(&server, "Grace").await;
    assert_eq!(receipt.status().as_u16(), 201);
    assert!(receipt.id > 0);
    assert_eq!(server.count("contact_submissions").await, 1);
    server.stop().await;
}

async fn a_contact_is_emailed_to_the_owner(db: Db) {
    let Some((server, smtp)) = TestServer::start_with_smtp(db, |_| {}).await else {
        return;
    };
    submit_contact(&server, "Grace").await;
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

async fn contacting_without_a_valid_key_is_401_and_stores_nothing(db: Db) {
    let server = TestServer::start(db).await;
    let ok = json!({"name": "Grace", "email": "grace@example.test"});
    for key in [None, Some("not-a-key")] {
        let body = assert_refused(post_contact(&server, key, &ok), 401, "UNAUTHORIZED").await;
        assert_eq!(body["error"]["details"]["required_header"], "X-API-Key");
    }
    assert_nothing_stored(&server).await;
    server.stop().await;
}

async fn contacting_without_the_scope_is_403_and_stores_nothing(db: Db) {
    let server = TestServer::start(db).await;
    let ok = json!({"name": "Grace", "email": "grace@example.test"});
    let request = post_contact(&server, Some(keys::CONTEXT_READER), ok);
    let body = assert_refused(request, 403, "FORBIDDEN").await;
    assert_eq!(body["error"]["details"]["required_scope"], "contact:write");
    assert_nothing_stored(&server).await;
    server.stop().await;
}

async fn malformed_contacts_are_400_and_store_nothing(db: Db) {
    let server = TestServer::start(db).await;
    let null_name = json!({"name": null, "email": "g@example.test"}).to_string();
    for body in ["{\"name\": ".to_owned(), null_name] {
        let request = post_contact(&server, Some(keys::ADMIN), body);
        assert_refused(request, 400, "BAD_REQUEST").await;
    }
    assert_nothing_stored(&server).await;
    server.stop().await;
}

async fn invalid_contact_fields_are_422_and_store_nothing(db: Db) {
    let server = TestServer::start(db).await;
    let request = post_contact(
        &server,
        Some(keys::ADMIN),
        json!({"email": "not an address"}),
    );
    let body = assert_refused(request, 422, "VALIDATION_FAILED").await;
    insta::allow_duplicates! {
        insta::assert_json_snapshot!(body, @r#"
        {
          "error": {
            "code": "VALIDATION_FAILED",
            "details": {
              "fields": {
                "email": "not an email address",
                "name": "required"
              }
            },
            "message": "the request breaks the rules of its fields"
          }
        }
        "#);
    }
    for body in [
        json!({"email": "grace@example.test"}),
        json!({"name": "Grace"}),
        json!({"name": "Grace", "email": "not an address"}),
        json!({"name": "G".repeat(101), "email": "g@example.test"}),
        json!({"name": "G", "email": "g@example.test", "message": "m".repeat(5001)}),
    ] {
        let request = post_contact(&server, Some(keys::ADMIN), body);
        assert_refused(request, 422, "VALIDATION_FAILED").await;
    }
    assert_nothing_stored(&server).await;
    server.stop().await;
}

async fn a_contact_that_is_not_json_is_415_and_stores_nothing(db: Db) {
    let server = TestServer::start(db).await;
    let request = http()
        .post(server.at("/api/contact"))
        .header("x-api-key", keys::ADMIN)
        .header("content-type", "text/plain")
        .body("hi");
    assert_refused(request, 415, "UNSUPPORTED_MEDIA_TYPE").await;
    assert_nothing_stored(&server).await;
    server.stop().await;
}

/// Subscribes Reader@Example.test; returns the welcome email.
async fn subscribe_and_get_welcomed(server: &TestServer, smtp: &SmtpServer) -> ReceivedMessage {
    let accepted = subscribe(server, "Reader@Example.test").await;
    assert_eq!(accepted.status, types::SubscribeAcceptedStatus::Accepted);
    smtp.wait_for(1, WAIT).await.remove(0)
}

async fn subscribing_sends_a_welcome_with_an_unsubscribe_link(db: Db) {
    let Some((server, smtp)) = TestServer::start_with_smtp(db, |_| {}).await else {
        return;
    };
    let welcome = subscribe_and_get_welcomed(&server, &smtp).await;
    assert_eq!(welcome.rcpt_tos, ["reader@example.test"]);
    assert_eq!(
        welcome.header("Subject"),
        Some("Welcome to the newsletter of Ada Example")
    );
    let link = newsletter_link(&server, &welcome, "unsubscribe");
    assert_eq!(
        welcome.header("List-Unsubscribe"),
        Some(format!("<{link}>").as_str())
    );
    assert_eq!(
        welcome.header("List-Unsubscribe-Post"),
        Some("List-Unsubscribe=One-Click")
    );
    server.stop().await;
}

async fn the_unsubscribe_link_works_by_one_click_and_again_by_a_get_that_asks_for_json(db: Db) {
    let Some((server, smtp)) = TestServer::start_with_smtp(db, |_| {}).await else {
        return;
    };
    let welcome = subscribe_and_get_welcomed(&server, &smtp).await;
    let link = newsletter_link(&server, &welcome, "unsubscribe");
    // One click (RFC 8058): a POST to the header's URL.
    let (status, _, body) = send_json(
        http()
            .post(&link)
            .header("content-type", "application/x-www-form-urlencoded")
            .body("List-Unsubscribe=One-Click"),
    )
    .await;
    assert_eq!(
        (status, body["status"].as_str()),
        (200, Some("unsubscribed"))
    );
    // A GET that asks for JSON (as the SDK does) works as well, and again.
    let (status, _, body) = send_json(http().get(&link).header("accept", "application/json")).await;
    assert_eq!(
        (status, body["status"].as_str()),
        (200, Some("unsubscribed"))
    );
    server.stop().await;
}

async fn subscribing_a_known_address_answers_alike(db: Db) {
    let server = TestServer::start(db).await;
    let first = subscribe(&server, "flood@example.test").await;
    for _ in 0..5 {
        let again = subscribe(&server, "flood@example.test").await;
        assert_eq!(
            again.message, first.message,
            "known addresses get the same answer"
        );
    }
    server.stop().await;
}

async fn a_flood_of_subscriptions_sends_one_email(db: Db) {
    let Some((server, smtp)) = TestServer::start_with_smtp(db, |_| {}).await else {
        return;
    };
    for _ in 0..6 {
        subscribe(&server, "flood@example.test").await;
    }
    smtp.wait_for(1, WAIT).await;
    // Everything queued is delivered by now or waits in the outbox: one email.
    assert_eq!(
        server.count("outbox").await,
        1,
        "a flood at one address sends one email"
    );
    assert_eq!(server.count("subscribers").await, 1);
    server.stop().await;
}

/// `victim+1@`, `victim+2@`... reach one inbox: the resend guard counts
/// them as one mailbox.
async fn plus_addressing_does_not_get_around_the_flood_guard(db: Db) {
    let Some((server, smtp)) = TestServer::start_with_smtp(db, |_| {}).await else {
        return;
    };
    subscribe(&server, "victim@example.test").await;
    for n in 1..=5 {
        subscribe(&server, &format!("Victim+{n}@example.test")).await;
    }
    smtp.wait_for(1, WAIT).await;
    assert_eq!(server.count("outbox").await, 1, "one email to one inbox");
    assert_eq!(server.count("subscribers").await, 6);
    server.stop().await;
}

/// What the newsletter accepts, the mail builder can send: an address
/// literal is refused at the door, and readiness stays `ready`.
async fn an_address_the_mail_builder_cannot_send_to_is_422(db: Db) {
    let server = TestServer::start(db).await;
    for email in ["e@[127.0.0.1]", "e@[IPv6:::1]", "e@-bad.example"] {
        let request = server.post_json("/api/newsletter", json!({"email": email}));
        assert_refused(request, 422, "VALIDATION_FAILED").await;
    }
    assert_eq!(server.count("subscribers").await, 0);
    assert_eq!(server.count("outbox").await, 0);
    let (status, _, ready) =
        end_to_end_tests::send_json(end_to_end_tests::http().get(server.at("/api/health/ready")))
            .await;
    assert_eq!((status, ready["status"].clone()), (200, json!("ready")));
    server.stop().await;
}

/// A bad address is refused, and the refusal reveals nothing else.
async fn subscribing_a_bad_address_is_422(db: Db) {
    let server = TestServer::start(db).await;
    let request = server.post_json("/api/newsletter", json!({"email": "nope"}));
    assert_refused(request, 422, "VALIDATION_FAILED").await;
    server.stop().await;
}

async fn subscribing_with_malformed_json_is_400(db: Db) {
    let server = TestServer::start(db).await;
    let body = assert_refused(server.post_json("/api/newsletter", "{"), 400, "BAD_REQUEST").await;
    insta::allow_duplicates! {
        insta::assert_json_snapshot!(body, @r#"
        {
          "error": {
            "code": "BAD_REQUEST",
            "details": {},
            "message": "invalid JSON body: EOF while parsing an object at line 1 column 1"
          }
        }
        "#);
    }
    server.stop().await;
}

async fn subscribing_with_a_body_that_is_not_json_is_415(db: Db) {
    let server = TestServer::start(db).await;
    let request = http()
        .post(server.at("/api/newsletter"))
        .header("content-type", "text/plain")
        .body("x");
    let body = assert_refused(request, 415, "UNSUPPORTED_MEDIA_TYPE").await;
    insta::allow_duplicates! {
        insta::assert_json_snapshot!(body, @r#"
        {
          "error": {
            "code": "UNSUPPORTED_MEDIA_TYPE",
            "details": {},
            "message": "the request body must be application/json"
          }
        }
        "#);
    }
    server.stop().await;
}

/// With double opt-in (and `adjust`), subscribes careful@example.test;
/// returns the servers and the confirmation email. `None` where the SMTP
/// server cannot run.
async fn subscribe_with_double_opt_in(
    db: Db,
    adjust: impl FnOnce(&mut petstore_portfolio_server::Config),
) -> Option<(TestServer, SmtpServer, ReceivedMessage)> {
    let (server, smtp) = TestServer::start_with_smtp(db, |c| {
        c.portfolio.newsletter.double_opt_in = true;
        adjust(c);
    })
    .await?;
    subscribe(&server, "careful@example.test").await;
    let confirmation = smtp.wait_for(1, WAIT).await.remove(0);
    Some((server, smtp, confirmation))
}

async fn double_opt_in_sends_a_confirmation_link(db: Db) {
    let Some((server, _smtp, confirmation)) = subscribe_with_double_opt_in(db, |_| {}).await else {
        return;
    };
    assert_eq!(
        confirmation.header("Subject"),
        Some("Please confirm your subscription to Ada Example")
    );
    newsletter_link(&server, &confirmation, "confirm");
    server.stop().await;
}

/// Notifies the subscribers of `slug`, as the admin.
async fn notify(client: &Client, slug: &str) -> types::NotifyResult {
    let request = types::NotifyRequest {
        post_slug: parse(slug),
    };
    client
        .notify_subscribers()
        .body(request)
        .send()
        .await
        .expect("notifySubscribers")
        .into_inner()
}

/// Not subscribed yet: a notification reaches nobody.
async fn an_unconfirmed_subscriber_is_not_notified(db: Db) {
    let Some((server, _smtp, _)) = subscribe_with_double_opt_in(db, |_| {}).await else {
        return;
    };
    let admin = server.portfolio_with_key(Some(keys::ADMIN));
    let result = notify(&admin, "why-contract-first").await;
    assert_eq!(result.queued, 0);
    server.stop().await;
}

async fn confirming_subscribes_and_welcomes(db: Db) {
    let Some((server, smtp, confirmation)) = subscribe_with_double_opt_in(db, |_| {}).await else {
        return;
    };
    let link = newsletter_link(&server, &confirmation, "confirm");
    let (status, _, body) = send_json(http().get(&link)).await;
    assert_eq!(
        (status, body["status"].as_str()),
        (200, Some("subscribed")),
        "{body}"
    );
    let messages = smtp.wait_for(2, WAIT).await;
    assert_eq!(
        messages[1].header("Subject"),
        Some("Welcome to the newsletter of Ada Example")
    );
    assert!(messages[1].header("List-Unsubscribe").is_some());
    server.stop().await;
}

async fn a_confirmation_link_works_once(db: Db) {
    let Some((server, _smtp, confirmation)) = subscribe_with_double_opt_in(db, |_| {}).await else {
        return;
    };
    let link = newsletter_link(&server, &confirmation, "confirm");
    let (status, _, body) = send_json(http().get(&link)).await;
    assert_eq!(status, 200, "{body}");
    let (status, _, body) = send_json(http().get(&link)).await;
    assert_eq!(status, 404, "{body}");
    server.stop().await;
}

async fn an_expired_confirmation_link_is_400(db: Db) {
    let expire_at_once = |c: &mut petstore_portfolio_server::Config| {
        c.portfolio.newsletter.confirmation_ttl_hours = 0;
    };
    let Some((server, _smtp, confirmation)) =
        subscribe_with_double_opt_in(db, expire_at_once).await
    else {
        return;
    };
    let link = newsletter_link(&server, &confirmation, "confirm");
    assert_refused(http().get(&link), 400, "BAD_REQUEST").await;
    server.stop().await;
}

async fn a_tampered_confirmation_link_is_404(db: Db) {
    let Some((server, _smtp, confirmation)) = subscribe_with_double_opt_in(db, |_| {}).await else {
        return;
    };
    let tampered = format!("{}x", newsletter_link(&server, &confirmation, "confirm"));
    assert_refused(http().get(&tampered), 404, "NOT_FOUND").await;
    server.stop().await;
}

async fn unknown_tokens_are_404(db: Db) {
    let server = TestServer::start(db).await;
    let unsubscribe = http().get(server.at("/api/newsletter/unsubscribe?token=nope"));
    let body = assert_refused(unsubscribe, 404, "NOT_FOUND").await;
    insta::allow_duplicates! {
        insta::assert_json_snapshot!(body, @r#"
        {
          "error": {
            "code": "NOT_FOUND",
            "details": {},
            "message": "no subscription has this unsubscribe link"
          }
        }
        "#);
    }
    for request in [
        http().get(server.at("/api/newsletter/confirm?token=unknown")),
        http().get(server.at("/api/newsletter/unsubscribe?token=unknown")),
        http().post(server.at("/api/newsletter/unsubscribe?token=unknown")),
    ] {
        assert_refused(request, 404, "NOT_FOUND").await;
    }
    server.stop().await;
}

async fn missing_or_overlong_tokens_are_400(db: Db) {
    let server = TestServer::start(db).await;
    let overlong = format!("/api/newsletter/unsubscribe?token={}", "t".repeat(101));
    for path in ["/api/newsletter/unsubscribe", overlong.as_str()] {
        assert_refused(http().get(server.at(path)), 400, "BAD_REQUEST").await;
    }
    server.stop().await;
}

fn notify_request() -> types::NotifyRequest {
    types::NotifyRequest {
        post_slug: parse("outbox-pattern"),
    }
}

async fn notifying_without_a_key_is_401(db: Db) {
    let server = TestServer::start(db).await;
    let notified = server
        .portfolio()
        .notify_subscribers()
        .body(notify_request())
        .send()
        .await;
    assert_api_error(notified, 401, "UNAUTHORIZED");
    server.stop().await;
}

async fn notifying_without_the_scope_is_403(db: Db) {
    let server = TestServer::start(db).await;
    let notified = server
        .portfolio_with_key(Some(keys::CONTEXT_READER))
        .notify_subscribers()
        .body(notify_request())
        .send()
        .await;
    let error = assert_api_error(notified, 403, "FORBIDDEN");
    assert_eq!(
        error.details.get("required_scope"),
        Some(&json!("subscribers:notify"))
    );
    server.stop().await;
}

/// Subscribes a@, b@ and gone@example.test, and unsubscribes gone@ by the
/// link in its welcome; then notifies the subscribers of `outbox-pattern`.
/// Returns the answer.
async fn notify_two_of_three_subscribers(
    server: &TestServer,
    smtp: &SmtpServer,
) -> types::NotifyResult {
    for address in ["a@example.test", "b@example.test", "gone@example.test"] {
        subscribe(server, address).await;
    }
    let welcomes = smtp.wait_for(3, WAIT).await;
    let gone = welcomes
        .iter()
        .find(|m| m.rcpt_tos == ["gone@example.test"])
        .unwrap_or_else(|| panic!("no welcome for gone@: {welcomes:?}"));
    let link = newsletter_link(server, gone, "unsubscribe");
    let (status, _, _) = send_json(http().post(&link)).await;
    assert_eq!(status, 200);
    let admin = server.portfolio_with_key(Some(keys::ADMIN));
    notify(&admin, "outbox-pattern").await
}

async fn a_new_post_is_emailed_to_each_current_subscriber(db: Db) {
    let Some((server, smtp)) = TestServer::start_with_smtp(db, |_| {}).await else {
        return;
    };
    let first = notify_two_of_three_subscribers(&server, &smtp).await;
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
    server.stop().await;
}

async fn notifying_again_of_a_post_queues_nothing(db: Db) {
    let Some((server, smtp)) = TestServer::start_with_smtp(db, |_| {}).await else {
        return;
    };
    notify_two_of_three_subscribers(&server, &smtp).await;
    let admin = server.portfolio_with_key(Some(keys::ADMIN));
    let again = notify(&admin, "outbox-pattern").await;
    assert_eq!((again.queued, again.already_notified), (2, true));
    assert_eq!(server.count("outbox").await, 5, "nothing queued twice");
    server.stop().await;
}

/// Subscribes `count` addresses `n{i}@example.test`, 32 at a time.
async fn subscribe_many(server: &TestServer, count: usize) {
    use futures::StreamExt as _;
    futures::stream::iter(0..count)
        .for_each_concurrent(32, |n| async move {
            subscribe(server, &format!("n{n}@example.test")).await;
        })
        .await;
}

/// How many "new post" emails the outbox holds, and for how many addresses.
async fn post_emails(server: &TestServer) -> (i64, i64) {
    let news = "outbox WHERE subject LIKE 'New post%'";
    let emails = server.count(news).await;
    let addresses = server
        .count(&format!(
            "(SELECT DISTINCT recipient FROM {news}) AS addresses"
        ))
        .await;
    (emails, addresses)
}

/// More subscribers than one chunk holds, and four calls at once: they take
/// the chunks in turn, and each address gets one email.
async fn calls_at_once_notify_a_crowd_once_a_chunk_at_a_time(db: Db) {
    let server = TestServer::start(db).await;
    subscribe_many(&server, 1_001).await;
    let admin = server.portfolio_with_key(Some(keys::ADMIN));
    let answers = futures::future::join_all((0..4).map(|_| notify(&admin, "outbox-pattern"))).await;
    for answer in &answers {
        assert_eq!(answer.queued, 1_001, "{answers:?}");
    }
    assert!(
        answers.iter().any(|answer| !answer.already_notified),
        "{answers:?}"
    );
    assert_eq!(post_emails(&server).await, (1_001, 1_001));
    let again = notify(&admin, "outbox-pattern").await;
    assert_eq!((again.queued, again.already_notified), (1_001, true));
    server.stop().await;
}

/// A notification a restart cut short after its first chunk (as its record
/// says) queues the rest when asked again, and nobody twice.
async fn a_notification_cut_short_goes_on_where_it_stopped(db: Db) {
    let server = TestServer::start(db).await;
    subscribe_many(&server, 600).await;
    let admin = server.portfolio_with_key(Some(keys::ADMIN));
    notify(&admin, "outbox-pattern").await;
    // Undo its end: the emails after the 500th subscriber, and the record's
    // "done", as if the server stopped after the first chunk.
    server
        .execute(
            "DELETE FROM outbox WHERE subject LIKE 'New post%' AND recipient IN \
             (SELECT email FROM subscribers WHERE id > \
              (SELECT id FROM subscribers ORDER BY id LIMIT 1 OFFSET 499))",
            &[],
        )
        .await;
    server
        .execute(
            "UPDATE post_notifications SET queued = 500, resume_after = \
             (SELECT id FROM subscribers ORDER BY id LIMIT 1 OFFSET 499)",
            &[],
        )
        .await;
    assert_eq!(post_emails(&server).await, (500, 500));
    let resumed = notify(&admin, "outbox-pattern").await;
    assert_eq!((resumed.queued, resumed.already_notified), (600, false));
    assert_eq!(post_emails(&server).await, (600, 600));
    server.stop().await;
}

async fn notifying_of_an_unknown_post_is_404(db: Db) {
    let server = TestServer::start(db).await;
    let missing = types::NotifyRequest {
        post_slug: parse("no-such-post"),
    };
    let notified = server
        .portfolio_with_key(Some(keys::ADMIN))
        .notify_subscribers()
        .body(missing)
        .send()
        .await;
    assert_api_error(notified, 404, "NOT_FOUND");
    server.stop().await;
}

async fn sent_and_pending(server: &TestServer) -> (i64, i64) {
    (
        server.count_where("outbox", "status = 'sent'").await,
        server.count_where("outbox", "status = 'pending'").await,
    )
}

async fn smtp_down_then_up_loses_nothing_sends_nothing_twice(db: Db) {
    let Some((server, port)) = TestServer::start_with_smtp_down(db, |_| {}).await else {
        return;
    };
    for name in ["One", "Two"] {
        submit_contact(&server, name).await;
    }
    // Nobody listens: the emails wait, retried, and readiness says so.
    wait_until(WAIT, "the worker retries", async || {
        server.count_where("outbox", "attempts >= 2").await >= 2
    })
    .await;
    let ready = http().get(server.at("/api/health/ready"));
    let body = assert_refused(ready, 503, "SERVICE_UNAVAILABLE").await;
    assert_eq!(body["error"]["details"]["checks"]["mail"]["ok"], false);
    assert_eq!(body["error"]["details"]["checks"]["outbox"]["pending"], 2);

    let smtp = SmtpServer::start_on(port);
    let messages = smtp.wait_for(2, WAIT).await;
    wait_until(WAIT, "the outbox drains", async || {
        sent_and_pending(&server).await == (2, 0)
    })
    .await;
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
        .expect("getReadiness");
    assert!(ready.checks.mail.ok && ready.checks.outbox.ok);
    server.stop().await;
}

/// Emails wait out an outage of any length within their lifetime (3 days by
/// default): here the server is down for twelve attempts, which the retry
/// budget of earlier versions (8 attempts) would have failed for good.
async fn an_outage_longer_than_many_retries_loses_nothing(db: Db) {
    let Some((server, port)) = TestServer::start_with_smtp_down(db, |c| {
        c.mail.max_retry_delay_ms = 200;
    })
    .await
    else {
        return;
    };
    const QUEUED: usize = 10;
    for n in 0..QUEUED {
        submit_contact(&server, &format!("Sender {n}")).await;
    }
    wait_until(WAIT, "every email is tried twelve times", async || {
        server.count_where("outbox", "attempts >= 12").await == QUEUED as i64
    })
    .await;
    assert_eq!(server.count_where("outbox", "status = 'failed'").await, 0);

    let smtp = SmtpServer::start_on(port);
    let messages = smtp.wait_for(QUEUED, WAIT).await;
    wait_until(WAIT, "the outbox drains", async || {
        sent_and_pending(&server).await == (QUEUED as i64, 0)
    })
    .await;
    let ids: std::collections::BTreeSet<_> = messages
        .iter()
        .filter_map(|m| m.header("Message-ID"))
        .collect();
    assert_eq!(
        (smtp.messages().len(), ids.len()),
        (QUEUED, QUEUED),
        "every email delivered, each once"
    );
    server.stop().await;
}

async fn a_restart_loses_nothing_and_sends_nothing_twice(db: Db) {
    let Some((server, port)) = TestServer::start_with_smtp_down(db, |_| {}).await else {
        return;
    };
    for address in ["r1@example.test", "r2@example.test", "r3@example.test"] {
        subscribe(&server, address).await;
    }
    assert_eq!(server.count_where("outbox", "status = 'pending'").await, 3);
    let smtp = SmtpServer::start_on(port);
    let server = server.restart(|_| {}).await;
    let messages = smtp.wait_for(3, WAIT).await;
    wait_until(WAIT, "the outbox drains", async || {
        server.count_where("outbox", "status = 'sent'").await >= 3
    })
    .await;
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
    let Some((server, smtp)) = TestServer::start_with_smtp(db, |_| {}).await else {
        return;
    };
    subscribe(&server, "reject-me@example.test").await;
    subscribe(&server, "fine@example.test").await;
    let messages = smtp.wait_for(1, WAIT).await;
    assert_eq!(messages[0].rcpt_tos, ["fine@example.test"]);
    wait_until(WAIT, "the rejection is recorded", async || {
        server
            .count_where("outbox", "status = 'failed' AND last_error LIKE '%550%'")
            .await
            >= 1
    })
    .await;
    let ready = server
        .portfolio()
        .get_readiness()
        .send()
        .await
        .expect("getReadiness");
    assert_eq!(ready.checks.outbox.failed, 1, "the failure is visible");
    assert_eq!(ready.status, types::ReadinessStatus::Degraded);
    assert!(
        !ready.checks.outbox.detail.contains("outbox list"),
        "details to the operator only"
    );
    let ready = server
        .portfolio_with_key(Some(end_to_end_tests::keys::ADMIN))
        .get_readiness()
        .send()
        .await
        .expect("getReadiness");
    assert!(
        ready.checks.outbox.detail.contains("degraded: 1 email"),
        "{}",
        ready.checks.outbox.detail
    );
    server.stop().await;
}

/// Without SMTP the outbox writes `.eml` files, and counts them delivered:
/// the server stays ready.
async fn without_smtp_emails_are_eml_files(db: Db) {
    let server = TestServer::start(db).await;
    subscribe(&server, "files@example.test").await;
    let folder = server.data_dir().join("outbox");
    let eml = eventually(WAIT, "an .eml file is written", async || {
        let found = std::fs::read_dir(&folder).ok().and_then(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .find(|p| p.extension().is_some_and(|x| x == "eml"))
        });
        match found {
            Some(path) => Ok(std::fs::read_to_string(path).unwrap_or_default()),
            None => Err(folder.display().to_string()),
        }
    })
    .await;
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
        .expect("getReadiness");
    assert_eq!(ready.status, types::ReadinessStatus::Ready);
    // The data directory's path is the operator's business only.
    let data_dir = server.data_dir().display().to_string();
    assert!(
        !ready.checks.mail.detail.contains(&data_dir),
        "{}",
        ready.checks.mail.detail
    );
    let for_the_operator = server
        .portfolio_with_key(Some(end_to_end_tests::keys::ADMIN))
        .get_readiness()
        .send()
        .await
        .expect("getReadiness");
    assert!(for_the_operator.checks.mail.detail.contains(&data_dir));
    server.stop().await;
}
