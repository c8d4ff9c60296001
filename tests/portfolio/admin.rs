//! The private operations under `/api/admin/`, through the SDK with client
//! credentials: content (visible on the public reads at once), subscribers,
//! contact submissions, API keys, OAuth clients and failed emails.

use std::time::Duration;

use end_to_end_tests::smtp::SmtpServer;
use end_to_end_tests::{Db, TestServer, http, keys, on_every_database, send_json, wait_until};
use petstore_portfolio_client::portfolio::{self, Client, refusal, types};
use petstore_portfolio_server::config::Scope;
use serde_json::{Value, json};

use crate::support::{assert_api_error, parse};

on_every_database!(
    content_changes_show_on_the_public_reads_at_once,
    bad_content_is_refused_and_changes_nothing,
    subscribers_are_listed_a_page_at_a_time_and_erased_with_their_emails,
    contact_submissions_are_listed_newest_first,
    api_keys_made_rotated_and_revoked_here_work_and_stop_at_once,
    nobody_hands_out_a_scope_they_do_not_hold,
    nobody_revokes_a_credential_wider_than_their_own,
    oauth_clients_are_registered_and_revoked,
);

const WAIT: Duration = Duration::from_secs(20);

fn body<T: serde::de::DeserializeOwned>(value: Value) -> T {
    serde_json::from_value(value).expect("a body the SDK accepts")
}

fn project(slug: &str, title: &str) -> types::Project {
    body(json!({
        "slug": slug, "title": title, "summary": "A summary.", "description": "What it is.",
        "url": "https://example.test/p", "tags": ["rust"], "featured": true
    }))
}

fn post(slug: &str, title: &str) -> types::Post {
    body(json!({
        "slug": slug, "title": title, "summary": "In short.", "body": "# Hello",
        "tags": ["news"], "published_at": "2030-01-02T03:04:05Z"
    }))
}

async fn content_changes_show_on_the_public_reads_at_once(db: Db) {
    let server = TestServer::start(db).await;
    let admin = server.portfolio_with_scopes(&[Scope::ContentWrite]).await;
    let public = server.portfolio();

    // Site information (read first: the read may be held in memory, and
    // the replacement must still show at once).
    public.get_site_info().send().await.unwrap();
    let site: types::SiteInfo = body(json!({
        "name": "Grace", "headline": "Admiral", "bio": "Wrote compilers.",
        "contact_email": "grace@example.test", "links": [{"label": "Home", "url": "https://example.test"}]
    }));
    admin
        .replace_site_info()
        .body(site.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(
        json!(public.get_site_info().send().await.unwrap().into_inner()),
        json!(site)
    );

    // A project: made, replaced, deleted.
    let made = admin
        .create_project()
        .body(project("lighthouse", "Lighthouse"))
        .send()
        .await
        .unwrap();
    assert_eq!(made.status().as_u16(), 201);
    let listed = public.list_projects().send().await.unwrap().into_inner();
    assert!(listed.iter().any(|p| *p.slug == "lighthouse"), "{listed:?}");
    admin
        .replace_project()
        .slug(parse::<types::ReplaceProjectSlug>("lighthouse"))
        .body(project("lighthouse", "Lighthouse II"))
        .send()
        .await
        .unwrap();
    let read = public
        .get_project()
        .slug(parse::<types::GetProjectSlug>("lighthouse"))
        .send()
        .await
        .unwrap();
    assert_eq!(*read.title, "Lighthouse II");
    let deleted = admin
        .delete_project()
        .slug(parse::<types::DeleteProjectSlug>("lighthouse"))
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status().as_u16(), 204);
    assert_api_error(
        public
            .get_project()
            .slug(parse::<types::GetProjectSlug>("lighthouse"))
            .send()
            .await,
        404,
        "NOT_FOUND",
    );

    // A post shows in the list, by its slug, and in the LLM context.
    admin
        .create_post()
        .body(post("launch", "Launch day"))
        .send()
        .await
        .unwrap();
    let newest = public.list_posts().send().await.unwrap().into_inner();
    assert_eq!(*newest[0].slug, "launch", "the newest first");
    let context = server
        .portfolio_with_key(Some(keys::ADMIN))
        .get_llm_context()
        .send()
        .await
        .unwrap();
    assert_eq!(*context.recent_posts[0].title, "Launch day");

    // An achievement.
    let achievement: types::Achievement = body(json!({
        "slug": "award", "title": "Award", "description": "Won it.", "date": "2026-05-01"
    }));
    admin
        .create_achievement()
        .body(achievement)
        .send()
        .await
        .unwrap();
    let achievements = public
        .list_achievements()
        .send()
        .await
        .unwrap()
        .into_inner();
    assert!(achievements.iter().any(|a| *a.slug == "award"));
    admin
        .delete_achievement()
        .slug(parse::<types::DeleteAchievementSlug>("award"))
        .send()
        .await
        .unwrap();
    let achievements = public
        .list_achievements()
        .send()
        .await
        .unwrap()
        .into_inner();
    assert!(!achievements.iter().any(|a| *a.slug == "award"));
    server.stop().await;
}

async fn bad_content_is_refused_and_changes_nothing(db: Db) {
    let server = TestServer::start(db).await;
    let admin = server.portfolio_with_scopes(&[Scope::ContentWrite]).await;
    let before = server
        .portfolio()
        .list_projects()
        .send()
        .await
        .unwrap()
        .into_inner();
    let existing = before[0].slug.clone();

    let taken = admin
        .create_project()
        .body(project(&existing, "Again"))
        .send()
        .await;
    let error = assert_api_error(taken, 409, "CONFLICT");
    assert!(error.message.contains(existing.as_str()), "{error:?}");

    // The SDK will not even build a link that is not http(s); the server
    // refuses one sent without it.
    assert!(types::HttpUrl::try_from("javascript:alert(1)").is_err());
    let mut bad = json!(project("bad-link", "Bad"));
    bad["url"] = json!("javascript:alert(1)");
    let (status, _, error) = send_json(
        server
            .post_json("/api/admin/projects", bad)
            .bearer_auth(server.bearer_token(&[Scope::ContentWrite]).await),
    )
    .await;
    assert_eq!(status, 422, "{error}");
    assert_eq!(
        error["error"]["details"]["fields"]["url"],
        "not an http(s) URL"
    );

    let renamed = admin
        .replace_project()
        .slug(parse::<types::ReplaceProjectSlug>(&existing))
        .body(project("another-slug", "Renamed"))
        .send()
        .await;
    let error = assert_api_error(renamed, 422, "VALIDATION_FAILED");
    assert!(
        error.details["fields"]["slug"]
            .as_str()
            .unwrap()
            .contains("keeps its slug")
    );

    let missing = admin
        .replace_project()
        .slug(parse::<types::ReplaceProjectSlug>("no-such-project"))
        .body(project("no-such-project", "Ghost"))
        .send()
        .await;
    assert_api_error(missing, 404, "NOT_FOUND");
    let missing = admin
        .delete_post()
        .slug(parse::<types::DeletePostSlug>("no-such-post"))
        .send()
        .await;
    assert_api_error(missing, 404, "NOT_FOUND");

    // Raw bodies the SDK would not send.
    let token = server.bearer_token(&[Scope::ContentWrite]).await;
    let too_long = json!({
        "slug": "long", "title": "t".repeat(201), "summary": "s", "description": "d",
        "tags": [], "featured": false
    });
    let (status, _, refused) = send_json(
        server
            .post_json("/api/admin/projects", too_long)
            .bearer_auth(&token),
    )
    .await;
    assert_eq!(status, 422, "{refused}");
    assert_eq!(
        refused["error"]["details"]["fields"]["title"],
        "at most 200 characters"
    );
    let (status, _, refused) = send_json(
        server
            .post_json("/api/admin/projects", json!({"slug": "half"}))
            .bearer_auth(&token),
    )
    .await;
    assert_eq!(status, 400, "{refused}");

    let after = server
        .portfolio()
        .list_projects()
        .send()
        .await
        .unwrap()
        .into_inner();
    assert_eq!(json!(after), json!(before), "nothing changed");
    server.stop().await;
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

async fn subscribers_are_listed_a_page_at_a_time_and_erased_with_their_emails(db: Db) {
    let server = TestServer::start(db).await;
    for name in ["ada", "grace", "edsger"] {
        subscribe(&server, &format!("{name}@example.test")).await;
    }
    let reader = server
        .portfolio_with_scopes(&[Scope::SubscribersRead])
        .await;
    let first = reader.list_subscribers().per_page(2).send().await.unwrap();
    assert_eq!(
        (
            first.items.len(),
            first.total,
            first.page.get(),
            first.per_page.get()
        ),
        (2, 3, 1, 2)
    );
    assert_eq!(first.items[0].email, "ada@example.test");
    let second = reader
        .list_subscribers()
        .per_page(2)
        .page(2)
        .send()
        .await
        .unwrap();
    assert_eq!(second.items.len(), 1);
    assert_eq!(second.items[0].email, "edsger@example.test");
    let subscribed = reader
        .list_subscribers()
        .status(types::SubscriberStatus::Subscribed)
        .send()
        .await
        .unwrap();
    assert_eq!(subscribed.total, 3);

    // Bad pages are 400.
    let token = server.bearer_token(&[Scope::SubscribersRead]).await;
    for query in [
        "page=0",
        "per_page=101",
        "per_page=0",
        "page=x",
        "status=gone",
    ] {
        let (status, _, body) = send_json(
            http()
                .get(server.at(&format!("/api/admin/subscribers?{query}")))
                .bearer_auth(&token),
        )
        .await;
        assert_eq!(status, 400, "{query}: {body}");
    }

    // Erasing needs its own scope, and takes the emails to the address too.
    let grace = std::num::NonZeroU64::new(u64::try_from(first.items[1].id).unwrap()).unwrap();
    let refused = reader.erase_subscriber().id(grace).send().await;
    assert_api_error(refused, 403, "FORBIDDEN");
    assert!(
        server
            .count_where("outbox", "recipient = 'grace@example.test'")
            .await
            > 0
    );
    let writer = server
        .portfolio_with_scopes(&[Scope::SubscribersWrite])
        .await;
    let erased = writer.erase_subscriber().id(grace).send().await.unwrap();
    assert_eq!(erased.status().as_u16(), 204);
    assert_eq!(
        server
            .count_where("outbox", "recipient = 'grace@example.test'")
            .await,
        0
    );
    assert_eq!(
        server
            .count_where("subscribers", "email = 'grace@example.test'")
            .await,
        0
    );
    let listed = reader.list_subscribers().send().await.unwrap();
    assert_eq!(listed.total, 2);
    assert_api_error(
        writer.erase_subscriber().id(grace).send().await,
        404,
        "NOT_FOUND",
    );
    server.stop().await;
}

async fn contact_submissions_are_listed_newest_first(db: Db) {
    let server = TestServer::start(db).await;
    let with_key = server.portfolio_with_key(Some(keys::ADMIN));
    for name in ["First", "Second", "Third"] {
        let contact: types::ContactRequest = body(json!({
            "name": name, "email": "visitor@example.test", "message": format!("From {name}")
        }));
        with_key
            .submit_contact()
            .body(contact)
            .send()
            .await
            .unwrap();
    }
    let admin = server.portfolio_with_scopes(&[Scope::Admin]).await;
    let page = admin
        .list_contact_submissions()
        .per_page(2)
        .send()
        .await
        .unwrap();
    assert_eq!(page.total, 3);
    let names: Vec<&str> = page.items.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["Third", "Second"]);
    assert_eq!(page.items[0].message.as_deref(), Some("From Third"));
    let narrow = server
        .portfolio_with_scopes(&[Scope::SubscribersRead])
        .await;
    let refused = narrow.list_contact_submissions().send().await;
    assert_eq!(
        refused.err().and_then(|e| refusal(&e)),
        Some(portfolio::Refusal::Forbidden {
            message: "the bearer token lacks the scope admin".to_owned(),
            required_scope: Some("admin".to_owned()),
        })
    );
    server.stop().await;
}

async fn llm_context_status(server: &TestServer, key: &str) -> u16 {
    let (status, _, _) = send_json(
        http()
            .get(server.at("/api/llm-context"))
            .header("x-api-key", key),
    )
    .await;
    status
}

async fn api_keys_made_rotated_and_revoked_here_work_and_stop_at_once(db: Db) {
    let server = TestServer::start(db).await;
    let admin = server
        .portfolio_with_scopes(&[Scope::KeysManage, Scope::ContextRead])
        .await;
    let spec: types::ApiKeySpec =
        body(json!({"name": "site", "scopes": ["context:read"], "expires_in_days": 30}));
    let made = admin.create_api_key().body(spec).send().await.unwrap();
    assert_eq!(made.status().as_u16(), 201);
    let made = made.into_inner();
    // No waiting: this server made it.
    assert_eq!(llm_context_status(&server, &made.key).await, 200);
    assert!(made.api_key.expires_at.is_some());

    let listed = admin.list_api_keys().send().await.unwrap().into_inner();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].id, made.api_key.id);
    // `pk_<id>_<secret>`: the secret may hold `_` itself.
    let secret = made.key.splitn(3, '_').nth(2).unwrap();
    assert!(!serde_json::to_string(&listed).unwrap().contains(secret));

    let rotated = admin
        .rotate_api_key()
        .id(&made.api_key.id)
        .old_key_valid_for_hours(1)
        .send()
        .await
        .unwrap()
        .into_inner();
    assert_eq!(rotated.replaced, made.api_key.id);
    assert_eq!(llm_context_status(&server, &rotated.new.key).await, 200);
    assert_eq!(
        llm_context_status(&server, &made.key).await,
        200,
        "in its grace"
    );
    let again = admin.rotate_api_key().id(&made.api_key.id).send().await;
    assert_api_error(again, 404, "NOT_FOUND");

    let revoked = admin
        .revoke_api_key()
        .id(&rotated.new.api_key.id)
        .send()
        .await
        .unwrap();
    assert!(revoked.revoked_at.is_some());
    assert_eq!(
        llm_context_status(&server, &rotated.new.key).await,
        401,
        "at once"
    );
    let again = admin
        .revoke_api_key()
        .id(&rotated.new.api_key.id)
        .send()
        .await;
    assert_api_error(again, 409, "CONFLICT");
    let unknown = admin.revoke_api_key().id("nope").send().await;
    assert_api_error(unknown, 404, "NOT_FOUND");

    // Bad specs are 422 and make nothing.
    let bad: types::ApiKeySpec = body(json!({"name": "x", "scopes": [], "expires_in_days": 30}));
    let error = assert_api_error(
        admin.create_api_key().body(bad).send().await,
        422,
        "VALIDATION_FAILED",
    );
    assert_eq!(error.details["fields"]["scopes"], "give at least one scope");
    assert_eq!(admin.list_api_keys().send().await.unwrap().len(), 2);
    server.stop().await;
}

async fn nobody_hands_out_a_scope_they_do_not_hold(db: Db) {
    let server = TestServer::start(db).await;
    let manager = server.portfolio_with_scopes(&[Scope::KeysManage]).await;
    let spec: types::ApiKeySpec = body(json!({"name": "escalate", "scopes": ["admin"]}));
    let refused = manager.create_api_key().body(spec).send().await;
    let error = assert_api_error(refused, 403, "FORBIDDEN");
    assert_eq!(error.details["required_scope"], "admin");
    let client: types::OAuthClientSpec =
        body(json!({"name": "escalate", "scopes": ["content:write"]}));
    let refused = manager.create_oauth_client().body(client).send().await;
    assert_api_error(refused, 403, "FORBIDDEN");
    assert_eq!(manager.list_api_keys().send().await.unwrap().len(), 0);
    assert_eq!(server.count("oauth_clients").await, 1, "only the manager");
    server.stop().await;
}

async fn oauth_clients_are_registered_and_revoked(db: Db) {
    let server = TestServer::start(db).await;
    let admin = server.portfolio_with_scopes(&[Scope::Admin]).await;
    let spec: types::OAuthClientSpec =
        body(json!({"name": "reporting", "scopes": ["subscribers:read"]}));
    let made = admin.create_oauth_client().body(spec).send().await.unwrap();
    assert_eq!(made.status().as_u16(), 201);
    let made = made.into_inner();
    assert!(made.client.client_id.starts_with("pc_"));
    let reporting: Client = portfolio::ClientBuilder::new(&server.url)
        .client_credentials(&made.client.client_id, &made.client_secret)
        .build()
        .unwrap();
    reporting
        .list_subscribers()
        .send()
        .await
        .expect("its token works");

    let listed = admin
        .list_oauth_clients()
        .send()
        .await
        .unwrap()
        .into_inner();
    assert_eq!(listed.len(), 2);
    assert!(
        !serde_json::to_string(&listed)
            .unwrap()
            .contains(&made.client_secret)
    );

    admin
        .revoke_oauth_client()
        .client_id(&made.client.client_id)
        .send()
        .await
        .unwrap();
    // Its token ends at once; a new one is refused, so the SDK reports the
    // server's answer to the old one.
    let refused = reporting.list_subscribers().send().await;
    let error = assert_api_error(refused, 401, "UNAUTHORIZED");
    assert_eq!(error.message, "the bearer token is revoked or expired");
    let (status, _, body) = send_json(
        http()
            .post(server.at("/api/oauth/token"))
            .basic_auth(&made.client.client_id, Some(&made.client_secret))
            .form(&[("grant_type", "client_credentials")]),
    )
    .await;
    assert_eq!((status, &body["error"]), (401, &json!("invalid_client")));
    let again = admin
        .revoke_oauth_client()
        .client_id(&made.client.client_id)
        .send()
        .await;
    assert_api_error(again, 409, "CONFLICT");
    server.stop().await;
}

/// An email that failed for good is listed, and a requeue delivers it.
#[tokio::test]
async fn a_failed_email_is_listed_and_requeued() {
    let Some((server, port)) = TestServer::start_with_smtp_down(Db::Sqlite, |c| {
        c.mail.lifetime_secs = 1;
        c.mail.max_retry_delay_ms = 100;
    })
    .await
    else {
        return;
    };
    let contact: types::ContactRequest = body(json!({"name": "Ada", "email": "ada@example.test"}));
    server
        .portfolio_with_key(Some(keys::ADMIN))
        .submit_contact()
        .body(contact)
        .send()
        .await
        .unwrap();
    let admin = server.portfolio_with_scopes(&[Scope::Admin]).await;
    wait_until(WAIT, "the email fails for good", async || {
        admin
            .list_failed_emails()
            .send()
            .await
            .is_ok_and(|f| f.len() == 1)
    })
    .await;
    let failed = admin
        .list_failed_emails()
        .send()
        .await
        .unwrap()
        .into_inner();
    assert!(failed[0].last_error.contains("lifetime"), "{:?}", failed[0]);

    let smtp = SmtpServer::start_on(port);
    let requeue: types::Requeue = body(json!({"ids": [failed[0].id, 999]}));
    let requeued = admin.requeue_emails().body(requeue).send().await.unwrap();
    assert_eq!(
        (requeued.requeued.as_slice(), requeued.not_failed.as_slice()),
        (&[failed[0].id][..], &[999][..])
    );
    let delivered = smtp.wait_for(1, WAIT).await;
    assert_eq!(delivered.len(), 1);
    assert!(admin.list_failed_emails().send().await.unwrap().is_empty());
    server.stop().await;
}

/// `keys:manage` may revoke keys and clients within its own scopes, not an
/// `admin` key or client (which would lock the operator out); `admin` may.
async fn nobody_revokes_a_credential_wider_than_their_own(db: Db) {
    let server = TestServer::start(db).await;
    let admin = server.bearer_token(&[Scope::Admin]).await;
    let manager = server.bearer_token(&[Scope::KeysManage]).await;
    let (status, _, key) = send_json(
        server
            .post_json(
                "/api/admin/api-keys",
                json!({"name": "root", "scopes": ["admin"]}),
            )
            .bearer_auth(&admin),
    )
    .await;
    assert_eq!(status, 201, "{key}");
    let key_id = key["api_key"]["id"].as_str().unwrap().to_owned();
    let (admin_client, _) = server.oauth_client(&[Scope::Admin]).await;
    for path in [
        format!("/api/admin/api-keys/{key_id}/revoke"),
        format!("/api/admin/oauth-clients/{admin_client}/revoke"),
    ] {
        let (status, _, refused) =
            send_json(http().post(server.at(&path)).bearer_auth(&manager)).await;
        assert_eq!(status, 403, "{path}: {refused}");
        assert_eq!(refused["error"]["details"]["required_scope"], "admin");
    }
    let works = |key: &str| {
        http()
            .get(server.at("/api/llm-context"))
            .header("x-api-key", key.to_owned())
    };
    assert_eq!(
        send_json(works(key["key"].as_str().unwrap())).await.0,
        200,
        "still in force"
    );
    let (status, _, _) = send_json(
        http()
            .post(server.at(&format!("/api/admin/api-keys/{key_id}/revoke")))
            .bearer_auth(&admin),
    )
    .await;
    assert_eq!(status, 200);
    server.stop().await;
}
