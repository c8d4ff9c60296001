//! Swagger UI's Authorize dialog in a real browser (headless Chromium,
//! driven by `swagger_ui.mjs` through playwright-core): the portfolio's API
//! key, the portfolio's client credentials and the pet store's implicit flow
//! (sign-in page in a pop-up), each followed by "Try it out" on a protected
//! operation, which is refused before and succeeds after.
//!
//! Needs Node.js, Chromium (`/usr/bin/chromium`, or `CHROMIUM`) and
//! `npm ci` in `tests/browser`; `.ci/run` installs them. Without them the test
//! says loudly that it is skipped, and fails under CI (`CI=true`).
//!
//! Screenshots of each scenario's end (or of the moment it failed) are kept
//! in `target/tmp/swagger-ui-screenshots/`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use end_to_end_tests::{Db, TestServer, http, keys, send_json};
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
        "SKIPPED swagger_ui_authorize_works_in_a_browser; missing: {}",
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
    let run = tokio::process::Command::new("node")
        .arg(folder.join("swagger_ui.mjs"))
        .current_dir(&folder)
        .env("BASE_URL", &server.url)
        .env("CHROMIUM", &chromium)
        .env("SCREENSHOTS", &screenshots)
        .env("PORTFOLIO_API_KEY", keys::ADMIN)
        .env("OAUTH_CLIENT_ID", &client_id)
        .env("OAUTH_CLIENT_SECRET", &client_secret)
        .env("PETSTORE_USERNAME", USER)
        .env("PETSTORE_PASSWORD", PASSWORD)
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(RUN_TIMEOUT, run)
        .await
        .expect("the browser run ends in time")
        .expect("node starts");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    println!("{stdout}");
    assert!(
        output.status.success(),
        "the browser run failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
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
