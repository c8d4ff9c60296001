//! The one typed configuration of the server.
//!
//! Sources, each overriding the one before: built-in defaults < TOML file
//! (`--config`) < environment (`PETSTORE_PORTFOLIO_*`, nested fields joined by
//! `__`, e.g. `PETSTORE_PORTFOLIO_PETSTORE__AUTH_MODE=enforce`) < command-line
//! flags. `petstore-portfolio config-schema` prints the JSON Schema of this
//! file format for editors.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

mod mail;
mod petstore;
mod portfolio;

pub use mail::{MailConfig, SmtpConfig, SmtpTls};
pub use petstore::{AuthMode, PetstoreConfig};
pub use portfolio::{
    ConfiguredApiKey, KeyRequestsConfig, MastodonConfig, NewsletterConfig, OAuthConfig,
    PortfolioConfig, RateLimitConfig, Scope,
};

use figment::Figment;
use figment::providers::{Env, Format as _, Serialized, Toml};
use schemars::JsonSchema;
use secrecy::{ExposeSecret as _, SecretString};
use serde::{Deserialize, Serialize};

/// Prefix of every environment variable the server reads.
pub const ENV_PREFIX: &str = "PETSTORE_PORTFOLIO_";

/// Server configuration. Its secrets (the URLs that may carry passwords,
/// keys, tokens) are `SecretString`s: `Debug` hides them.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Address to listen on; port 0 picks a free port.
    pub bind: SocketAddr,
    /// Folder for the SQLite database and other files the server keeps.
    pub data_dir: PathBuf,
    /// `sqlite:...` or `postgres://...`; defaults to a SQLite file in `data_dir`.
    /// Put credentials here only through the environment or a file.
    #[schemars(with = "Option<String>")]
    pub database_url: Option<SecretString>,
    /// Connections this process keeps to the database, at most (default: 8
    /// for SQLite, 16 for PostgreSQL). With N replicas on one PostgreSQL,
    /// N times this must stay under the server's `max_connections` (100 by
    /// default), with room left for the operator's tools.
    pub database_max_connections: Option<u32>,
    /// Base URL used in links the server hands out (image URLs, ...);
    /// defaults to `http://<bound address>` (`https://` with TLS).
    pub public_url: Option<String>,
    /// The server's certificate chain (PEM). With `tls_key`, the server
    /// speaks HTTPS only (HTTP/2 by ALPN, and HTTP/1.1), and every answer
    /// carries `Strict-Transport-Security`.
    pub tls_cert: Option<PathBuf>,
    /// The private key of `tls_cert` (PEM: PKCS#8, PKCS#1 or SEC1). Give it
    /// through the file or the environment; keep it readable by the server
    /// only.
    pub tls_key: Option<PathBuf>,
    /// `redis://...`: the rate limits' counters live in Redis, shared by
    /// every replica of the server (without it each process counts on its
    /// own). If Redis does not answer, requests are still answered and
    /// counted in the process meanwhile. Put a password here only through
    /// the environment or a file.
    #[schemars(with = "Option<String>")]
    pub redis_url: Option<SecretString>,
    /// The prefix of the counters' keys in Redis: the replicas of one
    /// deployment share it; deployments that share a Redis need one each.
    pub redis_key_prefix: String,
    /// Address of a second listener that serves Prometheus metrics at
    /// `/metrics` (`--metrics-bind`); off when unset. Keep it off the
    /// public network: it tells how the server is used.
    pub metrics_bind: Option<SocketAddr>,
    /// An OpenTelemetry collector's OTLP/HTTP endpoint (`http://host:4318`;
    /// spans go to its `/v1/traces`): each request's span is exported there
    /// (`--otlp-endpoint`). Off when unset.
    #[schemars(with = "Option<String>")]
    pub otlp_endpoint: Option<SecretString>,
    /// `production` changes the defaults for a public deployment: no demo
    /// data or sample users, `petstore.auth_mode = "enforce"` (required),
    /// 600 pet store requests a minute from each address, and no CORS origin
    /// (`*` refused); see `Profile`. `default` keeps the demo's settings.
    pub profile: Profile,
    /// SQLite only: before a start (or `migrate`) applies migrations, the
    /// database is copied to `<data_dir>/backups/`; this many such copies
    /// are kept, the oldest removed (0: no copy is made).
    pub backups_before_migration: usize,
    pub http: HttpConfig,
    pub petstore: PetstoreConfig,
    pub portfolio: PortfolioConfig,
    pub mail: MailConfig,
    pub log: LogConfig,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            bind: SocketAddr::from(([127, 0, 0, 1], 8080)),
            data_dir: PathBuf::from("data"),
            database_url: None,
            database_max_connections: None,
            public_url: None,
            tls_cert: None,
            tls_key: None,
            redis_url: None,
            redis_key_prefix: "petstore-portfolio".to_owned(),
            metrics_bind: None,
            otlp_endpoint: None,
            profile: Profile::Default,
            backups_before_migration: 3,
            http: HttpConfig::default(),
            petstore: PetstoreConfig::default(),
            portfolio: PortfolioConfig::default(),
            mail: MailConfig::default(),
            log: LogConfig::default(),
        }
    }
}

/// A set of defaults for a kind of deployment (`--profile`, `profile`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// The demo's settings: an open pet store with its sample data.
    Default,
    /// A public deployment: see [`Config::profile`].
    Production,
}

impl Profile {
    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Default => "default",
            Profile::Production => "production",
        }
    }
}

/// The production profile's defaults, beneath the file, the environment
/// and the flags.
fn production_defaults() -> serde_json::Value {
    serde_json::json!({
        "petstore": {
            "auth_mode": "enforce",
            "demo_data": false,
            "requests_per_minute": 600,
        },
        "http": { "cors_allowed_origins": [] },
    })
}

/// A database URL fit for logs and error messages: the password is hidden.
pub fn redact_url(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme_end), Some(at)) if at > scheme_end => {
            let credentials = &url[scheme_end + 3..at];
            match credentials.find(':') {
                Some(colon) => format!(
                    "{}{}:***{}",
                    &url[..scheme_end + 3],
                    &credentials[..colon],
                    &url[at..]
                ),
                None => url.to_owned(),
            }
        }
        _ => url.to_owned(),
    }
}

/// HTTP plumbing shared by both services, and the limits that keep slow or
/// idle clients from starving the others.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct HttpConfig {
    /// Largest request body accepted, except image uploads (bytes).
    pub max_body_bytes: usize,
    /// A request whose handling takes longer than this (seconds) is cut off
    /// and answered 503 `SERVICE_UNAVAILABLE`.
    pub request_timeout_secs: u64,
    /// Seconds a connection has to deliver a request's headers, counted from
    /// when it starts waiting for one (accepted, or its last answer sent);
    /// then it is closed. Cuts off clients that send headers a byte at a
    /// time. Default 10.
    pub header_read_timeout_secs: u64,
    /// Seconds a connection with no request in flight and nothing arriving is
    /// kept open for the next request. Default 5.
    pub keep_alive_timeout_secs: u64,
    /// Seconds the server waits for the next part of a request body; then
    /// the request is answered 408 `REQUEST_TIMEOUT`. Default 10.
    pub body_read_timeout_secs: u64,
    /// Seconds a client may leave an answer untaken (the connection cannot
    /// write); then the connection is closed. Default 30.
    pub send_timeout_secs: u64,
    /// Open connections at most. When all are taken, the one idle (or slow
    /// to send its request) the longest is closed for a newcomer. Default:
    /// half the process's file limit (512 under the common 1,024).
    pub max_connections: Option<usize>,
    /// Origins allowed by CORS; `["*"]` allows any (the demo's default).
    pub cors_allowed_origins: Vec<String>,
    /// Reverse proxies (addresses or CIDR ranges, such as `10.0.0.0/8`)
    /// whose `X-Forwarded-For` is believed: for a request that comes from
    /// one, the client's address (for the per-address limits) is the last
    /// address in that header that is not a trusted proxy. Empty (the
    /// default): the header is ignored, and the client is the TCP peer.
    pub trusted_proxies: Vec<String>,
    /// Seconds the server goes on serving after SIGTERM (or Ctrl-C) while
    /// readiness answers 503, so that load balancers take it out before it
    /// stops accepting connections. Then it finishes the requests in flight
    /// (for at most `request_timeout_secs`) and exits. Default 5; 0 stops
    /// accepting at once.
    pub shutdown_drain_secs: u64,
    /// Seconds the answer to a request sent with an `Idempotency-Key` is
    /// kept, to be replayed to a retry with the same key. Default 86400
    /// (24 hours).
    pub idempotency_keys_kept_secs: u64,
}

impl HttpConfig {
    /// How long an idempotency key's answer is kept (at least a second).
    pub fn idempotency_keys_kept(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.idempotency_keys_kept_secs.max(1))
    }
}

impl Default for HttpConfig {
    fn default() -> Self {
        Self {
            max_body_bytes: 1024 * 1024,
            request_timeout_secs: 30,
            header_read_timeout_secs: 10,
            keep_alive_timeout_secs: 5,
            body_read_timeout_secs: 10,
            send_timeout_secs: 30,
            max_connections: None,
            cors_allowed_origins: vec!["*".to_owned()],
            trusted_proxies: Vec::new(),
            shutdown_drain_secs: 5,
            idempotency_keys_kept_secs: 24 * 60 * 60,
        }
    }
}

/// Logging.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct LogConfig {
    /// `tracing` filter directives, e.g. `info,sqlx=warn`; `RUST_LOG` overrides.
    pub filter: String,
    /// `text` for people, `json` for machines.
    pub format: LogFormat,
    /// One line per request at INFO, target `access` (method, route
    /// template, status, duration, bytes, request id, trace id, client
    /// address; never the path or query as sent). Default on.
    pub access_log: bool,
}

impl Default for LogConfig {
    fn default() -> Self {
        Self {
            filter: "info,sqlx=warn".to_owned(),
            format: LogFormat::Text,
            access_log: true,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    Text,
    Json,
}

/// The command-line flags that override the configuration; `None` leaves
/// the lower layers' value.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize)]
pub struct Overrides {
    pub bind: Option<SocketAddr>,
    pub data_dir: Option<PathBuf>,
    pub database_url: Option<String>,
    pub public_url: Option<String>,
    pub tls_cert: Option<PathBuf>,
    pub tls_key: Option<PathBuf>,
    pub redis_url: Option<String>,
    pub metrics_bind: Option<SocketAddr>,
    pub otlp_endpoint: Option<String>,
    pub profile: Option<Profile>,
}

impl Config {
    /// Layers defaults, the TOML file, the environment and the flags.
    pub fn load(file: Option<&Path>, overrides: &Overrides) -> Result<Self, Box<figment::Error>> {
        // Missing settings are `Config::default()`'s (`#[serde(default)]`),
        // or the profile's, which the other layers name.
        let mut layers = Figment::new();
        if let Some(file) = file {
            if !file.exists() {
                return Err(Box::new(figment::Error::from(format!(
                    "configuration file {} does not exist",
                    file.display()
                ))));
            }
            layers = layers.merge(Toml::file(file));
        }
        let layers = layers
            .merge(Env::prefixed(ENV_PREFIX).split("__").ignore(&["config"]))
            .merge(Serialized::defaults(overrides));
        let profile: Profile = layers
            .extract_inner::<Option<Profile>>("profile")
            .ok()
            .flatten()
            .unwrap_or(Profile::Default);
        let config: Config = match profile {
            Profile::Default => layers.extract(),
            Profile::Production => Figment::new()
                .merge(Serialized::defaults(production_defaults()))
                .merge(layers)
                .extract(),
        }
        .map_err(Box::new)?;
        config
            .check_profile()
            .map_err(|e| Box::new(figment::Error::from(e)))?;
        Ok(config)
    }

    /// The services this configuration turns on, by name.
    pub fn services_on(&self) -> Vec<&'static str> {
        [
            (self.petstore.enabled, "petstore"),
            (self.portfolio.enabled, "portfolio"),
        ]
        .into_iter()
        .filter_map(|(on, name)| on.then_some(name))
        .collect()
    }

    /// What the production profile requires, whatever a layer set.
    fn check_profile(&self) -> Result<(), String> {
        if self.profile != Profile::Production {
            return Ok(());
        }
        if self.petstore.auth_mode != AuthMode::Enforce {
            return Err(
                "profile \"production\" requires petstore.auth_mode = \"enforce\"".to_owned(),
            );
        }
        if self.http.cors_allowed_origins.iter().any(|o| o == "*") {
            return Err(
                "profile \"production\" refuses http.cors_allowed_origins = [\"*\"]: name the \
                 origins that may call the API"
                    .to_owned(),
            );
        }
        Ok(())
    }

    /// The database URL in force: the configured one or a SQLite file in the data dir.
    pub fn database_url(&self) -> String {
        match &self.database_url {
            Some(url) => url.expose_secret().to_owned(),
            None => format!(
                "sqlite://{}?mode=rwc",
                self.data_dir.join("petstore-portfolio.db").display()
            ),
        }
    }

    /// The JSON Schema of the configuration file.
    pub fn json_schema() -> serde_json::Value {
        serde_json::to_value(schemars::schema_for!(Config)).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A configuration file of its own for one test.
    fn write_config(name: &str, text: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("pps-config-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        let file = dir.join("config.toml");
        std::fs::write(&file, text).unwrap_or_else(|e| panic!("{e}"));
        file
    }

    #[test]
    fn flags_override_the_file_which_overrides_defaults() {
        let file = write_config(
            "layers",
            "bind = \"127.0.0.1:9000\"\n[petstore]\nmax_upload_bytes = 10\n",
        );
        let overrides = Overrides {
            bind: Some(SocketAddr::from(([127, 0, 0, 1], 9100))),
            ..Overrides::default()
        };
        let config = Config::load(Some(&file), &overrides).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(config.bind.port(), 9100);
        assert_eq!(config.petstore.max_upload_bytes, 10);
        assert_eq!(config.petstore.auth_mode, AuthMode::Open);
    }

    #[test]
    fn unknown_fields_and_missing_files_are_errors() {
        let file = write_config("unknown", "bnd = \"127.0.0.1:9000\"\n");
        assert!(Config::load(Some(&file), &Overrides::default()).is_err());
        let missing = PathBuf::from("/nonexistent/config.toml");
        assert!(Config::load(Some(&missing), &Overrides::default()).is_err());
    }

    #[test]
    fn the_default_database_is_sqlite_in_the_data_dir() {
        let config = Config {
            data_dir: PathBuf::from("/srv/pets"),
            ..Config::default()
        };
        assert_eq!(
            config.database_url(),
            "sqlite:///srv/pets/petstore-portfolio.db?mode=rwc"
        );
    }

    #[test]
    fn redact_url_hides_only_the_password() {
        assert_eq!(
            redact_url("postgres://app:s3cret@db:5432/app"),
            "postgres://app:***@db:5432/app"
        );
        assert_eq!(redact_url("postgres://app@db/app"), "postgres://app@db/app");
        assert_eq!(redact_url("sqlite://data/app.db"), "sqlite://data/app.db");
    }

    #[test]
    fn no_secret_of_the_configuration_shows_in_debug_output() {
        let mut config = Config {
            database_url: Some("postgres://app:s3cret-db@db/app".into()),
            ..Config::default()
        };
        config.mail.smtp = Some(SmtpConfig {
            host: "smtp".into(),
            port: 587,
            tls: SmtpTls::Starttls,
            username: Some("u".into()),
            password: Some("s3cret-smtp".into()),
            timeout_secs: 5,
            connections: 4,
        });
        config.portfolio.api_keys = vec![ConfiguredApiKey {
            name: "site".into(),
            key: "s3cret-key".into(),
            scopes: vec![Scope::Admin],
        }];
        config.portfolio.mastodon = Some(MastodonConfig {
            instance_url: "https://m.example".into(),
            access_token: "s3cret-token".into(),
            visibility: "public".into(),
            timeout_secs: 1,
        });
        let printed = format!("{config:?}");
        assert!(!printed.contains("s3cret"), "{printed}");
        assert_eq!(printed.matches("REDACTED").count(), 4, "{printed}");
    }

    #[test]
    fn the_schema_documents_every_section() {
        let schema = Config::json_schema().to_string();
        for field in [
            "bind",
            "data_dir",
            "database_url",
            "public_url",
            "max_upload_bytes",
            "auth_mode",
        ] {
            assert!(schema.contains(field), "{field} missing from the schema");
        }
    }
}
