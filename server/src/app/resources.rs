//! What the server opens before it serves: its database (locked, then
//! migrated), the replicas' counters in Redis, and its listeners.

use secrecy::ExposeSecret;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use super::{FINISH_GRACE, open_database};
use crate::config::{Config, redact_url};
use crate::http::{serve, tls};
use crate::limits::shared_counters::SharedCounters;
use crate::storage::Database;
use crate::storage::backup::DatabaseLock;
use crate::telemetry::metrics;

/// Where the server keeps what it keeps: the database (migrated), and the
/// rate limits' counters in Redis when replicas share them.
pub(super) struct Storage {
    pub(super) db: Database,
    /// On a SQLite file: its lock, shared, so that no restore replaces the
    /// database under the server.
    pub(super) database_lock: Option<DatabaseLock>,
    pub(super) shared_counters: Option<Arc<SharedCounters>>,
}

impl Storage {
    pub(super) async fn open(config: &Config) -> anyhow::Result<Self> {
        // Taken before the file is opened: a restore under way is waited
        // for, and none starts while the server runs.
        let database_lock = match crate::storage::backup::sqlite_file(&config.database_url()) {
            Ok(file) => {
                if let Some(folder) = file.parent().filter(|f| !f.as_os_str().is_empty()) {
                    std::fs::create_dir_all(folder).with_context(|| {
                        format!("cannot create the database's folder {}", folder.display())
                    })?;
                }
                Some(DatabaseLock::shared(&file)?)
            }
            Err(_) => None,
        };
        let db = open_database(config).await?;
        // The caches follow the other replicas' writes (PostgreSQL).
        db.follow_changes(&config.database_url());
        tracing::info!(database = %redact_url(&config.database_url()), "database ready");
        let shared_counters = config
            .redis_url
            .as_ref()
            .map(ExposeSecret::expose_secret)
            .map(|url| SharedCounters::new(url, &config.redis_key_prefix))
            .transpose()?
            .map(Arc::new);
        Ok(Storage {
            db,
            database_lock,
            shared_counters,
        })
    }
}

/// The listening socket, with its TLS, the URL links are built from, and
/// the connections' limits.
pub(super) struct Endpoint {
    pub(super) listener: TcpListener,
    pub(super) tls: Option<TlsAcceptor>,
    /// What SIGHUP replaces the certificate through.
    pub(super) certificates: Option<tls::Certificates>,
    pub(super) local_addr: SocketAddr,
    pub(super) public_url: String,
    pub(super) limits: serve::Limits,
    pub(super) metrics_listener: Option<TcpListener>,
}

impl Endpoint {
    pub(super) fn bind(config: &Config) -> anyhow::Result<Self> {
        let (tls, certificates) = match (&config.tls_cert, &config.tls_key) {
            (Some(cert), Some(key)) => {
                let (acceptor, certificates) = tls::acceptor(cert, key)?;
                (Some(acceptor), Some(certificates))
            }
            (None, None) => (None, None),
            _ => anyhow::bail!("HTTPS needs both tls_cert and tls_key (--tls-cert, --tls-key)"),
        };
        let listener = serve::listen(config.bind)
            .with_context(|| format!("cannot listen on {}", config.bind))?;
        let local_addr = listener.local_addr()?;
        let scheme = if tls.is_some() { "https" } else { "http" };
        let public_url = config
            .public_url
            .clone()
            .unwrap_or_else(|| format!("{scheme}://{local_addr}"))
            .trim_end_matches('/')
            .to_owned();
        let http = &config.http;
        let limits = serve::Limits {
            header_read_timeout: Duration::from_secs(http.header_read_timeout_secs.max(1)),
            keep_alive_timeout: Duration::from_secs(http.keep_alive_timeout_secs.max(1)),
            send_timeout: Duration::from_secs(http.send_timeout_secs.max(1)),
            max_connections: http
                .max_connections
                .unwrap_or_else(serve::default_max_connections)
                .max(1),
            finish_timeout: Duration::from_secs(http.request_timeout_secs.max(1)) + FINISH_GRACE,
        };
        let metrics_listener = config.metrics_bind.map(metrics::listen).transpose()?;
        Ok(Endpoint {
            listener,
            tls,
            certificates,
            local_addr,
            public_url,
            limits,
            metrics_listener,
        })
    }
}
