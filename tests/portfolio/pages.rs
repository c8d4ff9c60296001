//! Every portfolio list a page at a time: the admin lists by page number or
//! by cursor (a cursor's page stays put when items come or go before it),
//! the short lists whole or a slice at a time; each page followed by another
//! names it in a `Link` header, and the SDK's `stream()` follows them.

use end_to_end_tests::{Db, TestServer, http, on_every_database, send_json};
use futures::TryStreamExt as _;
use petstore_portfolio_client::portfolio::types;
use petstore_portfolio_server::config::Scope;
use serde_json::{Value, json};

use crate::support::{assert_envelope, parse};

on_every_database!(
    an_admin_list_by_cursor_skips_nobody_when_an_item_before_is_erased,
    key_requests_and_contact_submissions_page_by_cursor_in_their_order,
    short_lists_come_whole_or_a_slice_at_a_time,
    bad_cursors_limits_and_a_page_beside_a_cursor_are_400,
);

/// A GET with a bearer token: the status, the `Link` header and the body.
async fn get(
    server: &TestServer,
    token: &str,
    path_and_query: &str,
) -> (u16, Option<String>, Value) {
    let response = http()
        .get(format!("{}{path_and_query}", server.url))
        .bearer_auth(token)
        .send()
        .await
        .expect("answered");
    let status = response.status().as_u16();
    let link = response
        .headers()
        .get(reqwest::header::LINK)
        .map(|link| link.to_str().expect("an ASCII Link").to_owned());
    (status, link, response.json().await.expect("a JSON body"))
}

/// The path and query a `Link: <...>; rel="next"` points to.
fn next_target(link: &str) -> String {
    assert!(link.ends_with("; rel=\"next\""), "{link}");
    link.strip_prefix('<')
        .and_then(|rest| rest.split_once('>'))
        .map(|(target, _)| target.to_owned())
        .unwrap_or_else(|| panic!("no target in {link}"))
}

fn field(items: &Value, name: &str) -> Vec<String> {
    items
        .as_array()
        .expect("a list")
        .iter()
        .map(|item| item[name].as_str().unwrap_or_default().to_owned())
        .collect()
}

async fn subscribe(server: &TestServer, email: &str) {
    server
        .portfolio()
        .subscribe_newsletter()
        .body(types::SubscribeRequest {
            email: parse(email),
        })
        .send()
        .await
        .expect("subscribed");
}

async fn an_admin_list_by_cursor_skips_nobody_when_an_item_before_is_erased(db: Db) {
    let server = TestServer::start(db).await;
    let emails: Vec<String> = (1..=5).map(|n| format!("s{n}@example.test")).collect();
    for email in &emails {
        subscribe(&server, email).await;
    }
    let token = server
        .bearer_token(&[Scope::SubscribersRead, Scope::SubscribersWrite])
        .await;
    let (status, link, first) = get(&server, &token, "/api/admin/subscribers?per_page=2").await;
    assert_eq!(status, 200, "{first}");
    assert_eq!(field(&first["items"], "email"), emails[..2]);
    let cursor = first["next_cursor"]
        .as_str()
        .expect("a next cursor")
        .to_owned();
    let link = link.expect("a Link to the next page");
    assert_eq!(
        next_target(&link),
        format!("/api/admin/subscribers?per_page=2&cursor={cursor}")
    );

    // The first subscriber leaves while the reader is on page one: the
    // next page by cursor still begins with the third, where a page number
    // would now skip it.
    let erased = first["items"][0]["id"].as_i64().expect("an id");
    let gone = http()
        .delete(format!("{}/api/admin/subscribers/{erased}", server.url))
        .bearer_auth(&token)
        .send()
        .await
        .expect("answered");
    assert_eq!(gone.status().as_u16(), 204);
    let (_, link, second) = get(&server, &token, &next_target(&link)).await;
    assert_eq!(field(&second["items"], "email"), emails[2..4]);
    assert_eq!(second["page"], 1);
    assert_eq!(second["total"], 4);
    let (_, by_number, _) = get(&server, &token, "/api/admin/subscribers?per_page=1&page=2").await;
    assert!(by_number.is_some(), "a numbered page also names the next");
    let (_, link, last) = get(&server, &token, &next_target(&link.expect("a third page"))).await;
    assert_eq!(field(&last["items"], "email"), emails[4..]);
    assert_eq!(
        (link, last.get("next_cursor")),
        (None, None),
        "the last page names none"
    );

    // The SDK's stream follows the cursors: everyone left, once, in order.
    let reader = server
        .portfolio_with_scopes(&[Scope::SubscribersRead])
        .await;
    let streamed: Vec<String> = reader
        .list_subscribers()
        .per_page(2_u32)
        .stream()
        .map_ok(|subscriber| subscriber.email.to_string())
        .try_collect()
        .await
        .expect("every page");
    assert_eq!(streamed, emails[1..]);
    server.stop().await;
}

async fn key_requests_and_contact_submissions_page_by_cursor_in_their_order(db: Db) {
    let server = TestServer::start(db).await;
    let mut asked = Vec::new();
    for n in 1..=3 {
        let form: types::KeyRequestForm = serde_json::from_value(json!({
            "name": format!("Asker {n}"),
            "organisation": "Analytical Engines Ltd",
            "intended_use": "Show the latest posts on our intranet",
            "expected_volume": "about 500 requests a day",
            "technical_contact": format!("asker{n}@example.test"),
        }))
        .expect("a form");
        let accepted = server
            .portfolio()
            .request_api_key()
            .body(form)
            .send()
            .await
            .expect("recorded");
        asked.push(accepted.into_inner().id);
    }
    let token = server.bearer_token(&[Scope::Admin]).await;
    let (_, link, first) = get(&server, &token, "/api/admin/key-requests?per_page=2").await;
    assert_eq!(field(&first["items"], "id"), asked[..2]);
    assert_eq!(first["next_cursor"], asked[1].as_str());
    let (_, link, rest) = get(&server, &token, &next_target(&link.expect("a next page"))).await;
    assert_eq!(field(&rest["items"], "id"), asked[2..]);
    assert_eq!(link, None);

    let with_key = server.portfolio_with_key(Some(end_to_end_tests::keys::ADMIN));
    for name in ["First", "Second", "Third"] {
        let contact: types::ContactRequest = serde_json::from_value(json!({
            "name": name, "email": "visitor@example.test", "message": format!("From {name}")
        }))
        .expect("a contact");
        with_key
            .submit_contact()
            .body(contact)
            .send()
            .await
            .expect("sent");
    }
    let admin = server.portfolio_with_scopes(&[Scope::Admin]).await;
    let newest_first: Vec<String> = admin
        .list_contact_submissions()
        .per_page(1_u32)
        .stream()
        .map_ok(|entry| entry.name.to_string())
        .try_collect()
        .await
        .expect("every page");
    assert_eq!(newest_first, ["Third", "Second", "First"]);
    server.stop().await;
}

async fn short_lists_come_whole_or_a_slice_at_a_time(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.portfolio();
    let whole = client
        .list_posts()
        .send()
        .await
        .expect("the posts")
        .into_inner();
    assert!(whole.len() >= 2, "the sample content has posts to slice");
    let slugs = |posts: &[types::PostSummary]| -> Vec<String> {
        posts.iter().map(|post| post.slug.to_string()).collect()
    };

    // A slice of one names the next; the last names none.
    let first = client
        .list_posts()
        .limit(1_u32)
        .send()
        .await
        .expect("a slice");
    let link = first.headers().get(reqwest::header::LINK).cloned();
    assert_eq!(slugs(&first.into_inner()), slugs(&whole[..1]));
    let link = link.expect("a Link to the next slice");
    assert_eq!(
        next_target(link.to_str().expect("ASCII")),
        "/api/posts?limit=1&cursor=1"
    );
    let (status, _, past) = send_json(http().get(format!(
        "{}/api/posts?limit=1&cursor={}",
        server.url,
        whole.len()
    )))
    .await;
    assert_eq!((status, past), (200, json!([])));

    // Streamed a slice at a time, every list is its whole.
    let streamed: Vec<types::PostSummary> = client
        .list_posts()
        .limit(1_u32)
        .stream()
        .try_collect()
        .await
        .expect("every slice");
    assert_eq!(slugs(&streamed), slugs(&whole));
    let projects = client
        .list_projects()
        .send()
        .await
        .expect("projects")
        .into_inner();
    let streamed: Vec<types::Project> = client
        .list_projects()
        .limit(1_u32)
        .stream()
        .try_collect()
        .await
        .expect("every slice");
    assert_eq!(json!(streamed), json!(projects));
    let achievements = client
        .list_achievements()
        .send()
        .await
        .expect("achievements")
        .into_inner();
    let streamed: Vec<types::Achievement> = client
        .list_achievements()
        .limit(1_u32)
        .stream()
        .try_collect()
        .await
        .expect("every slice");
    assert_eq!(json!(streamed), json!(achievements));

    // The admin short lists too.
    let admin = server.portfolio_with_scopes(&[Scope::Admin]).await;
    let clients = admin
        .list_oauth_clients()
        .send()
        .await
        .expect("clients")
        .into_inner();
    let streamed: Vec<types::OAuthClient> = admin
        .list_oauth_clients()
        .limit(1_u32)
        .stream()
        .try_collect()
        .await
        .expect("every slice");
    assert_eq!(json!(streamed), json!(clients));
    server.stop().await;
}

async fn bad_cursors_limits_and_a_page_beside_a_cursor_are_400(db: Db) {
    let server = TestServer::start(db).await;
    subscribe(&server, "ada@example.test").await;
    let token = server.bearer_token(&[Scope::Admin]).await;
    let before = get(&server, &token, "/api/admin/subscribers").await.2;
    for (query, says) in [
        ("/api/admin/subscribers?page=2&cursor=1", "send one"),
        ("/api/admin/subscribers?cursor=abc", "next_cursor"),
        (
            "/api/admin/subscribers?cursor=9999999999999999999",
            "next_cursor",
        ),
        ("/api/admin/key-requests?cursor=kr_XYZ", "next_cursor"),
        ("/api/admin/contact-submissions?cursor=-1", "next_cursor"),
        ("/api/posts?limit=0", "limit"),
        ("/api/projects?limit=101", "limit"),
        ("/api/achievements?cursor=x", "Link"),
        ("/api/admin/api-keys?cursor=1.5", "Link"),
    ] {
        let (status, link, body) = get(&server, &token, query).await;
        assert_eq!((status, link), (400, None), "{query}: {body}");
        assert_envelope(&body, "BAD_REQUEST");
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(says), "{query}: {message}");
    }
    // `cursor=` is the first page, and nothing changed.
    let (status, _, first) = get(&server, &token, "/api/admin/subscribers?cursor=").await;
    assert_eq!((status, &first), (200, &before));
    server.stop().await;
}
