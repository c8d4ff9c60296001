//! The end-to-end harness: the real server, bound to `127.0.0.1:0` with a
//! fresh database, driven over HTTP.
//!
//! Every test runs on SQLite and, when `POSTGRES_TEST_URL`
//! names a PostgreSQL server (CI sets it), on PostgreSQL too, each time in a
//! database of its own. Without the URL the PostgreSQL runs say loudly that
//! they were skipped; under CI (`CI=true`) a missing URL is a failure.

#![allow(clippy::unwrap_used, clippy::expect_used)]

pub mod ports;
pub mod process;
pub mod smtp;

use std::fmt::Debug;
use std::io::Write as _;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use petstore_portfolio_client::portfolio;
use petstore_portfolio_server::Config;
use petstore_portfolio_server::config::{ConfiguredApiKey, Scope};
use petstore_portfolio_testkit::TestServer as Kit;

/// The environment variable naming the PostgreSQL server for tests, e.g.
/// `postgres://postgres@127.0.0.1:5432/postgres`.
pub const POSTGRES_URL_VAR: &str = "POSTGRES_TEST_URL";
/// The environment variable that names a Redis server for the tests of
/// replicas' shared rate limits (keys under a prefix of each test's own).
pub const REDIS_URL_VAR: &str = "REDIS_TEST_URL";

/// The configured Redis server; otherwise a loud note (and, under CI, a
/// panic).
pub fn redis_url(test: &str) -> Option<String> {
    configured_url(REDIS_URL_VAR, &format!("SKIPPED without Redis: {test}"))
}

/// The URL in the environment variable `var`. Without it: under CI, where
/// every test must run, a panic; elsewhere `skipped` is printed, loudly.
fn configured_url(var: &str, skipped: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            assert!(
                std::env::var("CI").is_err(),
                "{var} is not set under CI: {skipped}"
            );
            // Straight to the file descriptor: the test harness captures eprintln!.
            let _ = writeln!(std::io::stderr(), "{skipped} (set {var} to run it)");
            None
        }
    }
}

/// Whether the program `name` is on the PATH; if not, a loud note (and,
/// under CI, which installs it, a panic).
pub fn installed(name: &str, skipped: &str) -> bool {
    let found = std::process::Command::new("sh")
        .args(["-c", &format!("command -v {name}")])
        .stdout(std::process::Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if !found {
        assert!(
            std::env::var("CI").is_err(),
            "{name} is not installed under CI: {skipped}"
        );
        let _ = writeln!(std::io::stderr(), "{skipped} (install {name} to run it)");
    }
    found
}

/// API keys every test server accepts.
pub mod keys {
    /// Every scope (`admin`).
    pub const ADMIN: &str = "test-admin-key-0123456789";
    /// Only `context:read`.
    pub const CONTEXT_READER: &str = "test-context-reader-key";
    /// No scope at all.
    pub const NO_SCOPE: &str = "test-no-scope-key";
}

fn test_api_keys() -> Vec<ConfiguredApiKey> {
    let key = |name: &str, key: &str, scopes: Vec<Scope>| ConfiguredApiKey {
        name: name.to_owned(),
        key: key.to_owned().into(),
        scopes,
    };
    vec![
        key("admin", keys::ADMIN, vec![Scope::Admin]),
        key(
            "context-reader",
            keys::CONTEXT_READER,
            vec![Scope::ContextRead],
        ),
        key("no-scope", keys::NO_SCOPE, vec![]),
    ]
}

/// Which database a test runs on.
#[derive(Debug, Clone)]
pub enum Db {
    Sqlite,
    /// The URL of the PostgreSQL server (its maintenance database).
    Postgres(String),
}

impl Db {
    /// PostgreSQL if configured; otherwise a loud note (and, under CI, a panic).
    pub fn postgres(test: &str) -> Option<Db> {
        configured_url(POSTGRES_URL_VAR, &format!("SKIPPED on PostgreSQL: {test}"))
            .map(Db::Postgres)
    }
}

/// Generates, for each listed `async fn name(db: Db)`, a test on SQLite
/// (`sqlite::name`) and one on PostgreSQL (`postgres::name`).
///
/// Both run in one process, so an inline insta snapshot in such a function
/// is asserted twice: wrap it in `insta::allow_duplicates!`.
#[macro_export]
macro_rules! on_every_database {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name($crate::Db::Sqlite).await
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    if let Some(db) = $crate::Db::postgres(concat!(module_path!(), "::", stringify!($name))) {
                        super::$name(db).await
                    }
                }
            )*
        }
    };
}

/// A running server with a fresh database; stopped when dropped. It is
/// the test kit's server (whose methods it has too: emails, injected
/// failures, ...) on a database of the test's own.
pub struct TestServer {
    /// `http://127.0.0.1:<port>`
    pub url: String,
    kit: Kit,
    database: Option<FreshDatabase>,
}

impl std::fmt::Debug for TestServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestServer")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl std::ops::Deref for TestServer {
    type Target = Kit;

    fn deref(&self) -> &Kit {
        &self.kit
    }
}

impl TestServer {
    /// An empty store (no demo data).
    pub async fn start(db: Db) -> TestServer {
        Self::start_with(db, |_| {}).await
    }

    /// Like [`start`](Self::start), with the configuration adjusted first.
    pub async fn start_with(db: Db, adjust: impl FnOnce(&mut Config)) -> TestServer {
        Self::try_start(db, adjust)
            .await
            .expect("cannot start the test server")
    }

    async fn try_start(db: Db, adjust: impl FnOnce(&mut Config)) -> anyhow::Result<TestServer> {
        // The server's warnings and errors, shown with a failing test's output.
        let _ = tracing_subscriber::fmt()
            .with_test_writer()
            .with_env_filter(std::env::var("RUST_LOG").unwrap_or_else(|_| "warn".to_owned()))
            .try_init();
        let database = FreshDatabase::try_create(db).await?;
        let kit = Kit::builder()
            .without_sample_data()
            .database_url(database.url.clone())
            .data_dir(database.data_dir())
            .configure(|config| {
                config.portfolio.api_keys = test_api_keys();
                adjust(config);
                // Email leaves quickly in tests: short retries, frequent passes.
                config.mail.retry_base_ms = config.mail.retry_base_ms.min(50);
                config.mail.poll_interval_ms = config.mail.poll_interval_ms.min(50);
            })
            .start()
            .await?;
        Ok(TestServer {
            url: kit.url().to_owned(),
            kit,
            database: Some(database),
        })
    }

    /// A portfolio client that sends `key` (see [`keys`]), if any.
    pub fn portfolio_with_key(&self, key: Option<&str>) -> portfolio::Client {
        match key {
            Some(key) => self.kit.portfolio_with_key(key),
            None => self.kit.portfolio(),
        }
    }

    /// Registers an OAuth client with `scopes` straight in the server's
    /// database, as the operator's CLI does: its id and secret.
    pub async fn oauth_client(&self, scopes: &[Scope]) -> (String, String) {
        petstore_portfolio_server::fixtures::register_oauth_client(&self.database_url(), scopes)
            .await
            .expect("the client is registered")
    }

    /// A portfolio client that gets bearer tokens (client credentials) as
    /// a new OAuth client with `scopes`.
    pub async fn portfolio_with_scopes(&self, scopes: &[Scope]) -> portfolio::Client {
        let (id, secret) = self.oauth_client(scopes).await;
        portfolio::ClientBuilder::new(&self.url)
            .client_credentials(id, secret)
            .build()
            .expect("cannot build the portfolio client")
    }

    /// A bearer token from the token endpoint, for a new OAuth client with
    /// `scopes`.
    pub async fn bearer_token(&self, scopes: &[Scope]) -> String {
        let (id, secret) = self.oauth_client(scopes).await;
        self.token_of_client(&id, &secret).await
    }

    /// A bearer token for the OAuth client `id` (the client credentials
    /// grant).
    pub async fn token_of_client(&self, id: &str, secret: &str) -> String {
        let (status, _, body) = send_json(
            http()
                .post(self.at("/api/oauth/token"))
                .basic_auth(id, Some(secret))
                .form(&[("grant_type", "client_credentials")]),
        )
        .await;
        assert_eq!(status, 200, "{body}");
        body["access_token"]
            .as_str()
            .expect("an access token")
            .to_owned()
    }

    /// A pet store API key, made through the portfolio's admin API (so that
    /// it works at once).
    pub async fn petstore_key(&self) -> String {
        let token = self.bearer_token(&[Scope::KeysManage]).await;
        let (status, _, body) = send_json(
            self.post_json(
                "/api/admin/api-keys",
                serde_json::json!({"name": "pet shop", "service": "petstore"}),
            )
            .bearer_auth(token),
        )
        .await;
        assert_eq!(status, 201, "{body}");
        body["key"].as_str().expect("a key").to_owned()
    }

    /// The full URL of a path on this server.
    pub fn at(&self, path: &str) -> String {
        format!("{}{path}", self.url)
    }

    /// A raw `POST` of `body` (a `serde_json::Value`, or any text, well
    /// formed or not) to `path`, labelled `application/json`.
    pub fn post_json(&self, path: &str, body: impl std::fmt::Display) -> reqwest::RequestBuilder {
        http()
            .post(self.at(path))
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body.to_string())
    }

    /// The number of rows in a table, read straight from the database: for
    /// effects the API does not show (sessions, ...).
    pub async fn count(&self, table: &str) -> i64 {
        count_rows(&self.database_url(), table).await
    }

    /// The URL of the server's database (for the operator CLI).
    pub fn database_url(&self) -> String {
        self.kit.config().database_url()
    }

    /// Stops the server and starts it again on the same database and data
    /// directory (with `adjust` applied), as an operator's restart would.
    pub async fn restart(self, adjust: impl FnOnce(&mut Config)) -> TestServer {
        let kit = self
            .kit
            .restart(adjust)
            .await
            .expect("cannot restart the test server");
        TestServer {
            url: kit.url().to_owned(),
            kit,
            database: self.database,
        }
    }

    /// Runs a statement (`$1`, `$2`... bound to `texts`) straight on the
    /// server's database: for states the API refuses to make (rows written
    /// before a rule existed, say).
    pub async fn execute(&self, statement: &str, texts: &[&str]) {
        sqlx::any::install_default_drivers();
        let result = async {
            let pool = sqlx::AnyPool::connect(&self.database_url()).await?;
            let mut query = sqlx::query(statement);
            for text in texts {
                query = query.bind(*text);
            }
            query.execute(&pool).await?;
            pool.close().await;
            Ok::<_, sqlx::Error>(())
        };
        result
            .await
            .unwrap_or_else(|e| panic!("cannot run {statement}: {e}"));
    }

    /// Like [`count`](Self::count), for the rows that match `condition`.
    pub async fn count_where(&self, table: &str, condition: &str) -> i64 {
        self.count(&format!("{table} WHERE {condition}")).await
    }

    /// Stops the server, waiting for requests in flight.
    pub async fn stop(mut self) {
        let database = self.database.take();
        self.kit.stop().await;
        if let Some(database) = database {
            database.remove().await;
        }
    }
}

/// The number of rows in a table of the database at `url`, read straight
/// from it: for effects the API does not show.
async fn count_rows(url: &str, table: &str) -> i64 {
    sqlx::any::install_default_drivers();
    let result = async {
        let pool = sqlx::AnyPool::connect(url).await?;
        let count: i64 = sqlx::query_scalar(&format!("SELECT COUNT(*) FROM {table}"))
            .fetch_one(&pool)
            .await?;
        pool.close().await;
        Ok::<_, sqlx::Error>(count)
    };
    result
        .await
        .unwrap_or_else(|e| panic!("cannot count {table}: {e}"))
}

/// A database of its own and a data folder of its own, for one test: SQLite
/// in the folder, or a database created on the configured PostgreSQL server.
/// Both go when it is dropped (or [`remove`](Self::remove)d).
pub struct FreshDatabase {
    /// `sqlite://...` or `postgres://...`
    pub url: String,
    data_dir: tempfile::TempDir,
    postgres: Option<PostgresDatabase>,
}

impl std::fmt::Debug for FreshDatabase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FreshDatabase")
            .field("data_dir", &self.data_dir.path())
            .finish_non_exhaustive()
    }
}

impl FreshDatabase {
    pub async fn create(db: Db) -> FreshDatabase {
        Self::try_create(db)
            .await
            .expect("cannot create a database")
    }

    async fn try_create(db: Db) -> anyhow::Result<FreshDatabase> {
        let data_dir = tempfile::tempdir().context("temporary data dir")?;
        let postgres = match db {
            Db::Sqlite => None,
            Db::Postgres(server_url) => Some(PostgresDatabase::create(&server_url).await?),
        };
        let url = match &postgres {
            Some(pg) => pg.url.clone(),
            None => Config {
                data_dir: data_dir.path().to_path_buf(),
                ..Config::default()
            }
            .database_url(),
        };
        Ok(FreshDatabase {
            url,
            data_dir,
            postgres,
        })
    }

    /// The data folder (the SQLite file, `.eml` files).
    pub fn data_dir(&self) -> &std::path::Path {
        self.data_dir.path()
    }

    /// The number of rows in a table (or `table WHERE condition`).
    pub async fn count(&self, table: &str) -> i64 {
        count_rows(&self.url, table).await
    }

    /// Drops the PostgreSQL database now.
    pub async fn remove(mut self) {
        if let Some(pg) = self.postgres.take() {
            pg.drop_database().await;
        }
    }
}

impl Drop for FreshDatabase {
    fn drop(&mut self) {
        if let Some(pg) = self.postgres.take() {
            // Drop cannot await: finish on a thread of its own.
            let _ = std::thread::spawn(move || {
                if let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    runtime.block_on(pg.drop_database());
                }
            })
            .join();
        }
    }
}

/// A database of its own for one test, on the configured PostgreSQL server.
struct PostgresDatabase {
    server_url: String,
    name: String,
    url: String,
}

impl PostgresDatabase {
    async fn create(server_url: &str) -> anyhow::Result<Self> {
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "pps_test_{}_{}_{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.subsec_nanos())
                .unwrap_or_default()
        );
        let mut admin = connect(server_url).await?;
        sqlx_query(&mut admin, &format!("CREATE DATABASE {name}")).await?;
        let url = match server_url.rfind('/') {
            Some(slash) if slash > "postgres://".len() => {
                format!("{}/{name}", &server_url[..slash])
            }
            _ => anyhow::bail!("{POSTGRES_URL_VAR} must name a database, e.g. .../postgres"),
        };
        Ok(Self {
            server_url: server_url.to_owned(),
            name,
            url,
        })
    }

    async fn drop_database(self) {
        if let Ok(mut admin) = connect(&self.server_url).await {
            let _ = sqlx_query(
                &mut admin,
                &format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name),
            )
            .await;
        }
    }
}

async fn connect(url: &str) -> anyhow::Result<sqlx::PgConnection> {
    use sqlx::Connection as _;
    sqlx::PgConnection::connect(url)
        .await
        .with_context(|| format!("cannot connect to the PostgreSQL server of {POSTGRES_URL_VAR}"))
}

async fn sqlx_query(conn: &mut sqlx::PgConnection, sql: &str) -> anyhow::Result<()> {
    use sqlx::Executor as _;
    conn.execute(sql).await.with_context(|| sql.to_owned())?;
    Ok(())
}

/// A raw HTTP client, for what the SDKs do not send: other formats, bad input.
pub fn http() -> reqwest::Client {
    // The server builds reqwest with rustls and no crypto provider of its
    // own (it installs ring at start-up); a test without an in-process
    // server installs it here. A second install fails harmlessly.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

/// Waits, if need be, until the current UTC minute has at least 10 seconds
/// left: rate limits count in whole minutes, and a test's requests must not
/// straddle two windows (this waits at most a few seconds).
pub async fn inside_a_fresh_minute() {
    while chrono::Utc::now().timestamp().rem_euclid(60) > 50 {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// An HTTP client whose connections come from `address` (a loopback
/// address such as 127.0.0.2), to look like another client.
pub fn http_from(address: std::net::IpAddr) -> reqwest::Client {
    let _ = http();
    reqwest::Client::builder()
        .local_address(address)
        .build()
        .expect("an HTTP client")
}

/// Sends a raw request; returns the status, the content type (empty if
/// none) and the body as text.
pub async fn send(request: reqwest::RequestBuilder) -> (u16, String, String) {
    let response = request.send().await.expect("the request was not answered");
    let status = response.status().as_u16();
    let content_type = header(response.headers(), reqwest::header::CONTENT_TYPE.as_str())
        .unwrap_or_default()
        .to_owned();
    let text = response.text().await.unwrap_or_default();
    (status, content_type, text)
}

/// Like [`send`], with the body parsed as JSON (which it must be).
pub async fn send_json(request: reqwest::RequestBuilder) -> (u16, String, serde_json::Value) {
    let (status, content_type, text) = send(request).await;
    let body = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{status} {content_type}: not JSON ({e}): {text}"));
    (status, content_type, body)
}

/// A header's value, if it is there and is text.
pub fn header<'a>(headers: &'a reqwest::header::HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// Asks `attempt` every 50 ms until it gives `Ok`, for effects that happen
/// off the request path (email, batches, timers). Fails after `within`,
/// saying that `what` did not happen and showing the last `Err`.
pub async fn eventually<T, E: Debug>(
    within: Duration,
    what: &str,
    mut attempt: impl AsyncFnMut() -> Result<T, E>,
) -> T {
    let deadline = Instant::now() + within;
    loop {
        match attempt().await {
            Ok(value) => return value,
            Err(last) => assert!(
                Instant::now() < deadline,
                "{what}: not within {within:?}; last seen: {last:#?}"
            ),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits (see [`eventually`]) until `condition` holds.
pub async fn wait_until(within: Duration, what: &str, mut condition: impl AsyncFnMut() -> bool) {
    eventually(within, what, async || {
        if condition().await {
            Ok(())
        } else {
            Err("not yet")
        }
    })
    .await;
}

pub use petstore_portfolio_testkit::{SentEmail, TINY_PNG};

/// What a `tracing` subscriber writes, kept for the test to read.
#[derive(Clone, Default)]
pub struct Written(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Written {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Written {
    /// All it wrote, as text.
    pub fn text(&self) -> String {
        let bytes = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

/// Sends `request` (the raw bytes of an HTTP/1.x request, which should ask
/// for `Connection: close`) to `server` over TCP and returns all it answers
/// (at most 10 s): for requests no HTTP library would send.
pub async fn raw_exchange(server: &TestServer, request: &[u8]) -> String {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let address = server.url.trim_start_matches("http://");
    let mut stream = tokio::net::TcpStream::connect(address)
        .await
        .expect("connect");
    stream.write_all(request).await.expect("send the request");
    let mut answer = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut answer));
    let _ = read.await;
    String::from_utf8_lossy(&answer).into_owned()
}

/// What the sign-in page at `/oauth/authorize` hands a browser for its form:
/// the cookie (`name=value`) and the hidden token that must come back with it.
/// `base` is the server's URL (`http://127.0.0.1:<port>`).
pub async fn sign_in_form(base: &str) -> (String, String) {
    let response = http()
        .get(format!("{base}/oauth/authorize"))
        .query(&[("response_type", "token"), ("client_id", "tests")])
        .send()
        .await
        .expect("the sign-in page");
    assert_eq!(response.status().as_u16(), 200);
    let cookie = response.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    let html = response.text().await.unwrap();
    let marker = "name=\"csrf_token\" value=\"";
    let start = html.find(marker).expect("the form's token") + marker.len();
    let token = html[start..].split('"').next().unwrap().to_owned();
    (cookie, token)
}

/// Posts the sign-in form with `fields`, as the page's browser would (its
/// cookie and token added); redirects are not followed.
pub async fn post_sign_in(base: &str, fields: &[(&str, &str)]) -> reqwest::Response {
    let (cookie, token) = sign_in_form(base).await;
    let mut fields = fields.to_vec();
    fields.push(("csrf_token", &token));
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
        .post(format!("{base}/oauth/authorize"))
        .header("cookie", cookie)
        .form(&fields)
        .send()
        .await
        .unwrap()
}
