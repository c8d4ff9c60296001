//! No secret in clear anywhere the server writes: a whole run of the real
//! binary and its CLI, logging everything (`RUST_LOG=debug`), uses every
//! kind of credential both services know, right and wrong, then its logs,
//! its database and its emails are searched for each one. The one place a
//! secret may appear is the email that hands an approved key to its owner.

use std::path::Path;
use std::process::{Command, Stdio};

use end_to_end_tests::process::ServerProcess;
use end_to_end_tests::{Db, FreshDatabase, http, on_every_database, send, send_json};
use reqwest::header::LOCATION;
use serde_json::{Value, json};

on_every_database!(no_secret_reaches_the_logs_the_database_or_the_emails);

/// A secret the run used, and what it is (for the failure message).
struct Secret {
    what: &'static str,
    value: String,
}

/// Runs the CLI with `args` and `--json` on the database, logging at debug
/// level into `log`; returns what it printed.
fn cli(database: &FreshDatabase, config: &Path, log: &mut String, args: &[&str]) -> Value {
    let output = Command::new(env!("CARGO_BIN_EXE_petstore-portfolio"))
        .args(args)
        .arg("--json")
        .env("PETSTORE_PORTFOLIO_DATABASE_URL", &database.url)
        .env("PETSTORE_PORTFOLIO_DATA_DIR", database.data_dir())
        .env("PETSTORE_PORTFOLIO_CONFIG", config)
        .env("RUST_LOG", "debug")
        .output()
        .expect("the binary runs");
    log.push_str(&String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "{args:?} failed: {log}");
    serde_json::from_slice(&output.stdout).expect("JSON on stdout")
}

fn text(value: &Value, pointer: &str) -> String {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no {pointer} in {value}"))
        .to_owned()
}

/// The same secret with its last character changed: what a typo or a guess
/// sends.
fn off_by_one(secret: &str) -> String {
    let mut changed = secret.to_owned();
    let last = changed.pop().expect("a secret is not empty");
    changed.push(if last == 'A' { 'B' } else { 'A' });
    changed
}

/// `user:password` as HTTP Basic sends it.
fn basic(user: &str, password: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
}

/// Everything the database holds, as text: every row of every table.
///
/// Read through SQL, as whoever gets hold of the database reads it. (The
/// files may keep the bytes of a row deleted or changed a moment ago, in free
/// pages, the WAL or dead tuples, until they are reused or vacuumed.)
async fn database_text(database: &FreshDatabase) -> String {
    let mut text = String::new();
    let tables = if database.url.starts_with("sqlite:") {
        let pool = sqlx::SqlitePool::connect(&database.url).await.unwrap();
        let tables: Vec<String> =
            sqlx::query_scalar("SELECT name FROM sqlite_master WHERE type = 'table'")
                .fetch_all(&pool)
                .await
                .unwrap();
        for table in &tables {
            let columns: Vec<String> =
                sqlx::query_scalar(&format!("SELECT name FROM pragma_table_info('{table}')"))
                    .fetch_all(&pool)
                    .await
                    .unwrap();
            let row = columns
                .iter()
                .map(|c| format!("quote(\"{c}\")"))
                .collect::<Vec<_>>()
                .join(" || ',' || ");
            let rows: Vec<String> = sqlx::query_scalar(&format!("SELECT {row} FROM \"{table}\""))
                .fetch_all(&pool)
                .await
                .unwrap();
            text.push_str(&rows.join("\n"));
        }
        pool.close().await;
        tables
    } else {
        let pool = sqlx::PgPool::connect(&database.url).await.unwrap();
        let tables: Vec<String> = sqlx::query_scalar(
            "SELECT table_name::text FROM information_schema.tables WHERE table_schema = current_schema()",
        )
        .fetch_all(&pool)
        .await
        .unwrap();
        for table in &tables {
            let rows: Vec<String> =
                sqlx::query_scalar(&format!("SELECT row_to_json(t)::text FROM \"{table}\" t"))
                    .fetch_all(&pool)
                    .await
                    .unwrap();
            text.push_str(&rows.join("\n"));
        }
        pool.close().await;
        tables
    };
    assert!(tables.len() > 5, "the tables were found: {tables:?}");
    assert!(text.contains("keeper"), "the rows were read");
    text
}

/// Every email the server wrote (`.eml` files, the default without SMTP),
/// by file name.
fn emails(folder: &Path) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(folder).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(emails(&path));
        } else if path.extension().is_some_and(|e| e == "eml") {
            found.push((
                path.display().to_string(),
                std::fs::read_to_string(&path).unwrap(),
            ));
        }
    }
    found
}

async fn no_secret_reaches_the_logs_the_database_or_the_emails(db: Db) {
    let database = FreshDatabase::create(db).await;
    let outside = tempfile::tempdir().unwrap();
    let config_key = "cfg-key-8c1d0f5e2b7a4d93a6e1";
    let config = outside.path().join("server.toml");
    std::fs::write(
        &config,
        format!(
            "[[portfolio.api_keys]]\nname = \"from the file\"\nkey = \"{config_key}\"\nscopes = [\"admin\"]\n\n\
             [petstore]\nauth_mode = \"enforce\"\n"
        ),
    )
    .unwrap();
    let mut secrets = vec![Secret {
        what: "a key from the configuration file",
        value: config_key.to_owned(),
    }];
    let mut log = String::new();

    // The operator's CLI: a portfolio key, a pet store key, an OAuth client.
    let mut operator = |args: &[&str]| cli(&database, &config, &mut log, args);
    let cli_key = text(
        &operator(&["keys", "create", "--name", "cli", "--scope", "admin"]),
        "/key",
    );
    let petstore_key = text(
        &operator(&["keys", "create", "--name", "shop", "--service", "petstore"]),
        "/key",
    );
    let client = operator(&["clients", "create", "--name", "cli", "--scope", "admin"]);
    let (client_id, client_secret) = (
        text(&client, "/client/client_id"),
        text(&client, "/client_secret"),
    );

    let log_file = outside.path().join("server.log");
    let mut command = Command::new(env!("CARGO_BIN_EXE_petstore-portfolio"));
    command
        .args(["--bind", "127.0.0.1:0", "--database-url", &database.url])
        .arg("--data-dir")
        .arg(database.data_dir())
        .arg("--config")
        .arg(&config)
        .env("RUST_LOG", "debug")
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&log_file).unwrap());
    let server = ServerProcess::spawn(command);
    let http = http();
    let get = |path: &str| http.get(server.at(path));

    // Portfolio keys: right, wrong by one character, and in the query string.
    for key in [config_key, &cli_key] {
        let (status, _, body) = send(get("/api/llm-context").header("x-api-key", key)).await;
        assert_eq!(status, 200, "{body}");
        let (status, _, body) =
            send(get("/api/llm-context").header("x-api-key", off_by_one(key))).await;
        assert_eq!(status, 401, "{body}");
        let (status, _, body) = send(get(&format!("/api/llm-context?api_key={key}"))).await;
        assert_eq!(status, 401, "{body}");
    }

    // OAuth: a token by HTTP Basic, one by the form, a wrong secret, a revocation.
    let token_by = |form: Vec<(&'static str, String)>, basic: Option<(&str, &str)>| {
        let mut request = http.post(server.at("/api/oauth/token")).form(&form);
        if let Some((id, secret)) = basic {
            request = request.basic_auth(id, Some(secret));
        }
        send_json(request)
    };
    let grant = || vec![("grant_type", "client_credentials".to_owned())];
    let (status, _, issued) = token_by(grant(), Some((&client_id, &client_secret))).await;
    assert_eq!(status, 200, "{issued}");
    let token = text(&issued, "/access_token");
    let mut form = grant();
    form.push(("client_id", client_id.clone()));
    form.push(("client_secret", client_secret.clone()));
    let (status, _, issued) = token_by(form, None).await;
    assert_eq!(status, 200, "{issued}");
    let revoked_token = text(&issued, "/access_token");
    let wrong_secret = off_by_one(&client_secret);
    let (status, _, refused) = token_by(grant(), Some((&client_id, &wrong_secret))).await;
    assert_eq!(status, 401, "{refused}");
    let (status, _, body) = send(
        http.post(server.at("/api/oauth/revoke"))
            .basic_auth(&client_id, Some(&client_secret))
            .form(&[("token", &revoked_token)]),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (status, _, body) = send(get("/api/admin/subscribers").bearer_auth(&revoked_token)).await;
    assert_eq!(status, 401, "{body}");
    let (status, _, body) = send(get("/api/admin/subscribers").bearer_auth(&token)).await;
    assert_eq!(status, 200, "{body}");

    // A key request, approved (the key is emailed) and a key rotated.
    let (status, _, asked) = send_json(http.post(server.at("/api/key-requests")).json(&json!({
        "name": "Ada", "organisation": "Acme", "intended_use": "a dashboard",
        "expected_volume": "little", "technical_contact": "ada@example.test"
    })))
    .await;
    assert_eq!(status, 202, "{asked}");
    let request_id = text(&asked, "/id");
    let (status, _, approved) = send_json(
        http.post(server.at(&format!("/api/admin/key-requests/{request_id}/approve")))
            .bearer_auth(&token)
            .json(&json!({"scopes": ["context:read"]})),
    )
    .await;
    assert_eq!(status, 200, "{approved}");
    let emailed_key = text(&approved, "/key");
    let listed = cli(&database, &config, &mut log, &["keys", "list"]);
    let cli_key_id = listed
        .as_array()
        .and_then(|keys| keys.iter().find(|key| key["name"] == "cli"))
        .map(|key| text(key, "/id"))
        .unwrap_or_else(|| panic!("the CLI's key in {listed}"));
    let (status, _, rotated) = send_json(
        http.post(server.at(&format!("/api/admin/api-keys/{cli_key_id}/rotate")))
            .bearer_auth(&token),
    )
    .await;
    assert_eq!(status, 200, "{rotated}");
    let rotated_key = text(&rotated, "/new/key");
    for key in [&emailed_key, &rotated_key] {
        end_to_end_tests::wait_until(super::WAIT, "the server takes the key", async || {
            let (status, _, _) = send(get("/api/llm-context").header("x-api-key", key)).await;
            status == 200
        })
        .await;
    }

    // The pet store: a user's password (sign-up, login, Basic, the sign-in
    // page, a wrong one), its session, the implicit flow's token, a key.
    let (user, password) = ("keeper", "pw-9d2e7c41b8f0a365");
    let (status, _, body) = send_json(http.post(server.at("/v2/user")).json(&json!({
        "username": user, "password": password
    })))
    .await;
    assert_eq!(status, 200, "{body}");
    let (status, _, session) = send_json(get(&format!(
        "/v2/user/login?username={user}&password={password}"
    )))
    .await;
    assert_eq!(status, 200, "{session}");
    let session = session.as_str().expect("a session token").to_owned();
    let wrong_password = off_by_one(password);
    let (status, _, body) = send(get(&format!(
        "/v2/user/login?username={user}&password={wrong_password}"
    )))
    .await;
    assert_eq!(status, 400, "{body}");
    let pets = "/v2/pet/findByStatus?status=available";
    let (status, _, body) = send(get(pets).bearer_auth(&session)).await;
    assert_eq!(status, 200, "{body}");
    let (status, _, body) = send(get(pets).basic_auth(user, Some(password))).await;
    assert_eq!(status, 200, "{body}");
    let (status, _, body) = send(get(pets).basic_auth(user, Some(&wrong_password))).await;
    assert_eq!(status, 401, "{body}");
    let signed_in = end_to_end_tests::post_sign_in(
        &server.url,
        &[
            ("response_type", "token"),
            ("client_id", "tests"),
            ("scope", "read:pets write:pets"),
            ("username", user),
            ("password", password),
            ("action", "sign_in"),
        ],
    )
    .await;
    assert_eq!(signed_in.status().as_u16(), 303);
    let location = signed_in.headers()[LOCATION].to_str().unwrap().to_owned();
    let implicit_token = location
        .split(['#', '&'])
        .find_map(|part| part.strip_prefix("access_token="))
        .expect("a token in the fragment")
        .to_owned();
    let (status, _, body) = send(get(pets).bearer_auth(&implicit_token)).await;
    assert_eq!(status, 200, "{body}");
    let (status, _, body) = send(get("/v2/store/inventory").header("api_key", &petstore_key)).await;
    assert_eq!(status, 200, "{body}");
    let (status, _, body) = send(get("/v2/user/logout").bearer_auth(&session)).await;
    assert_eq!(status, 200, "{body}");

    // Stopped gracefully, so that every log line and write is out.
    server.terminate();
    log.push_str(&std::fs::read_to_string(&log_file).unwrap());
    assert!(
        log.contains("DEBUG"),
        "the run logged at debug level: {log}"
    );
    let stored = database_text(&database).await;
    let emails = emails(database.data_dir());
    assert!(!emails.is_empty(), "the server wrote emails");

    for (what, value) in [
        ("a key made by the CLI", cli_key.clone()),
        ("a pet store key", petstore_key),
        ("a client secret", client_secret.clone()),
        ("a wrong client secret", wrong_secret),
        (
            "client credentials as HTTP Basic sends them",
            basic(&client_id, &client_secret),
        ),
        ("a bearer token", token),
        ("a revoked bearer token", revoked_token),
        ("a rotated key", rotated_key),
        ("a wrong key", off_by_one(&cli_key)),
        ("a pet store password", password.to_owned()),
        ("a wrong pet store password", wrong_password),
        (
            "a pet store password as HTTP Basic sends it",
            basic(user, password),
        ),
        ("a pet store session", session),
        ("a token from the sign-in page", implicit_token),
    ] {
        secrets.push(Secret { what, value });
    }
    for secret in &secrets {
        assert!(secret.value.len() >= 16, "{} is a real secret", secret.what);
        assert!(
            !log.contains(&secret.value),
            "{} is in the logs",
            secret.what
        );
        assert!(
            !stored.contains(&secret.value),
            "{} is in the database",
            secret.what
        );
        for (file, email) in &emails {
            assert!(
                !email.contains(&secret.value),
                "{} is in the email {file}",
                secret.what
            );
        }
    }
    // The approved key: in its own email and nowhere else.
    assert!(
        !log.contains(&emailed_key),
        "the approved key is in the logs"
    );
    assert!(
        !stored.contains(&emailed_key),
        "the approved key is in the database"
    );
    let holding: Vec<&(String, String)> = emails
        .iter()
        .filter(|(_, email)| email.contains(&emailed_key))
        .collect();
    assert_eq!(
        holding.len(),
        1,
        "the approved key is in one email: {holding:?}"
    );
    assert!(
        holding[0].1.contains("To: ada@example.test"),
        "the email with the key goes to the technical contact: {}",
        holding[0].1
    );
    database.remove().await;
}
