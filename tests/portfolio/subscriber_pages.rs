//! What a subscriber meets: the links in the emails answer a browser with
//! pages in the site's name (a GET of the unsubscribe link changes nothing:
//! only its button's POST unsubscribes), a client with the documented JSON;
//! the emails are text and HTML, with what came from outside escaped.

use end_to_end_tests::{Db, SentEmail, TestServer, http, keys, on_every_database, send};
use petstore_portfolio_client::portfolio::types;

use crate::support::parse;

on_every_database!(
    a_get_of_the_unsubscribe_link_shows_a_button_and_changes_nothing,
    the_button_unsubscribes_and_subscribe_again_undoes_it,
    a_browser_confirms_and_is_told_when_the_link_was_used,
    a_bad_link_is_a_page_for_a_browser_and_json_for_a_client,
    every_email_is_text_and_html_in_the_sites_name,
    html_from_outside_is_escaped_in_the_owners_email,
);

/// What a browser sends for a page.
const BROWSER: &str = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

/// A status, the content type and the page of a browser's request.
async fn browse(request: reqwest::RequestBuilder) -> (u16, String, String) {
    send(request.header("accept", BROWSER)).await
}

/// Subscribes `email` (single opt-in) and returns its welcome email.
async fn subscribed(server: &TestServer, email: &str) -> SentEmail {
    crate::mail::subscribe(server, email).await;
    let emails = server.wait_for_emails(1).await;
    emails
        .into_iter()
        .find(|e| e.to == [email])
        .unwrap_or_else(|| panic!("no email to {email}"))
}

fn link(server: &TestServer, email: &SentEmail, action: &str) -> String {
    let prefix = format!("{}/api/newsletter/{action}?token=", server.url);
    email
        .link(&prefix)
        .unwrap_or_else(|| panic!("no {action} link in {}", email.text))
}

async fn status_of(server: &TestServer, email: &str) -> String {
    let statuses = [
        ("subscribed", "status = 'subscribed'"),
        ("unsubscribed", "status = 'unsubscribed'"),
        ("pending", "status = 'pending'"),
    ];
    for (name, condition) in statuses {
        let where_ = format!("email = '{email}' AND {condition}");
        if server.count_where("subscribers", &where_).await == 1 {
            return name.to_owned();
        }
    }
    panic!("{email} is not a subscriber")
}

/// The first `action="..."` of a form in `page`, entities read back.
fn form_action(page: &str) -> String {
    let start = page.find("action=\"").expect("a form") + "action=\"".len();
    let end = start + page[start..].find('"').expect("a closed attribute");
    page[start..end]
        .replace("&#x2f;", "/")
        .replace("&amp;", "&")
        .replace("&#x3d;", "=")
}

async fn a_get_of_the_unsubscribe_link_shows_a_button_and_changes_nothing(db: Db) {
    let server = TestServer::start(db).await;
    let welcome = subscribed(&server, "reader@example.test").await;
    let unsubscribe = link(&server, &welcome, "unsubscribe");
    // A browser, a link scanner (`*/*`) and a fetch without `Accept`.
    for request in [
        http().get(&unsubscribe).header("accept", BROWSER),
        http().get(&unsubscribe).header("accept", "*/*"),
        http().get(&unsubscribe),
    ] {
        let (status, content_type, page) = send(request).await;
        assert_eq!(status, 200, "{page}");
        assert_eq!(content_type, "text/html; charset=utf-8");
        assert!(
            page.contains("<title>Unsubscribe · Ada Example</title>"),
            "{page}"
        );
        assert!(page.contains("<form method=\"post\""), "{page}");
        assert!(page.contains("reader@example.test"), "{page}");
        assert_eq!(
            status_of(&server, "reader@example.test").await,
            "subscribed"
        );
    }
    assert_eq!(
        form_action(&send(http().get(&unsubscribe)).await.2),
        unsubscribe
    );
    server.stop().await;
}

async fn the_button_unsubscribes_and_subscribe_again_undoes_it(db: Db) {
    let server = TestServer::start(db).await;
    let welcome = subscribed(&server, "reader@example.test").await;
    let unsubscribe = link(&server, &welcome, "unsubscribe");
    let (_, _, asking) = browse(http().get(&unsubscribe)).await;
    let (status, content_type, page) = browse(http().post(form_action(&asking))).await;
    assert_eq!(
        (status, content_type.as_str()),
        (200, "text/html; charset=utf-8"),
        "{page}"
    );
    assert!(page.contains("You are unsubscribed"), "{page}");
    assert_eq!(
        status_of(&server, "reader@example.test").await,
        "unsubscribed"
    );

    // Pressed by mistake: the page's other button.
    let resubscribe = form_action(&page);
    assert!(resubscribe.starts_with(&format!("{}/api/newsletter/resubscribe?token=", server.url)));
    let (status, _, page) = browse(http().post(&resubscribe)).await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("You are subscribed again"), "{page}");
    assert_eq!(
        status_of(&server, "reader@example.test").await,
        "subscribed"
    );
    // No email for either.
    assert_eq!(server.emails().len(), 1);

    // The SDK's calls answer the documented JSON.
    let token = unsubscribe
        .rsplit_once("token=")
        .map(|(_, t)| t.to_owned())
        .unwrap();
    let state = server
        .portfolio()
        .unsubscribe_newsletter()
        .token(parse::<types::UnsubscribeNewsletterToken>(&token))
        .send()
        .await
        .expect("unsubscribeNewsletter");
    assert_eq!(state.status, types::SubscriptionStateStatus::Unsubscribed);
    let state = server
        .portfolio()
        .resubscribe_newsletter()
        .token(parse::<types::ResubscribeNewsletterToken>(&token))
        .send()
        .await
        .expect("resubscribeNewsletter");
    assert_eq!(state.status, types::SubscriptionStateStatus::Subscribed);
    assert_eq!(
        status_of(&server, "reader@example.test").await,
        "subscribed"
    );
    server.stop().await;
}

async fn a_browser_confirms_and_is_told_when_the_link_was_used(db: Db) {
    let server = TestServer::start_with(db, |c| c.portfolio.newsletter.double_opt_in = true).await;
    let confirmation = subscribed(&server, "careful@example.test").await;
    assert_eq!(status_of(&server, "careful@example.test").await, "pending");
    let confirm = link(&server, &confirmation, "confirm");
    let (status, content_type, page) = browse(http().get(&confirm)).await;
    assert_eq!(
        (status, content_type.as_str()),
        (200, "text/html; charset=utf-8"),
        "{page}"
    );
    assert!(page.contains("You are subscribed"), "{page}");
    assert!(page.contains("careful@example.test"), "{page}");
    assert_eq!(
        status_of(&server, "careful@example.test").await,
        "subscribed"
    );

    let (status, content_type, page) = browse(http().get(&confirm)).await;
    assert_eq!(
        (status, content_type.as_str()),
        (404, "text/html; charset=utf-8"),
        "{page}"
    );
    assert!(page.contains("This link was used already"), "{page}");
    assert!(page.contains("nothing more to do"), "{page}");
    server.stop().await;
}

async fn a_bad_link_is_a_page_for_a_browser_and_json_for_a_client(db: Db) {
    let server = TestServer::start(db).await;
    let unknown = server.at("/api/newsletter/unsubscribe?token=nope");
    let (status, content_type, page) = browse(http().get(&unknown)).await;
    assert_eq!(
        (status, content_type.as_str()),
        (404, "text/html; charset=utf-8")
    );
    assert!(page.contains("This link is not known"), "{page}");
    let (status, content_type, page) = browse(http().post(&unknown)).await;
    assert_eq!(
        (status, content_type.as_str()),
        (404, "text/html; charset=utf-8")
    );
    assert!(page.contains("This link is not known"), "{page}");
    let (status, _, page) = browse(http().get(server.at("/api/newsletter/unsubscribe"))).await;
    assert_eq!(status, 400);
    assert!(page.contains("This link is incomplete"), "{page}");
    // The same links, for a client: the documented errors.
    for (request, status) in [
        (http().get(&unknown), 404),
        (
            http().get(&unknown).header("accept", "application/json"),
            404,
        ),
        (http().post(&unknown), 404),
        (http().get(server.at("/api/newsletter/unsubscribe")), 400),
        (
            http().post(server.at("/api/newsletter/resubscribe?token=nope")),
            404,
        ),
    ] {
        let (got, content_type, body) = send(request).await;
        assert_eq!(
            (got, content_type.as_str()),
            (status, "application/json"),
            "{body}"
        );
    }
    server.stop().await;
}

async fn every_email_is_text_and_html_in_the_sites_name(db: Db) {
    let server = TestServer::start(db).await;
    let welcome = subscribed(&server, "reader@example.test").await;
    assert_eq!(welcome.subject, "Welcome to the newsletter of Ada Example");
    assert!(
        welcome
            .header("Content-Type")
            .is_some_and(|t| t.starts_with("multipart/alternative")),
        "{:?}",
        welcome.headers
    );
    assert!(
        welcome.text.contains("newsletter of Ada Example"),
        "{}",
        welcome.text
    );
    assert!(
        welcome
            .html
            .contains("<a href=\"https:&#x2f;&#x2f;ada.example.test\""),
        "{}",
        welcome.html
    );
    assert!(
        welcome.html.contains(">Unsubscribe</a>"),
        "{}",
        welcome.html
    );
    // The Message-ID is under the public URL's host.
    let message_id = welcome.header("Message-ID").expect("a Message-ID");
    assert!(message_id.ends_with("@127.0.0.1>"), "{message_id}");
    server.stop().await;
}

async fn html_from_outside_is_escaped_in_the_owners_email(db: Db) {
    let server = TestServer::start(db).await;
    let hostile = types::ContactRequest {
        name: parse("<img src=x onerror=alert(1)>"),
        email: parse("grace@example.test"),
        subject: Some(parse("<b>urgent</b>")),
        message: Some(parse("<script>alert(2)</script>")),
    };
    server
        .portfolio_with_key(Some(keys::ADMIN))
        .submit_contact()
        .body(hostile)
        .send()
        .await
        .expect("submitContact");
    let email = server.wait_for_emails(1).await.remove(0);
    assert_eq!(email.subject, "Contact form: <b>urgent</b>");
    assert!(
        email.text.contains("<script>alert(2)</script>"),
        "{}",
        email.text
    );
    for raw in ["<img", "<script", "<b>"] {
        assert!(!email.html.contains(raw), "{raw} in {}", email.html);
    }
    assert!(
        email
            .html
            .contains("&lt;script&gt;alert(2)&lt;&#x2f;script&gt;"),
        "{}",
        email.html
    );
    server.stop().await;
}
