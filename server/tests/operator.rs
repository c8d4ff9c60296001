//! The binary under an operator's hands: `doctor` on a broken setup,
//! `migrate --dry-run` and the backup a migration takes first, a service
//! turned off, the production profile, a start whose port is taken, and
//! errors as JSON under `--json`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output};

use end_to_end_tests::process::ServerProcess;
use end_to_end_tests::{Db, FreshDatabase, http};
use serde_json::Value;

const BINARY: &str = env!("CARGO_BIN_EXE_petstore-portfolio");

/// `petstore-portfolio <args>` with only `env` from the server's variables.
fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(BINARY);
    command.args(args);
    for (name, _) in std::env::vars() {
        if name.starts_with("PETSTORE_PORTFOLIO_") {
            command.env_remove(name);
        }
    }
    command.env("RUST_LOG", "warn");
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().expect("the binary runs")
}

fn stdout_json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

fn data_dir_arg(dir: &Path) -> String {
    dir.to_string_lossy().into_owned()
}

#[test]
fn doctor_reports_each_failing_part_and_exits_non_zero() {
    let folder = tempfile::tempdir().unwrap();
    // A file where the data directory should be.
    let not_a_dir = folder.path().join("data");
    std::fs::write(&not_a_dir, "a file").unwrap();
    let config = folder.path().join("config.toml");
    std::fs::write(
        &config,
        "database_url = \"postgres://nobody@127.0.0.1:1/none\"\n\
         redis_url = \"redis://127.0.0.1:1\"\n\
         tls_cert = \"/nonexistent/cert.pem\"\n\
         tls_key = \"/nonexistent/key.pem\"\n\
         [mail.smtp]\nhost = \"127.0.0.1\"\nport = 1\ntls = \"none\"\ntimeout_secs = 2\n",
    )
    .unwrap();
    let args = [
        "--config",
        config.to_str().unwrap(),
        "--data-dir",
        not_a_dir.to_str().unwrap(),
        "doctor",
    ];
    let output = run(&args, &[]);
    assert_eq!(output.status.code(), Some(1));
    let text = String::from_utf8_lossy(&output.stdout);
    for part in ["data directory", "database", "mail", "redis", "certificate"] {
        assert!(
            text.lines()
                .any(|line| line.starts_with(&format!("FAIL\t{part}\t"))),
            "{part} not reported failing:\n{text}"
        );
    }
    assert!(text.contains("ok  \tconfiguration\t"), "{text}");
    assert!(text.contains("5 check(s) failed"), "{text}");
    // The password of a URL never shows; the same findings as JSON.
    let output = run(&[&args[..], &["--json"]].concat(), &[]);
    assert_eq!(output.status.code(), Some(1));
    let report = stdout_json(&output);
    assert_eq!(report["ok"], false);
    let failed: Vec<&str> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["ok"] == false)
        .map(|c| c["check"].as_str().unwrap())
        .collect();
    assert_eq!(
        failed,
        ["data directory", "database", "mail", "redis", "certificate"]
    );

    // A configuration that cannot be read is the one finding.
    let output = run(
        &["doctor"],
        &[("PETSTORE_PORTFOLIO_PETSTORE__AUTH_MODE", "ajar")],
    );
    assert_eq!(output.status.code(), Some(1));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.starts_with("FAIL\tconfiguration\t"), "{text}");
    assert!(text.to_lowercase().contains("auth_mode"), "{text}");
}

#[test]
fn doctor_passes_a_working_setup() {
    let folder = tempfile::tempdir().unwrap();
    let cert = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
    let (cert_file, key_file) = (folder.path().join("c.pem"), folder.path().join("k.pem"));
    std::fs::write(&cert_file, cert.cert.pem()).unwrap();
    std::fs::write(&key_file, cert.signing_key.serialize_pem()).unwrap();
    let data = folder.path().join("data");
    // What a running server is writing: the doctor leaves it alone.
    let half_written = data.join("outbox").join(".outbox-1.eml.tmp");
    std::fs::create_dir_all(half_written.parent().unwrap()).unwrap();
    std::fs::write(&half_written, "half").unwrap();
    let output = run(
        &[
            "--data-dir",
            &data_dir_arg(&data),
            "doctor",
            "--tls-cert",
            cert_file.to_str().unwrap(),
            "--tls-key",
            key_file.to_str().unwrap(),
            "--json",
        ],
        &[],
    );
    let report = stdout_json(&output);
    assert!(output.status.success(), "{report}");
    let certificate = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "certificate")
        .unwrap();
    assert!(
        certificate["detail"]
            .as_str()
            .unwrap()
            .contains("valid until"),
        "{certificate}"
    );
    assert!(half_written.exists(), "doctor removed a file being written");
}

#[test]
fn migrate_dry_run_lists_what_is_pending_and_changes_nothing() {
    let folder = tempfile::tempdir().unwrap();
    let data = data_dir_arg(folder.path());
    let dry = run(
        &["--data-dir", &data, "migrate", "--dry-run", "--json"],
        &[],
    );
    assert!(
        dry.status.success(),
        "{}",
        String::from_utf8_lossy(&dry.stderr)
    );
    let dry = stdout_json(&dry);
    let pending = dry["pending"].as_array().unwrap();
    assert!(pending.len() >= 17, "{dry}");
    assert_eq!(dry["applied"], serde_json::json!([]));
    assert_eq!(dry["applied_now"], serde_json::json!([]));
    // Nothing applied: asked again, the same.
    let again = stdout_json(&run(
        &["--data-dir", &data, "migrate", "--dry-run", "--json"],
        &[],
    ));
    assert_eq!(again["pending"], dry["pending"]);
    // The text names each pending migration.
    let text = run(&["--data-dir", &data, "migrate", "--dry-run"], &[]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("pending\t20261128000017\tcontact handled"),
        "{text}"
    );

    let applied = stdout_json(&run(&["--data-dir", &data, "migrate", "--json"], &[]));
    assert_eq!(applied["applied_now"], dry["pending"]);
    let after = stdout_json(&run(
        &["--data-dir", &data, "migrate", "--dry-run", "--json"],
        &[],
    ));
    assert_eq!(after["pending"], serde_json::json!([]));
    // A fresh database had nothing to back up.
    assert!(!folder.path().join("backups").exists());
}

#[tokio::test]
async fn a_migration_of_a_database_with_data_backs_it_up_first_and_keeps_the_newest() {
    use sqlx::{Connection as _, Executor as _};
    let folder = tempfile::tempdir().unwrap();
    let data = data_dir_arg(folder.path());
    let env = [("PETSTORE_PORTFOLIO_BACKUPS_BEFORE_MIGRATION", "2")];
    assert!(
        run(&["--data-dir", &data, "migrate"], &env)
            .status
            .success()
    );
    let file = folder.path().join("petstore-portfolio.db");
    for round in 1..=3 {
        // As the database was before the last migration.
        let mut db = sqlx::SqliteConnection::connect(&format!("sqlite://{}", file.display()))
            .await
            .unwrap();
        db.execute(
            "ALTER TABLE contact_submissions DROP COLUMN handled_at; \
             DELETE FROM _sqlx_migrations WHERE version = 20261128000017;",
        )
        .await
        .unwrap();
        db.close().await.unwrap();
        let migrated = run(&["--data-dir", &data, "migrate", "--json"], &env);
        assert!(
            migrated.status.success(),
            "{}",
            String::from_utf8_lossy(&migrated.stderr)
        );
        let migrated = stdout_json(&migrated);
        assert_eq!(migrated["applied_now"][0]["version"], 20261128000017_i64);
        let copies: Vec<String> = std::fs::read_dir(folder.path().join("backups"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(copies.len(), round.min(2), "{copies:?}");
        assert!(
            copies
                .iter()
                .all(|c| c.starts_with("before-20261128000017-")),
            "{copies:?}"
        );
    }
    // A copy is a whole database of the version before: `restore` takes it.
    let copy = std::fs::read_dir(folder.path().join("backups"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let restored = run(
        &[
            "--data-dir",
            &data,
            "restore",
            "--from",
            copy.to_str().unwrap(),
        ],
        &[],
    );
    assert!(
        restored.status.success(),
        "{}",
        String::from_utf8_lossy(&restored.stderr)
    );
}

/// The server with `env` added, as the operator starts it.
fn start(database: &FreshDatabase, env: &[(&str, &str)]) -> ServerProcess {
    ServerProcess::start(Path::new(BINARY), database, &[], env)
}

async fn status_of(url: String) -> u16 {
    http().get(url).send().await.unwrap().status().as_u16()
}

#[tokio::test]
async fn with_the_pet_store_off_v2_and_its_document_are_not_found() {
    let database = FreshDatabase::create(Db::Sqlite).await;
    let server = start(
        &database,
        &[("PETSTORE_PORTFOLIO_PETSTORE__ENABLED", "false")],
    );
    let response = http().get(server.at("/v2/pet/1")).send().await.unwrap();
    assert_eq!(response.status(), 404);
    let body: Value = response.json().await.unwrap();
    assert!(body["error"]["message"].is_string(), "{body}");
    assert_eq!(status_of(server.at("/v2/store/inventory")).await, 404);
    assert_eq!(status_of(server.at("/openapi/petstore.json")).await, 404);
    assert_eq!(
        status_of(server.at("/openapi/petstore.client.json")).await,
        404
    );
    // The portfolio and its document are served.
    assert_eq!(status_of(server.at("/api/site-info")).await, 200);
    assert_eq!(status_of(server.at("/openapi/portfolio.json")).await, 200);
    let ui = http().get(server.at("/docs/")).send().await.unwrap();
    let page = ui.text().await.unwrap();
    assert!(!page.contains("petstore.json"), "{page}");
    server.terminate();

    // The other way round: the health checks stay for the probes.
    let database = FreshDatabase::create(Db::Sqlite).await;
    let server = start(
        &database,
        &[("PETSTORE_PORTFOLIO_PORTFOLIO__ENABLED", "false")],
    );
    assert_eq!(status_of(server.at("/api/site-info")).await, 404);
    assert_eq!(status_of(server.at("/console/")).await, 404);
    assert_eq!(status_of(server.at("/openapi/portfolio.json")).await, 404);
    assert_eq!(status_of(server.at("/api/health")).await, 200);
    assert_eq!(status_of(server.at("/api/health/ready")).await, 200);
    assert_eq!(status_of(server.at("/v2/store/inventory")).await, 200);
    server.terminate();
}

#[tokio::test]
async fn the_production_profile_closes_the_demo() {
    let database = FreshDatabase::create(Db::Sqlite).await;
    let server = start(&database, &[("PETSTORE_PORTFOLIO_PROFILE", "production")]);
    // No sample users, no sample pets, and nothing without credentials.
    let pet = serde_json::json!({"name": "Rex", "photoUrls": []});
    let added = http()
        .post(server.at("/v2/pet"))
        .json(&pet)
        .send()
        .await
        .unwrap();
    assert_eq!(added.status(), 401);
    assert_eq!(status_of(server.at("/v2/pet/1")).await, 401);
    let login = http()
        .get(server.at("/v2/user/login?username=user1&password=XXXXXXXXXXX"))
        .send()
        .await
        .unwrap();
    assert_eq!(login.status(), 400, "the sample user does not exist");
    // A rate limit, announced; no CORS for an origin not named.
    let listed = http()
        .get(server.at("/api/site-info"))
        .header("Origin", "https://elsewhere.example")
        .send()
        .await
        .unwrap();
    assert_eq!(listed.status(), 200);
    assert!(
        listed
            .headers()
            .get("access-control-allow-origin")
            .is_none(),
        "{:?}",
        listed.headers()
    );
    let store = http()
        .get(server.at("/v2/store/inventory"))
        .send()
        .await
        .unwrap();
    assert!(
        store.headers().contains_key("x-ratelimit-limit"),
        "{:?}",
        store.headers()
    );
    server.terminate();

    // What the profile requires cannot be undone by a lower layer.
    let output = run(
        &[
            "--data-dir",
            &data_dir_arg(database.data_dir()),
            "--bind",
            "127.0.0.1:0",
        ],
        &[
            ("PETSTORE_PORTFOLIO_PROFILE", "production"),
            ("PETSTORE_PORTFOLIO_PETSTORE__AUTH_MODE", "open"),
        ],
    );
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("petstore.auth_mode"), "{stderr}");
}

#[test]
fn a_start_whose_port_is_taken_leaves_the_database_untouched() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = taken.local_addr().unwrap().to_string();
    let folder = tempfile::tempdir().unwrap();
    let output = run(
        &[
            "--data-dir",
            &data_dir_arg(folder.path()),
            "--bind",
            &address,
        ],
        &[],
    );
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!("cannot listen on {address}")),
        "{stderr}"
    );
    assert!(
        !folder.path().join("petstore-portfolio.db").exists(),
        "the database was opened before the port"
    );
}

#[test]
fn errors_are_json_under_json() {
    let folder = tempfile::tempdir().unwrap();
    let data = data_dir_arg(folder.path());
    let output = run(
        &["--data-dir", &data, "keys", "revoke", "nope", "--json"],
        &[],
    );
    assert!(!output.status.success());
    assert!(output.stdout.is_empty());
    let error: Value = serde_json::from_slice(&output.stderr)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stderr)));
    assert!(
        error["error"]["message"].as_str().unwrap().contains("nope"),
        "{error}"
    );
    // The command line's own errors too.
    let output = run(&["keys", "list", "--json", "--bogus"], &[]);
    assert_eq!(output.status.code(), Some(2));
    let error: Value = serde_json::from_slice(&output.stderr).unwrap();
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("--bogus"),
        "{error}"
    );
    // The server's flags are not the other commands'.
    let output = run(&["keys", "list", "--bind", "127.0.0.1:1"], &[]);
    assert_eq!(output.status.code(), Some(2));
    let help = run(&["keys", "list", "--help"], &[]);
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        !help.contains("--bind") && !help.contains("--tls-cert"),
        "{help}"
    );
    assert!(help.contains("--data-dir"), "{help}");
}

#[test]
fn keys_list_names_the_configuration_files_keys() {
    let folder = tempfile::tempdir().unwrap();
    let config = folder.path().join("config.toml");
    std::fs::write(
        &config,
        "[[portfolio.api_keys]]\nname = \"site\"\nkey = \"s3cret-site-key-0123456789\"\n\
         scopes = [\"context:read\"]\n",
    )
    .unwrap();
    let args = [
        "--config",
        config.to_str().unwrap(),
        "--data-dir",
        folder.path().to_str().unwrap(),
        "keys",
        "list",
    ];
    let listed = run(&[&args[..], &["--json"]].concat(), &[]);
    assert!(listed.status.success());
    assert_eq!(
        stdout_json(&listed),
        serde_json::json!([{
            "service": "portfolio",
            "name": "site",
            "scopes": ["context:read"],
            "source": "configuration",
        }])
    );
    let text = run(&args, &[]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("(configuration file)\tportfolio\tsite\tcontext:read"),
        "{text}"
    );
    assert!(!text.contains("s3cret"), "{text}");
}
