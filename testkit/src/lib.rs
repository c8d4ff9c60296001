//! Tests for programs that use `petstore-portfolio-client`, against the
//! real server rather than a mock of it.
//!
//! [`TestServer::start`] runs the actual server in-process on
//! `127.0.0.1:0`, with an in-memory database holding the sample data (the
//! pet store's sample pets and users, the portfolio's sample site), and
//! hands back what a test needs:
//!
//! - clients of the SDK pointed at it ([`TestServer::petstore`],
//!   [`TestServer::portfolio`]), or its [`url`](TestServer::url) for a client
//!   built your way;
//! - credentials with the scopes you choose: an API key
//!   ([`TestServer::api_key`]) or an OAuth client ([`TestServer::oauth_client`],
//!   [`TestServer::portfolio_with_scopes`]);
//! - the emails the server sent ([`TestServer::emails`],
//!   [`TestServer::wait_for_emails`]), read back from the files it writes
//!   when no SMTP server is configured;
//! - failures on demand: [`TestServer::fail_next`] makes the next calls of
//!   one operation fail with the status you choose (before the server does
//!   anything with them), to exercise your retries and error handling.
//!
//! ```no_run
//! # async fn example() -> anyhow::Result<()> {
//! use petstore_portfolio_testkit::TestServer;
//!
//! let server = TestServer::start().await;
//! // The SDK retries a 503 (three attempts by default): two of them fail.
//! server.fail_next("get_pet_by_id", 2, 503);
//! let pet = server.petstore().get_pet_by_id().pet_id(1).send().await?;
//! assert_eq!(server.failures_left("get_pet_by_id"), 0);
//! # let _ = pet; Ok(()) }
//! ```
//!
//! The server is stopped when the [`TestServer`] is dropped (or at once
//! with [`TestServer::stop`]); its database and files go with it.

mod emails;
mod failures;

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use petstore_portfolio_client::portfolio::types as portfolio_types;
use petstore_portfolio_client::{petstore, portfolio};
use petstore_portfolio_server::fixtures::Operator;
use petstore_portfolio_server::injected_failures::InjectedFailures;
use petstore_portfolio_server::{Config, Server};
use tokio::sync::{OnceCell, oneshot};

pub use emails::{EMAIL_PATIENCE, SentEmail};
pub use petstore_portfolio_server::Config as ServerConfig;
pub use petstore_portfolio_server::config::Scope;

/// Which service an API key opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyService {
    /// The pet store (`/v2`): a key with no scope, or only [`Scope::Admin`].
    Petstore,
    /// The portfolio (`/api`): a key with at least one scope.
    Portfolio,
}

/// How to start a [`TestServer`]: [`TestServer::builder`].
#[must_use]
#[derive(Debug)]
pub struct Builder {
    config: Config,
    /// Made unless a folder is chosen; removed with the server.
    temporary_data_dir: bool,
}

impl Builder {
    fn new() -> Self {
        let mut config = Config {
            bind: ([127, 0, 0, 1], 0).into(),
            database_url: Some(IN_MEMORY.to_owned().into()),
            ..Config::default()
        };
        // A test sends many requests from one address, and stops at once.
        config.portfolio.rate_limit.per_key_per_minute = 1_000_000;
        config.portfolio.rate_limit.anonymous_per_minute = 1_000_000;
        config.http.shutdown_drain_secs = 0;
        // Emails leave, and analytics are written, within a test's patience.
        config.mail.retry_base_ms = 50;
        config.mail.poll_interval_ms = 50;
        config.portfolio.analytics_flush_interval_ms = 50;
        Builder {
            config,
            temporary_data_dir: true,
        }
    }

    /// An empty pet store (no sample pets, users or orders). The
    /// portfolio's sample site stays: its pages need one.
    pub fn without_sample_data(mut self) -> Self {
        self.config.petstore.demo_data = false;
        self
    }

    /// Another database than the in-memory one, e.g. a PostgreSQL database
    /// made for the test (`postgres://...`) or a SQLite file
    /// (`sqlite://...`) that the test reads as well.
    pub fn database_url(mut self, url: impl Into<String>) -> Self {
        self.config.database_url = Some(url.into().into());
        self
    }

    /// The folder for the server's files (the emails it writes, a SQLite
    /// database file); by default a temporary folder of its own, removed
    /// when the server goes.
    pub fn data_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.config.data_dir = dir.into();
        self.temporary_data_dir = false;
        self
    }

    /// Changes the server's configuration (a rate limit, a setting under
    /// test), after the test kit's own settings.
    pub fn configure(mut self, adjust: impl FnOnce(&mut Config)) -> Self {
        adjust(&mut self.config);
        self
    }

    /// Starts the server.
    pub async fn start(self) -> anyhow::Result<TestServer> {
        let Builder {
            mut config,
            temporary_data_dir,
        } = self;
        let temporary = if temporary_data_dir {
            let dir = tempfile::tempdir().context("cannot make a temporary data folder")?;
            config.data_dir = dir.path().to_path_buf();
            Some(dir)
        } else {
            None
        };
        let failures = InjectedFailures::new();
        let running = Running::start(config.clone(), failures.clone()).await?;
        Ok(TestServer {
            running: Some(running),
            config,
            failures,
            _temporary: temporary,
        })
    }
}

/// A small valid PNG (1x1, transparent), for `uploadFile`.
pub const TINY_PNG: &[u8] = &[
    0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4,
    0x89, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0x00, 0x01, 0x00, 0x00,
    0x05, 0x00, 0x01, 0x0D, 0x0A, 0x2D, 0xB4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE,
    0x42, 0x60, 0x82,
];

/// SQLite in memory: the server keeps one connection to it.
const IN_MEMORY: &str = "sqlite::memory:";

/// The real server, running in-process; stopped when dropped.
pub struct TestServer {
    running: Option<Running>,
    config: Config,
    failures: InjectedFailures,
    _temporary: Option<tempfile::TempDir>,
}

impl std::fmt::Debug for TestServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestServer")
            .field("url", &self.url())
            .finish_non_exhaustive()
    }
}

/// One run of the server: its address, the test kit's own client, and how
/// to stop it.
struct Running {
    url: String,
    operator: Operator,
    /// An OAuth client with every scope, registered as the operator would
    /// when first needed: the credentials the test kit hands out are made
    /// with it.
    admin: OnceCell<portfolio::Client>,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<anyhow::Result<()>>>,
}

impl Running {
    async fn start(config: Config, failures: InjectedFailures) -> anyhow::Result<Running> {
        let server = Server::bind_with_failures(config, failures)
            .await
            .context("cannot start the server")?;
        let url = format!("{}://{}", server.scheme(), server.local_addr());
        let operator = server.operator();
        let (shutdown, stop) = oneshot::channel::<()>();
        let task = tokio::spawn(server.run(async {
            let _ = stop.await;
        }));
        Ok(Running {
            url,
            operator,
            admin: OnceCell::new(),
            shutdown: Some(shutdown),
            task: Some(task),
        })
    }

    /// The test kit's own client, with every scope.
    async fn admin(&self) -> anyhow::Result<&portfolio::Client> {
        self.admin
            .get_or_try_init(|| async {
                let (id, secret) = self
                    .operator
                    .register_oauth_client("testkit", &[Scope::Admin])
                    .await
                    .context("cannot register the test kit's OAuth client")?;
                portfolio::ClientBuilder::new(&self.url)
                    .client_credentials(id, secret)
                    .build()
                    .context("cannot build the test kit's client")
            })
            .await
    }

    /// Stops the server, letting requests in flight finish.
    async fn stop(mut self) -> anyhow::Result<()> {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        match self.task.take() {
            Some(task) => task.await.context("the server's task failed")?,
            None => Ok(()),
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

impl TestServer {
    /// The server with the sample data and an in-memory database.
    ///
    /// # Panics
    /// When the server cannot start (the message says why): a test cannot
    /// go on without it. [`TestServer::builder`]'s `start` returns the error
    /// instead.
    pub async fn start() -> TestServer {
        match Self::builder().start().await {
            Ok(server) => server,
            Err(e) => panic!("the test server did not start: {e:#}"),
        }
    }

    /// A server started your way: without the sample data, on another
    /// database, with settings of your own.
    pub fn builder() -> Builder {
        Builder::new()
    }

    /// `http://127.0.0.1:<port>`: the server's root, for
    /// `ClientBuilder::new` (each service's path is added by its client).
    pub fn url(&self) -> &str {
        self.running.as_ref().map_or("", |running| &running.url)
    }

    /// A link that signs in to the owner's console (`/console/`) once, as
    /// `petstore-portfolio console-link` prints it.
    ///
    /// # Panics
    /// When the server is stopped, or its database refuses the link.
    pub async fn console_link(&self) -> String {
        let Some(running) = self.running.as_ref() else {
            panic!("the test server is stopped: no console link");
        };
        match running.operator.console_sign_in_token().await {
            Ok(token) => format!("{}/console/sign-in?token={token}", running.url),
            Err(e) => panic!("the test server made no console link: {e:#}"),
        }
    }

    /// The configuration the server runs with.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The server's data folder (where the emails are written).
    pub fn data_dir(&self) -> &Path {
        &self.config.data_dir
    }

    /// A pet store client without credentials.
    pub fn petstore(&self) -> petstore::Client {
        petstore_client(petstore::ClientBuilder::new(self.url()))
    }

    /// A pet store client that sends an API key with `scopes` (none, or
    /// only [`Scope::Admin`]), made for it.
    pub async fn petstore_with_key(&self, scopes: &[Scope]) -> petstore::Client {
        let key = self.api_key(KeyService::Petstore, scopes).await;
        petstore_client(petstore::ClientBuilder::new(self.url()).api_key(key))
    }

    /// A portfolio client without credentials.
    pub fn portfolio(&self) -> portfolio::Client {
        portfolio_client(portfolio::ClientBuilder::new(self.url()))
    }

    /// A portfolio client that sends `key`.
    pub fn portfolio_with_key(&self, key: &str) -> portfolio::Client {
        portfolio_client(portfolio::ClientBuilder::new(self.url()).api_key(key))
    }

    /// A portfolio client that gets bearer tokens (the client credentials
    /// grant) as a new OAuth client with `scopes`.
    pub async fn portfolio_with_scopes(&self, scopes: &[Scope]) -> portfolio::Client {
        let (id, secret) = self.oauth_client(scopes).await;
        portfolio_client(portfolio::ClientBuilder::new(self.url()).client_credentials(id, secret))
    }

    /// A new API key for `service` with `scopes`, made through the admin
    /// API as an operator would (`createApiKey`).
    ///
    /// # Panics
    /// When the server refuses it (the message has its answer), e.g. a
    /// portfolio key without a scope.
    pub async fn api_key(&self, service: KeyService, scopes: &[Scope]) -> String {
        let service = match service {
            KeyService::Petstore => portfolio_types::Service::Petstore,
            KeyService::Portfolio => portfolio_types::Service::Portfolio,
        };
        let spec = portfolio_types::ApiKeySpec::builder()
            .name("testkit key")
            .service(service)
            .scopes(sdk_scopes(scopes));
        match self.admin().await.create_api_key().body(spec).send().await {
            Ok(issued) => issued.into_inner().key,
            Err(e) => panic!("the test server did not make the API key: {e}"),
        }
    }

    /// A new OAuth client with `scopes`, made through the admin API
    /// (`createOauthClient`): its id and secret, for
    /// `ClientBuilder::client_credentials` or the token endpoint.
    ///
    /// # Panics
    /// When the server refuses it (the message has its answer).
    pub async fn oauth_client(&self, scopes: &[Scope]) -> (String, String) {
        let spec = portfolio_types::OAuthClientSpec::builder()
            .name("testkit client")
            .scopes(sdk_scopes(scopes));
        match self
            .admin()
            .await
            .create_oauth_client()
            .body(spec)
            .send()
            .await
        {
            Ok(issued) => {
                let issued = issued.into_inner();
                (issued.client.client_id, issued.client_secret)
            }
            Err(e) => panic!("the test server did not make the OAuth client: {e}"),
        }
    }

    /// The test kit's own client, with every scope.
    async fn admin(&self) -> portfolio::Client {
        let admin = match &self.running {
            Some(running) => running.admin().await,
            None => Err(anyhow::anyhow!("the server is stopped")),
        };
        match admin {
            Ok(admin) => admin.clone(),
            Err(e) => panic!("{e:#}"),
        }
    }

    /// Stops the server, letting requests in flight finish; the database
    /// and the temporary folder go with it.
    pub async fn stop(mut self) {
        if let Some(running) = self.running.take()
            && let Err(e) = running.stop().await
        {
            panic!("the test server did not stop cleanly: {e:#}");
        }
    }

    /// Stops the server and starts it again with `adjust` applied to its
    /// configuration, on the same database (unless it is in memory) and
    /// data folder, as an operator's restart would. Planned failures stay
    /// planned.
    pub async fn restart(mut self, adjust: impl FnOnce(&mut Config)) -> anyhow::Result<TestServer> {
        if let Some(running) = self.running.take() {
            running.stop().await?;
        }
        adjust(&mut self.config);
        self.running = Some(Running::start(self.config.clone(), self.failures.clone()).await?);
        Ok(self)
    }
}

/// The SDK's scopes for the server's.
fn sdk_scopes(scopes: &[Scope]) -> Vec<portfolio_types::Scope> {
    scopes
        .iter()
        .filter_map(|scope| scope.to_string().parse().ok())
        .collect()
}

fn petstore_client(builder: petstore::ClientBuilder) -> petstore::Client {
    match builder.build() {
        Ok(client) => client,
        Err(e) => panic!("cannot build a pet store client: {e}"),
    }
}

fn portfolio_client(builder: portfolio::ClientBuilder) -> portfolio::Client {
    match builder.build() {
        Ok(client) => client,
        Err(e) => panic!("cannot build a portfolio client: {e}"),
    }
}
