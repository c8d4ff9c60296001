//! The owner's console: nothing without a session; a printed link signs in
//! once; every form needs the session's CSRF token; nothing frames it; what
//! came from outside shows as text; and its actions are the API's
//! operations (a key request approved gives a key that works, a failed
//! email requeued goes out).

use end_to_end_tests::{Db, TestServer, header, http, on_every_database, send};
use petstore_portfolio_client::portfolio::types;
use petstore_portfolio_server::config::Scope;
use serde_json::json;

on_every_database!(
    pages_without_a_session_go_to_sign_in_and_actions_are_401,
    a_printed_link_signs_in_once,
    a_forged_csrf_token_is_403_and_changes_nothing,
    the_console_is_never_framed_and_runs_no_script,
    an_admin_client_signs_in_and_one_without_admin_is_refused,
    the_owner_approves_a_key_request_and_the_key_works,
    html_from_outside_shows_as_text,
    signing_out_ends_the_session,
    the_owner_finds_exports_and_removes_subscribers,
    the_owner_makes_rotates_and_revokes_keys_and_clients,
    the_owner_writes_previews_saves_and_publishes_a_post_with_notification,
    the_owner_reads_contact_messages_escaped_and_marks_them_handled,
    guessing_sign_in_links_is_stopped,
);

/// A client that keeps no cookies and follows no redirect: each test says
/// what it sends.
fn browser() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// The sign-in form sent with `fields`.
async fn sign_in(server: &TestServer, fields: &[(&str, &str)]) -> reqwest::Response {
    browser()
        .post(server.at("/console/sign-in"))
        .form(fields)
        .send()
        .await
        .unwrap()
}

/// The token of a printed sign-in link.
fn token_of(link: &str) -> &str {
    link.rsplit_once("token=").map(|(_, t)| t).unwrap()
}

/// Signs in with a printed link: the session's cookie (`name=value`).
async fn signed_in(server: &TestServer) -> String {
    let link = server.console_link().await;
    let answer = sign_in(server, &[("token", token_of(&link))]).await;
    assert_eq!(answer.status(), 303);
    assert_eq!(header(answer.headers(), "location"), Some("/console/"));
    let cookie = header(answer.headers(), "set-cookie").unwrap().to_owned();
    cookie.split(';').next().unwrap().to_owned()
}

/// A page of the session `cookie`: the status and the HTML.
async fn get(server: &TestServer, cookie: &str, path: &str) -> (u16, String) {
    let answer = browser()
        .get(server.at(path))
        .header("cookie", cookie)
        .send()
        .await
        .unwrap();
    (answer.status().as_u16(), answer.text().await.unwrap())
}

/// The CSRF token the session's pages carry.
fn csrf(page: &str) -> String {
    let start = page
        .find("name=\"csrf\" value=\"")
        .expect("a form with a CSRF token")
        + "name=\"csrf\" value=\"".len();
    page[start..start + page[start..].find('"').unwrap()].to_owned()
}

async fn ask_for_a_key(server: &TestServer, organisation: &str) -> String {
    let form: types::KeyRequestForm = serde_json::from_value(json!({
        "name": "Ada Lovelace",
        "organisation": organisation,
        "intended_use": "Show the latest posts on our intranet",
        "expected_volume": "about 500 requests a day",
        "technical_contact": "ada@example.test",
    }))
    .unwrap();
    let accepted = server
        .portfolio()
        .request_api_key()
        .body(form)
        .send()
        .await
        .unwrap();
    accepted.into_inner().id.to_string()
}

async fn pages_without_a_session_go_to_sign_in_and_actions_are_401(db: Db) {
    let server = TestServer::start(db).await;
    for path in [
        "/console/",
        "/console/key-requests",
        "/console/failed-emails",
    ] {
        let answer = browser().get(server.at(path)).send().await.unwrap();
        assert_eq!(answer.status(), 303, "{path}");
        assert_eq!(
            header(answer.headers(), "location"),
            Some("/console/sign-in"),
            "{path}"
        );
    }
    // A made-up cookie is no session either.
    let (status, _) = get(&server, "console_session=made-up", "/console/").await;
    assert_eq!(status, 303);
    for path in [
        "/console/key-requests/kr_0000000000000000/approve",
        "/console/key-requests/kr_0000000000000000/reject",
        "/console/failed-emails/requeue",
        "/console/sign-out",
    ] {
        let (status, content_type, page) = send(
            browser()
                .post(server.at(path))
                .form(&[("csrf", "x"), ("id", "1")]),
        )
        .await;
        assert_eq!(
            (status, content_type.as_str()),
            (401, "text/html; charset=utf-8"),
            "{path}"
        );
        assert!(page.contains("sign in again"), "{page}");
    }
    server.stop().await;
}

async fn a_printed_link_signs_in_once(db: Db) {
    let server = TestServer::start(db).await;
    let link = server.console_link().await;
    assert!(
        link.starts_with(&format!("{}/console/sign-in?token=", server.url)),
        "{link}"
    );
    // Opening the link uses nothing: it shows the button that does.
    let (status, page) = get(&server, "", &link.replace(&server.url, "")).await;
    assert_eq!(status, 200);
    assert!(page.contains("Press the button to use it"), "{page}");
    let token = token_of(&link);
    let answer = sign_in(&server, &[("token", token)]).await;
    assert_eq!(answer.status(), 303);
    let cookie = header(answer.headers(), "set-cookie").unwrap().to_owned();
    for attribute in ["HttpOnly", "SameSite=Strict", "Path=/console"] {
        assert!(cookie.contains(attribute), "{attribute} in {cookie}");
    }
    assert!(!cookie.contains("Secure"), "plain HTTP: {cookie}");
    let session = cookie.split(';').next().unwrap();
    let (status, page) = get(&server, session, "/console/").await;
    assert_eq!(status, 200);
    assert!(page.contains("<h1>Dashboard</h1>"), "{page}");
    assert!(page.contains("<svg class=\"chart\""), "{page}");

    // Used: refused, and no session comes of it.
    let again = sign_in(&server, &[("token", token)]).await;
    assert_eq!(again.status(), 403);
    assert!(header(again.headers(), "set-cookie").is_none());
    assert!(again.text().await.unwrap().contains("used already"));
    server.stop().await;
}

async fn a_forged_csrf_token_is_403_and_changes_nothing(db: Db) {
    let server = TestServer::start(db).await;
    let cookie = signed_in(&server).await;
    let id = ask_for_a_key(&server, "Analytical Engines Ltd").await;
    for forged in ["", "forged", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"] {
        let (status, _, page) = send(
            browser()
                .post(server.at(&format!("/console/key-requests/{id}/reject")))
                .header("cookie", &cookie)
                .form(&[("csrf", forged)]),
        )
        .await;
        assert_eq!(status, 403, "{page}");
        assert!(page.contains("CSRF token is wrong"), "{page}");
    }
    // Another session's token is no better.
    let other = signed_in(&server).await;
    let (_, other_page) = get(&server, &other, "/console/key-requests").await;
    let (status, _, _) = send(
        browser()
            .post(server.at(&format!("/console/key-requests/{id}/reject")))
            .header("cookie", &cookie)
            .form(&[("csrf", csrf(&other_page).as_str())]),
    )
    .await;
    assert_eq!(status, 403);
    assert_eq!(
        server
            .count_where("key_requests", "status = 'pending'")
            .await,
        1
    );
    server.stop().await;
}

async fn the_console_is_never_framed_and_runs_no_script(db: Db) {
    let server = TestServer::start(db).await;
    let cookie = signed_in(&server).await;
    for path in [
        "/console/sign-in",
        "/console/",
        "/console/key-requests",
        "/console/nowhere",
    ] {
        let answer = browser()
            .get(server.at(path))
            .header("cookie", &cookie)
            .send()
            .await
            .unwrap();
        let headers = answer.headers();
        assert_eq!(header(headers, "x-frame-options"), Some("DENY"), "{path}");
        let policy = header(headers, "content-security-policy").unwrap_or_default();
        for directive in [
            "default-src 'none'",
            "frame-ancestors 'none'",
            "form-action 'self'",
        ] {
            assert!(policy.contains(directive), "{path}: {policy}");
        }
        assert!(!policy.contains("script-src"), "{path}: {policy}");
        assert_eq!(header(headers, "cache-control"), Some("no-store"), "{path}");
    }
    // Another method: a page too, that says so.
    let (status, content_type, page) = send(browser().delete(server.at("/console/"))).await;
    assert_eq!(
        (status, content_type.as_str()),
        (405, "text/html; charset=utf-8"),
        "{page}"
    );
    assert!(page.contains("Not this way"), "{page}");
    server.stop().await;
}

async fn an_admin_client_signs_in_and_one_without_admin_is_refused(db: Db) {
    let server = TestServer::start(db).await;
    let (id, secret) = server.oauth_client(&[Scope::Admin]).await;
    let answer = sign_in(&server, &[("client_id", &id), ("client_secret", &secret)]).await;
    assert_eq!(answer.status(), 303);
    assert!(header(answer.headers(), "set-cookie").is_some());

    let (id, secret) = server.oauth_client(&[Scope::KeysManage]).await;
    for (secret, refusal) in [(secret.as_str(), "does not hold admin"), ("wrong", "wrong")] {
        let answer = sign_in(&server, &[("client_id", &id), ("client_secret", secret)]).await;
        assert_eq!(answer.status(), 403);
        assert!(header(answer.headers(), "set-cookie").is_none());
        let page = answer.text().await.unwrap();
        assert!(page.contains(refusal), "{page}");
    }
    server.stop().await;
}

async fn the_owner_approves_a_key_request_and_the_key_works(db: Db) {
    let server = TestServer::start(db).await;
    let cookie = signed_in(&server).await;
    let id = ask_for_a_key(&server, "Analytical Engines Ltd").await;
    let (_, dashboard) = get(&server, &cookie, "/console/").await;
    assert!(
        dashboard.contains("<strong>1</strong>key requests waiting"),
        "{dashboard}"
    );
    let (_, page) = get(&server, &cookie, "/console/key-requests").await;
    assert!(page.contains("Analytical Engines Ltd"), "{page}");
    let (status, _, issued) = send(
        browser()
            .post(server.at(&format!("/console/key-requests/{id}/approve")))
            .header("cookie", &cookie)
            .form(&[
                ("csrf", csrf(&page).as_str()),
                ("scope", "context:read"),
                ("scope", "analytics:read"),
            ]),
    )
    .await;
    assert_eq!(status, 200, "{issued}");
    let start = issued.find("<code class=\"key\">").unwrap() + "<code class=\"key\">".len();
    let key = &issued[start..start + issued[start..].find('<').unwrap()];
    // The key works, with the scopes chosen.
    let client = server.portfolio_with_key(Some(key));
    client.get_llm_context().send().await.expect("context:read");
    client
        .get_analytics_summary()
        .send()
        .await
        .expect("analytics:read");
    assert_eq!(
        server
            .count_where("key_requests", "status = 'approved'")
            .await,
        1
    );
    // No scope chosen: refused, and the list says what to do.
    let id = ask_for_a_key(&server, "Second Engines Ltd").await;
    let (status, _, page) = send(
        browser()
            .post(server.at(&format!("/console/key-requests/{id}/approve")))
            .header("cookie", &cookie)
            .form(&[("csrf", csrf(&page).as_str())]),
    )
    .await;
    assert_eq!(status, 400, "{page}");
    assert!(page.contains("choose at least one scope"), "{page}");
    server.stop().await;
}

async fn html_from_outside_shows_as_text(db: Db) {
    let server = TestServer::start(db).await;
    let cookie = signed_in(&server).await;
    ask_for_a_key(&server, "<script>alert(1)</script>").await;
    let (_, page) = get(&server, &cookie, "/console/key-requests").await;
    assert!(!page.contains("<script>"), "{page}");
    assert!(
        page.contains("&lt;script&gt;alert(1)&lt;&#x2f;script&gt;"),
        "{page}"
    );
    server.stop().await;
}

async fn signing_out_ends_the_session(db: Db) {
    let server = TestServer::start(db).await;
    let cookie = signed_in(&server).await;
    let (_, page) = get(&server, &cookie, "/console/").await;
    let answer = browser()
        .post(server.at("/console/sign-out"))
        .header("cookie", &cookie)
        .form(&[("csrf", csrf(&page).as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 303);
    assert_eq!(
        header(answer.headers(), "location"),
        Some("/console/sign-in")
    );
    let (status, _) = get(&server, &cookie, "/console/").await;
    assert_eq!(status, 303, "the session is over");
    server.stop().await;
}

async fn the_owner_finds_exports_and_removes_subscribers(db: Db) {
    let server = TestServer::start(db).await;
    let cookie = signed_in(&server).await;
    for n in 0..55 {
        crate::mail::subscribe(&server, &format!("reader{n:02}@example.test")).await;
    }
    crate::mail::subscribe(&server, "odd_one%@example.test").await;
    let (status, page) = get(&server, &cookie, "/console/subscribers").await;
    assert_eq!(status, 200);
    assert!(page.contains("56 in all · page 1 of 2"), "{page}");
    assert!(
        page.contains("reader49@example.test") && !page.contains("reader50@"),
        "{page}"
    );
    let (_, second) = get(&server, &cookie, "/console/subscribers?page=2").await;
    assert!(second.contains("reader54@example.test"), "{second}");
    // `%` and `_` match themselves.
    let (_, found) = get(&server, &cookie, "/console/subscribers?q=_one%25").await;
    assert!(found.contains("1 matching"), "{found}");
    assert!(found.contains("odd_one%@example.test"), "{found}");
    let (_, found) = get(&server, &cookie, "/console/subscribers?q=READER0").await;
    assert!(found.contains("10 matching"), "{found}");

    let answer = browser()
        .get(server.at("/console/subscribers.csv"))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(
        header(answer.headers(), "content-type"),
        Some("text/csv; charset=utf-8")
    );
    let csv = answer.text().await.unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "id,email,status,created_at,updated_at");
    assert_eq!(lines.len(), 57, "{csv}");
    assert!(
        lines[1].contains(",reader00@example.test,subscribed,"),
        "{csv}"
    );

    // Removing one erases it.
    let id = lines[1].split(',').next().unwrap();
    let (status, _, _) = send(
        browser()
            .post(server.at(&format!("/console/subscribers/{id}/remove")))
            .header("cookie", &cookie)
            .form(&[("csrf", csrf(&page).as_str())]),
    )
    .await;
    assert_eq!(status, 303);
    assert_eq!(
        server
            .count_where("subscribers", "email = 'reader00@example.test'")
            .await,
        0
    );
    server.stop().await;
}

/// Posts a form of the console page `page` to `path`: the status and page.
async fn post_form(
    server: &TestServer,
    cookie: &str,
    page: &str,
    path: &str,
    fields: &[(&str, &str)],
) -> (u16, String) {
    let csrf = csrf(page);
    let mut form = vec![("csrf", csrf.as_str())];
    form.extend_from_slice(fields);
    let (status, _, page) = send(
        browser()
            .post(server.at(path))
            .header("cookie", cookie)
            .form(&form),
    )
    .await;
    (status, page)
}

/// The secret a shown-once page shows.
fn shown(page: &str) -> String {
    let start =
        page.find("<code class=\"key\">").expect("a secret shown") + "<code class=\"key\">".len();
    page[start..start + page[start..].find('<').unwrap()].to_owned()
}

async fn the_owner_makes_rotates_and_revokes_keys_and_clients(db: Db) {
    let server = TestServer::start(db).await;
    let cookie = signed_in(&server).await;
    let (status, page) = get(&server, &cookie, "/console/credentials").await;
    assert_eq!(status, 200, "{page}");
    let (status, made) = post_form(
        &server,
        &cookie,
        &page,
        "/console/keys",
        &[
            ("name", "intranet"),
            ("service", "portfolio"),
            ("scope", "analytics:read"),
        ],
    )
    .await;
    assert_eq!(status, 200, "{made}");
    let key = shown(&made);
    let client = server.portfolio_with_key(Some(&key));
    client
        .get_analytics_summary()
        .send()
        .await
        .expect("the new key works");

    let (_, page) = get(&server, &cookie, "/console/credentials").await;
    assert!(page.contains("intranet"), "{page}");
    let id = key.split('_').nth(1).unwrap();
    assert!(page.contains(id), "{id} in {page}");
    let (status, rotated) = post_form(
        &server,
        &cookie,
        &page,
        &format!("/console/keys/{id}/rotate"),
        &[],
    )
    .await;
    assert_eq!(status, 200, "{rotated}");
    let new_key = shown(&rotated);
    server
        .portfolio_with_key(Some(&new_key))
        .get_analytics_summary()
        .send()
        .await
        .expect("the key that replaces it works");
    let new_id = new_key.split('_').nth(1).unwrap();
    let (status, _) = post_form(
        &server,
        &cookie,
        &page,
        &format!("/console/keys/{new_id}/revoke"),
        &[],
    )
    .await;
    assert_eq!(status, 303);
    let revoked = server
        .portfolio_with_key(Some(&new_key))
        .get_analytics_summary()
        .send()
        .await;
    assert_eq!(revoked.unwrap_err().status().map(|s| s.as_u16()), Some(401));

    // A key with a bad field: the page names it, nothing is made.
    let (status, refused) = post_form(
        &server,
        &cookie,
        &page,
        "/console/keys",
        &[("name", "no scopes")],
    )
    .await;
    assert_eq!(status, 422, "{refused}");

    let (status, made) = post_form(
        &server,
        &cookie,
        &page,
        "/console/clients",
        &[("name", "backend"), ("scope", "keys:manage")],
    )
    .await;
    assert_eq!(status, 200, "{made}");
    let registered = shown(&made);
    let mut lines = registered.lines();
    let client_id = lines
        .next()
        .unwrap()
        .strip_prefix("client_id ")
        .unwrap()
        .to_owned();
    let secret = lines
        .next()
        .unwrap()
        .strip_prefix("client_secret ")
        .unwrap()
        .to_owned();
    let backend = petstore_portfolio_client::portfolio::ClientBuilder::new(&server.url)
        .client_credentials(client_id.clone(), secret.clone())
        .build()
        .unwrap();
    backend
        .list_oauth_clients()
        .send()
        .await
        .expect("the new client works");
    // A new secret: it works, and the old one stops.
    let (status, rotated) = post_form(
        &server,
        &cookie,
        &page,
        &format!("/console/clients/{client_id}/rotate"),
        &[],
    )
    .await;
    assert_eq!(status, 200, "{rotated}");
    let rotated = shown(&rotated);
    let new_secret = rotated
        .lines()
        .nth(1)
        .and_then(|line| line.strip_prefix("client_secret "))
        .unwrap();
    assert_ne!(new_secret, secret);
    let token = |secret: &str| {
        http()
            .post(server.at("/api/oauth/token"))
            .basic_auth(&client_id, Some(secret))
            .form(&[("grant_type", "client_credentials")])
    };
    let (status, _, _) = send(token(new_secret)).await;
    assert_eq!(status, 200, "the new secret works");
    let (status, _, _) = send(token(&secret)).await;
    assert_eq!(status, 401, "the old secret stops");
    let (status, _) = post_form(
        &server,
        &cookie,
        &page,
        &format!("/console/clients/{client_id}/revoke"),
        &[],
    )
    .await;
    assert_eq!(status, 303);
    assert_eq!(
        server
            .count_where(
                "oauth_clients",
                &format!("client_id = '{client_id}' AND revoked_at_ms IS NOT NULL")
            )
            .await,
        1
    );
    server.stop().await;
}

async fn the_owner_writes_previews_saves_and_publishes_a_post_with_notification(db: Db) {
    let server = TestServer::start(db).await;
    let cookie = signed_in(&server).await;
    for reader in ["a@example.test", "b@example.test"] {
        crate::mail::subscribe(&server, reader).await;
    }
    let sent_before = server.wait_for_emails(2).await.len();
    let (_, editor) = get(&server, &cookie, "/console/posts/new").await;
    let post = [
        ("slug", "hello-console"),
        ("title", "Hello from the console"),
        ("summary", "Written in a browser."),
        ("tags", "console, news"),
        ("body", "# Hi\n\n**bold**\n\n<script>alert(1)</script>"),
    ];
    let mut preview = post.to_vec();
    preview.push(("action", "preview"));
    let (status, page) =
        post_form(&server, &cookie, &editor, "/console/posts/drafts", &preview).await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("<h1>Hi</h1>"), "{page}");
    assert!(page.contains("<strong>bold</strong>"), "{page}");
    assert!(!page.contains("<script>alert"), "{page}");

    let mut save = post.to_vec();
    save.push(("action", "save"));
    let (status, _) = post_form(&server, &cookie, &editor, "/console/posts/drafts", &save).await;
    assert_eq!(status, 303);
    // A draft is not public.
    let (status, _, _) = send(http().get(server.at("/api/posts/hello-console"))).await;
    assert_eq!(status, 404);

    let (status, confirm) = get(
        &server,
        &cookie,
        "/console/posts/drafts/hello-console/publish",
    )
    .await;
    assert_eq!(status, 200, "{confirm}");
    assert!(
        confirm.contains("Email it to the 2 subscribers"),
        "{confirm}"
    );
    let (status, done) = post_form(
        &server,
        &cookie,
        &confirm,
        "/console/posts/drafts/hello-console/publish",
        &[("social", "on"), ("notify", "on")],
    )
    .await;
    assert_eq!(status, 200, "{done}");
    assert!(
        done.contains("Emails queued for the subscribers: 2."),
        "{done}"
    );
    assert!(done.contains("a dry run"), "{done}");
    let (status, _, body) = send(http().get(server.at("/api/posts/hello-console"))).await;
    assert_eq!(status, 200, "{body}");
    let emails = server.wait_for_emails(sent_before + 2).await;
    assert!(
        emails
            .iter()
            .filter(|e| e.subject == "New post: Hello from the console")
            .count()
            == 2,
        "{emails:?}"
    );
    // Published: no draft left; a bad slug is refused with the field named.
    let (status, _) = get(&server, &cookie, "/console/posts/drafts/hello-console").await;
    assert_eq!(status, 404);
    let (status, page) = post_form(
        &server,
        &cookie,
        &editor,
        "/console/posts/drafts",
        &[("slug", "Not A Slug"), ("action", "save")],
    )
    .await;
    assert_eq!(status, 422, "{page}");
    assert!(page.contains("slug: lower-case letters"), "{page}");
    server.stop().await;
}

async fn the_owner_reads_contact_messages_escaped_and_marks_them_handled(db: Db) {
    let server = TestServer::start(db).await;
    let cookie = signed_in(&server).await;
    let hostile: types::ContactRequest = serde_json::from_value(json!({
        "name": "<img src=x onerror=alert(1)>",
        "email": "grace@example.test",
        "subject": "<b>urgent</b>",
        "message": "<script>alert(2)</script>\nsecond line",
    }))
    .unwrap();
    let receipt = server
        .portfolio_with_key(Some(end_to_end_tests::keys::ADMIN))
        .submit_contact()
        .body(hostile)
        .send()
        .await
        .unwrap()
        .into_inner();
    let (status, page) = get(&server, &cookie, "/console/contact").await;
    assert_eq!(status, 200, "{page}");
    for raw in ["<img", "<script", "<b>urgent"] {
        assert!(!page.contains(raw), "{raw} in {page}");
    }
    assert!(
        page.contains("&lt;script&gt;alert(2)&lt;&#x2f;script&gt;"),
        "{page}"
    );
    assert!(page.contains("Mark handled"), "{page}");

    let (status, _) = post_form(
        &server,
        &cookie,
        &page,
        &format!("/console/contact/{}/handled", receipt.id),
        &[],
    )
    .await;
    assert_eq!(status, 303);
    let (_, page) = get(&server, &cookie, "/console/contact").await;
    assert!(page.contains("Handled 20"), "{page}");
    assert!(!page.contains("Mark handled"), "{page}");

    // The API's operation: the first time stays; an unknown one is 404.
    let admin = server.portfolio_with_scopes(&[Scope::Admin]).await;
    let listed = admin
        .list_contact_submissions()
        .send()
        .await
        .unwrap()
        .into_inner();
    let first = listed.items[0].handled_at.expect("handled");
    let again = admin
        .mark_contact_submission_handled()
        .id(std::num::NonZeroU64::new(receipt.id.try_into().unwrap()).unwrap())
        .send()
        .await
        .unwrap()
        .into_inner();
    assert_eq!(again.handled_at, Some(first));
    let unknown = admin
        .mark_contact_submission_handled()
        .id(999_999)
        .send()
        .await;
    assert_eq!(unknown.unwrap_err().status().map(|s| s.as_u16()), Some(404));
    server.stop().await;
}

async fn guessing_sign_in_links_is_stopped(db: Db) {
    let server =
        TestServer::start_with(db, |c| c.portfolio.oauth.failed_client_auth_per_minute = 3).await;
    for guess in 0..3 {
        let answer = sign_in(&server, &[("token", &format!("guess-{guess}"))]).await;
        assert_eq!(answer.status(), 403);
    }
    // Past the limit even a good link waits: the guesses are what counts.
    let link = server.console_link().await;
    let answer = sign_in(&server, &[("token", token_of(&link))]).await;
    assert_eq!(answer.status(), 429);
    assert!(header(answer.headers(), "retry-after").is_some());
    assert!(header(answer.headers(), "set-cookie").is_none());
    let page = answer.text().await.unwrap();
    assert!(page.contains("too many failed sign-ins"), "{page}");
    server.stop().await;
}
