//! The pages people use, in a real browser (headless Chromium, driven
//! through playwright-core). Swagger UI's Authorize dialog
//! (`swagger_ui.mjs`): the portfolio's API key, the portfolio's client
//! credentials and the pet store's implicit flow (sign-in page in a pop-up),
//! each followed by "Try it out" on a protected operation, which is refused
//! before and succeeds after. The subscriber pages and the owner's console
//! (`pages.mjs`): a subscriber confirms from the email, opens the
//! unsubscribe link (still subscribed) and presses its button; the owner
//! signs in with a printed link, approves a key request and requeues a
//! failed email.
//!
//! Needs Node.js, Chromium (`/usr/bin/chromium`, or `CHROMIUM`) and
//! `npm ci` in `tests/browser`; `.ci/run` installs them. Without them the test
//! says loudly that it is skipped, and fails under CI (`CI=true`).
//!
//! Screenshots of each scenario's end (or of the moment it failed) are kept
//! in `target/tmp/swagger-ui-screenshots/` and `target/tmp/pages-screenshots/`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use end_to_end_tests::smtp::ReceivedMessage;
use end_to_end_tests::{Db, TestServer, http, keys, send_json, wait_until};
use petstore_portfolio_server::config::{AuthMode, Scope};
use serde_json::json;

/// The whole browser run, three scenarios with their pages and pop-ups.
const RUN_TIMEOUT: Duration = Duration::from_secs(180);

const USER: &str = "browser-user";
const PASSWORD: &str = "browser-password-1";

/// What the test needs that a fresh machine may not have: the browser and
/// the node module. `None` (after a loud note) when something is missing.
fn browser_tools(folder: &Path) -> Option<PathBuf> {
    let chromium = std::env::var_os("CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    let node = std::process::Command::new("node")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let mut missing = Vec::new();
    if !chromium.is_file() {
        missing.push(format!(
            "Chromium at {} (apt-get install chromium, or set CHROMIUM)",
            chromium.display()
        ));
    }
    if !node {
        missing.push("Node.js (node)".to_owned());
    }
    if !folder.join("node_modules/playwright-core").is_dir() {
        missing.push(format!("playwright-core (npm ci in {})", folder.display()));
    }
    if missing.is_empty() {
        return Some(chromium);
    }
    assert!(
        std::env::var("CI").is_err(),
        "the browser test cannot run under CI; missing: {}",
        missing.join(", ")
    );
    // Straight to the file descriptor: the test harness captures eprintln!.
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED the browser tests; missing: {}",
        missing.join(", ")
    );
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn swagger_ui_authorize_works_in_a_browser() {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("browser");
    let Some(chromium) = browser_tools(&folder) else {
        return;
    };
    // One database is enough: what is tested is the pages and the flows.
    let server =
        TestServer::start_with(Db::Sqlite, |c| c.petstore.auth_mode = AuthMode::Enforce).await;
    let (client_id, client_secret) = server.oauth_client(&[Scope::KeysManage]).await;
    let (status, _, body) =
        send_json(server.post_json("/v2/user", json!({"username": USER, "password": PASSWORD})))
            .await;
    assert_eq!(status, 200, "{body}");

    let screenshots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("swagger-ui-screenshots");
    let _ = std::fs::remove_dir_all(&screenshots);
    let stdout = run_node(
        "swagger_ui.mjs",
        &[
            ("BASE_URL", server.url.as_str()),
            ("CHROMIUM", chromium.to_str().unwrap()),
            ("SCREENSHOTS", screenshots.to_str().unwrap()),
            ("PORTFOLIO_API_KEY", keys::ADMIN),
            ("OAUTH_CLIENT_ID", &client_id),
            ("OAUTH_CLIENT_SECRET", &client_secret),
            ("PETSTORE_USERNAME", USER),
            ("PETSTORE_PASSWORD", PASSWORD),
        ],
    )
    .await;
    for scenario in [
        "portfolio-api-key",
        "portfolio-client-credentials",
        "petstore-implicit",
    ] {
        assert!(stdout.contains(&format!("ok {scenario} ")), "{stdout}");
        let png = std::fs::read(screenshots.join(format!("{scenario}.png"))).unwrap();
        assert!(png.starts_with(b"\x89PNG"), "{scenario}.png is a PNG");
    }

    // "Try it out" on addPet sent the document's example pet with the token
    // from the sign-in page: it is stored, under an id the server chose (the
    // example has none, so it overwrites no pet, such as 10 of the sample
    // data).
    let key = server.petstore_key().await;
    let (status, _, pets) = send_json(
        http()
            .get(server.at("/v2/pet/findByStatus?status=available"))
            .basic_auth(USER, Some(PASSWORD)),
    )
    .await;
    assert_eq!(status, 200, "{pets}");
    let doggies: Vec<&serde_json::Value> = pets
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["name"] == "doggie")
        .collect();
    assert_eq!(doggies.len(), 1, "{pets}");
    let (status, _, _) =
        send_json(http().get(server.at("/v2/pet/10")).header("api_key", &key)).await;
    assert_eq!(status, 404, "nothing was written at the old example's id");
    server.stop().await;
}

/// How long the server takes to send an email, at most.
const EMAIL_WAIT: Duration = Duration::from_secs(20);

/// Runs the browser script `script` (in `tests/browser`) with `inputs` in
/// its environment: its output, or the test fails with it.
async fn run_node(script: &str, inputs: &[(&str, &str)]) -> String {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("browser");
    let run = tokio::process::Command::new("node")
        .arg(folder.join(script))
        .current_dir(&folder)
        .envs(inputs.iter().copied())
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(RUN_TIMEOUT, run)
        .await
        .expect("the browser run ends in time")
        .expect("node starts");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    println!("{stdout}");
    assert!(
        output.status.success(),
        "the browser run {script} failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    stdout
}

/// Runs one part of `pages.mjs` from `link`: its output.
async fn run_pages(
    server: &TestServer,
    chromium: &Path,
    screenshots: &Path,
    part: &str,
    link: &str,
) -> String {
    let inputs = [
        ("BASE_URL", server.url.as_str()),
        ("CHROMIUM", chromium.to_str().unwrap()),
        ("SCREENSHOTS", screenshots.to_str().unwrap()),
        ("PART", part),
        ("LINK", link),
    ];
    run_node("pages.mjs", &inputs).await
}

/// The link in `message` to the newsletter's `action`.
fn newsletter_link(server: &TestServer, message: &ReceivedMessage, action: &str) -> String {
    message
        .link(&format!("{}/api/newsletter/{action}?token=", server.url))
        .unwrap_or_else(|| panic!("no {action} link: {message:?}"))
}

async fn subscribe(server: &TestServer, email: &str) {
    let request: petstore_portfolio_client::portfolio::types::SubscribeRequest =
        serde_json::from_value(json!({ "email": email })).unwrap();
    server
        .portfolio()
        .subscribe_newsletter()
        .body(request)
        .send()
        .await
        .unwrap();
}

async fn subscriber_is(server: &TestServer, status: &str) -> bool {
    let condition = format!("email = 'reader@example.test' AND status = '{status}'");
    server.count_where("subscribers", &condition).await == 1
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscriber_pages_and_the_console_work_in_a_browser() {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("browser");
    let Some(chromium) = browser_tools(&folder) else {
        return;
    };
    let Some((server, smtp)) = TestServer::start_with_smtp(Db::Sqlite, |c| {
        c.portfolio.newsletter.double_opt_in = true;
    })
    .await
    else {
        return;
    };
    let screenshots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pages-screenshots");
    let _ = std::fs::remove_dir_all(&screenshots);
    let run = async |part: &str, link: &str| {
        run_pages(&server, &chromium, &screenshots, part, link).await
    };

    // The subscriber, on a phone.
    subscribe(&server, "reader@example.test").await;
    let confirmation = smtp.wait_for(1, EMAIL_WAIT).await.remove(0);
    run(
        "subscriber-confirm",
        &newsletter_link(&server, &confirmation, "confirm"),
    )
    .await;
    assert!(subscriber_is(&server, "subscribed").await);
    let welcome = smtp.wait_for(2, EMAIL_WAIT).await.remove(1);
    let unsubscribe = newsletter_link(&server, &welcome, "unsubscribe");
    run("subscriber-unsubscribe-page", &unsubscribe).await;
    assert!(
        subscriber_is(&server, "subscribed").await,
        "a GET changes nothing"
    );
    run("subscriber-unsubscribe-button", &unsubscribe).await;
    assert!(subscriber_is(&server, "unsubscribed").await);

    // A subscriber for the owner's post to reach (confirmed by a client).
    subscribe(&server, "second@example.test").await;
    let confirmation = smtp.wait_for(3, EMAIL_WAIT).await.remove(2);
    let confirm = newsletter_link(&server, &confirmation, "confirm");
    let (status, _, _) = send_json(http().get(&confirm).header("accept", "application/json")).await;
    assert_eq!(status, 200);
    smtp.wait_for(4, EMAIL_WAIT).await;

    // What waits for the owner: a key request, and an email that failed
    // for good (the SMTP server refuses `reject...` recipients).
    let form: petstore_portfolio_client::portfolio::types::KeyRequestForm =
        serde_json::from_value(json!({
            "name": "Ada Lovelace",
            "organisation": "Analytical Engines Ltd",
            "intended_use": "Show the latest posts on our intranet",
            "expected_volume": "about 500 requests a day",
            "technical_contact": "ada@example.test",
        }))
        .unwrap();
    server
        .portfolio()
        .request_api_key()
        .body(form)
        .send()
        .await
        .unwrap();
    subscribe(&server, "reject-me@example.test").await;
    wait_until(EMAIL_WAIT, "the email to reject-me fails", async || {
        server.count_where("outbox", "status = 'failed'").await == 1
    })
    .await;
    let before = chrono::Utc::now().timestamp_millis();

    run("console-framed", &server.at("/console/sign-in")).await;
    let owner = run("owner", &server.console_link().await).await;
    let key = owner
        .lines()
        .find_map(|line| line.strip_prefix("key "))
        .expect("the key shown once");
    let analytics = server.portfolio_with_key(Some(key));
    analytics
        .get_analytics_summary()
        .send()
        .await
        .expect("the key holds analytics:read");
    assert_eq!(
        server
            .count_where("key_requests", "status = 'approved'")
            .await,
        1
    );
    let requeued = format!("recipient = 'reject-me@example.test' AND created_at_ms >= {before}");
    assert_eq!(server.count_where("outbox", &requeued).await, 1, "requeued");
    // The post is public, and its notification reached the subscriber.
    let (status, _, _) = send_json(http().get(server.at("/api/posts/from-the-console"))).await;
    assert_eq!(status, 200);
    wait_until(EMAIL_WAIT, "the post's email arrives", async || {
        smtp.messages().iter().any(|m| {
            m.rcpt_tos == ["second@example.test"]
                && m.header("Subject") == Some("New post: From the console")
        })
    })
    .await;

    for page in [
        "console-framed",
        "subscriber-confirmed",
        "subscriber-unsubscribe-page",
        "subscriber-unsubscribed",
        "owner-dashboard",
        "owner-key-requests",
        "owner-key-issued",
        "owner-post-preview",
        "owner-post-confirm",
        "owner-post-published",
        "owner-failed-emails",
    ] {
        let png = std::fs::read(screenshots.join(format!("{page}.png"))).unwrap();
        assert!(png.starts_with(b"\x89PNG"), "{page}.png is a PNG");
    }
    server.stop().await;
}
