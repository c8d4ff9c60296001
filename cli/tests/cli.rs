//! The command line against the real server (the test kit's), from a
//! shell with nothing but environment variables: each test runs the
//! binary as a user would.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Output;

use petstore_portfolio_testkit::{Scope, TINY_PNG, TestServer};

/// Runs the CLI with `args` and only the environment `env` (and `PATH`).
async fn cli(env: &[(&str, &str)], args: &[&str]) -> Output {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_petstore-portfolio-cli"));
    command.env_clear().args(args);
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().await.expect("the CLI runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn json(output: &Output) -> serde_json::Value {
    assert!(output.status.success(), "{}", stderr(output));
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", stdout(output)))
}

fn write(dir: &Path, name: &str, contents: impl AsRef<[u8]>) -> String {
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path.display().to_string()
}

#[tokio::test]
async fn a_pet_is_added_and_given_an_image() {
    let server = TestServer::builder()
        .without_sample_data()
        .start()
        .await
        .unwrap();
    let files = tempfile::tempdir().unwrap();
    let env = [("PETSTORE_PORTFOLIO_URL", server.url())];
    let pet = write(
        files.path(),
        "pet.json",
        r#"{"name": "Rex", "photoUrls": []}"#,
    );
    let added = json(&cli(&env, &["petstore", "add-pet", "--json-body", &pet]).await);
    assert_eq!(added["name"], "Rex");
    let id = added["id"].as_u64().expect("an id").to_string();

    let image = write(files.path(), "rex.png", TINY_PNG);
    let uploaded = cli(
        &env,
        &["petstore", "upload-file", "--pet-id", &id, "--file", &image],
    )
    .await;
    assert_eq!(json(&uploaded)["code"], 200);
    let shown = json(&cli(&env, &["petstore", "get-pet-by-id", "--pet-id", &id]).await);
    let photos = shown["photoUrls"].as_array().unwrap();
    assert_eq!(photos.len(), 1, "{shown}");
}

#[tokio::test]
async fn a_missing_pet_is_one_line_on_stderr_and_exit_code_4() {
    let server = TestServer::start().await;
    let env = [("PETSTORE_PORTFOLIO_URL", server.url())];
    let missing = cli(&env, &["petstore", "get-pet-by-id", "--pet-id", "999"]).await;
    assert_eq!(missing.status.code(), Some(4));
    assert!(missing.stdout.is_empty(), "{}", stdout(&missing));
    assert_eq!(
        stderr(&missing),
        "petstore-portfolio-cli: 404 NOT_FOUND: pet 999 not found\n"
    );

    // Without the server's address: the variable is named, exit code 2.
    let nowhere = cli(&[], &["petstore", "get-inventory"]).await;
    assert_eq!(nowhere.status.code(), Some(2));
    assert!(
        stderr(&nowhere).contains("PETSTORE_PORTFOLIO_URL"),
        "{}",
        stderr(&nowhere)
    );
}

#[tokio::test]
async fn every_subscriber_is_listed_with_all_and_a_post_is_published() {
    let server = TestServer::start().await;
    for name in ["ada", "grace", "edsger"] {
        server
            .portfolio()
            .subscribe_newsletter()
            .body(
                petstore_portfolio_client::portfolio::types::SubscribeRequest {
                    email: format!("{name}@example.test").parse().unwrap(),
                },
            )
            .send()
            .await
            .unwrap();
    }
    let (id, secret) = server.oauth_client(&[Scope::Admin]).await;
    let env = [
        ("PETSTORE_PORTFOLIO_URL", server.url()),
        ("PORTFOLIO_CLIENT_ID", id.as_str()),
        ("PORTFOLIO_CLIENT_SECRET", secret.as_str()),
    ];
    let one_page = json(&cli(&env, &["portfolio", "list-subscribers", "--per-page", "2"]).await);
    assert_eq!(one_page["items"].as_array().unwrap().len(), 2, "{one_page}");
    let all = json(
        &cli(
            &env,
            &["--all", "portfolio", "list-subscribers", "--per-page", "2"],
        )
        .await,
    );
    let emails: Vec<&str> = all
        .as_array()
        .expect("every subscriber, as one list")
        .iter()
        .filter_map(|s| s["email"].as_str())
        .collect();
    assert_eq!(emails.len(), 3, "{all}");

    let not_paged = cli(&env, &["--all", "portfolio", "get-site-info"]).await;
    assert_eq!(not_paged.status.code(), Some(2));
    assert!(stderr(&not_paged).contains("not a paged list"));

    let files = tempfile::tempdir().unwrap();
    let post = write(
        files.path(),
        "post.json",
        r#"{"slug": "hello-cli", "title": "Hello", "summary": "From the command line",
            "body": "It works.", "tags": ["cli"], "published_at": "2026-11-28T12:00:00Z"}"#,
    );
    let published = json(&cli(&env, &["portfolio", "create-post", "--json-body", &post]).await);
    assert_eq!(published["slug"], "hello-cli");
    let public = server
        .portfolio()
        .get_post()
        .slug("hello-cli")
        .send()
        .await
        .unwrap();
    assert_eq!(public.title.as_str(), "Hello");
}

#[tokio::test]
async fn a_dry_run_prints_curl_with_the_credentials_redacted_and_sends_nothing() {
    let server = TestServer::start().await;
    let (id, secret) = server.oauth_client(&[Scope::Admin]).await;
    let env = [
        ("PETSTORE_PORTFOLIO_URL", server.url()),
        ("PORTFOLIO_CLIENT_ID", id.as_str()),
        ("PORTFOLIO_CLIENT_SECRET", secret.as_str()),
    ];
    let files = tempfile::tempdir().unwrap();
    let post = write(
        files.path(),
        "post.json",
        r#"{"slug": "dry", "title": "Dry", "summary": "Not sent", "body": "-",
            "tags": [], "published_at": "2026-11-28T12:00:00Z"}"#,
    );
    let dry = cli(
        &env,
        &[
            "--dry-run",
            "portfolio",
            "create-post",
            "--json-body",
            &post,
        ],
    )
    .await;
    assert!(dry.status.success(), "{}", stderr(&dry));
    let curl = stdout(&dry);
    assert!(
        curl.starts_with(&format!("curl -X POST '{}/api/admin/posts'", server.url())),
        "{curl}"
    );
    assert!(
        curl.contains("-H 'authorization: Bearer REDACTED'"),
        "{curl}"
    );
    assert!(curl.contains("-H 'idempotency-key: "), "{curl}");
    assert!(curl.contains(r#""slug":"dry""#), "{curl}");
    assert!(!curl.contains(&secret), "{curl}");
    let missing = server.portfolio().get_post().slug("dry").send().await;
    assert!(missing.unwrap_err().is_not_found(), "nothing was sent");
}
