//! Assembles the services, the HTTP plumbing and the background tasks into
//! one server.

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::Context as _;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

pub mod fixtures;
pub mod injected_failures;
mod reload;
mod resources;
mod router;
mod services;
mod summary;

pub use reload::ConfigSource;

use injected_failures::InjectedFailures;
use resources::{Endpoint, Storage};
use services::{Services, load_startup_data};

use crate::config::Config;
use crate::core::lifecycle::Draining;
use crate::http::serve::{self, Serving};
use crate::mail::Mailer;
use crate::storage::Database;
use crate::storage::backup::DatabaseLock;
use crate::telemetry::metrics::{self as metrics, Sampler};

/// A server bound to its address, ready to run.
pub struct Server {
    listener: TcpListener,
    /// The whole application, to be served on `listener`.
    serving: Serving,
    tls: Option<TlsAcceptor>,
    limits: serve::Limits,
    local_addr: SocketAddr,
    /// `/metrics`' own listener, and what sets the gauges read when scraped.
    metrics: Option<(
        TcpListener,
        metrics_exporter_prometheus::PrometheusHandle,
        Sampler,
    )>,
    background: Vec<tokio::task::JoinHandle<()>>,
    /// Held while the server runs (a restore waits for it to stop).
    _database_lock: Option<DatabaseLock>,
    /// For what the operator sets up beside the API (an OAuth client).
    database: Database,
    /// On at a stop: readiness answers 503 through the drain period.
    draining: Draining,
    drain: Duration,
    /// Stopped gracefully: it finishes the email in hand.
    mail_worker: (Mailer, tokio::task::JoinHandle<()>),
    /// Ends by itself once the router (and so every sender) is gone, after
    /// writing what it still holds.
    analytics_writer: tokio::task::JoinHandle<()>,
    /// What SIGHUP reloads.
    reloadable: reload::Reloadable,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("local_addr", &self.local_addr)
            .finish_non_exhaustive()
    }
}

/// Connects the configured database (running migrations), making the data
/// directory first for a SQLite file: the server and the operator's CLI
/// alike.
pub(crate) async fn open_database(config: &Config) -> anyhow::Result<Database> {
    let database_url = config.database_url();
    if database_url.starts_with("sqlite:") && !database_url.contains(":memory:") {
        std::fs::create_dir_all(&config.data_dir).with_context(|| {
            format!(
                "cannot create the data directory {}",
                config.data_dir.display()
            )
        })?;
    }
    let db = Database::open(&database_url, config.database_max_connections).await?;
    migrate(config, &db).await?;
    Ok(db)
}

/// Applies the migrations `db` lacks; on a SQLite file that has data,
/// copies it to `<data_dir>/backups/` first (keeping
/// `backups_before_migration` copies), so that an upgrade can be undone
/// with `restore`. Returns what was applied.
pub(crate) async fn migrate(
    config: &Config,
    db: &Database,
) -> anyhow::Result<Vec<crate::storage::migrations::Migration>> {
    let status = crate::storage::migrations::status(db).await?;
    if status.pending.is_empty() {
        // What the database has that this server lacks is refused here.
        db.migrate().await?;
        return Ok(Vec::new());
    }
    if !status.applied.is_empty()
        && config.backups_before_migration > 0
        && let Ok(file) = crate::storage::backup::sqlite_file(&config.database_url())
        && file.exists()
    {
        let folder = config.data_dir.join("backups");
        let copy = crate::storage::backup::before_migration(
            &file,
            &folder,
            &status.pending,
            config.backups_before_migration,
        )
        .await
        .context("cannot back the database up before migrating it; nothing was migrated")?;
        tracing::info!(backup = %copy.display(), "database copied before its migrations");
    }
    db.migrate().await?;
    if let (Some(first), Some(last)) = (status.pending.first(), status.pending.last()) {
        tracing::info!(
            applied = status.pending.len(),
            first = %format!("{} {}", first.version, first.description),
            last = %format!("{} {}", last.version, last.description),
            "database migrated"
        );
    }
    Ok(status.pending)
}

impl Server {
    /// Starts up as the steps below read: checks the configuration, opens
    /// storage, binds the listener, builds both services, fills empty
    /// tables, and starts the background tasks. Nothing is served until
    /// [`Server::run`].
    pub async fn bind(config: Config) -> anyhow::Result<Self> {
        Self::bind_inner(config, None).await
    }

    /// Like [`bind`](Self::bind), with a layer that answers the requests
    /// `failures` plans with their failures before the services see them:
    /// for tests of clients' retries (the test kit's).
    pub async fn bind_with_failures(
        config: Config,
        failures: InjectedFailures,
    ) -> anyhow::Result<Self> {
        Self::bind_inner(config, Some(failures)).await
    }

    async fn bind_inner(
        config: Config,
        failures: Option<InjectedFailures>,
    ) -> anyhow::Result<Self> {
        // TLS for outgoing HTTPS (the social network) uses ring, like lettre's
        // SMTP TLS; reqwest takes the process-wide default. A second install
        // (tests start many servers) fails harmlessly.
        let _ = rustls::crypto::ring::default_provider().install_default();
        check_settings(&config)?;
        // The port first: a start that cannot listen (the port taken)
        // stops before it migrates the database.
        let endpoint = Endpoint::bind(&config)?;
        summary::log(&config, &endpoint);
        let mut storage = Storage::open(&config).await?;
        // Recording starts before the services are built: they keep the
        // handles of their metrics.
        let recorder = endpoint
            .metrics_listener
            .is_some()
            .then(metrics::install)
            .transpose()?;
        let services = Services::build(&config, &storage, &endpoint.public_url).await?;
        load_startup_data(&config, &storage.db).await?;
        let background = services.spawn_background(&config, &storage.db);
        let metrics = endpoint
            .metrics_listener
            .zip(recorder)
            .map(|(listener, handle)| (listener, handle, services.metrics_sampler(&storage)));
        let draining = services.portfolio.draining.clone();
        let Services {
            petstore,
            portfolio,
            background: beside,
        } = services;
        let serving = router::build_router(
            &config,
            endpoint.tls.is_some(),
            petstore,
            portfolio,
            storage.shared_counters.clone(),
            failures,
        )?;
        Ok(Self {
            listener: endpoint.listener,
            serving,
            tls: endpoint.tls,
            limits: endpoint.limits,
            local_addr: endpoint.local_addr,
            metrics,
            background,
            _database_lock: storage.database_lock.take(),
            database: storage.db.clone(),
            draining,
            drain: Duration::from_secs(config.http.shutdown_drain_secs),
            mail_worker: beside.mail_worker,
            analytics_writer: beside.analytics_writer,
            reloadable: reload::Reloadable {
                db: storage.db.clone(),
                certificates: endpoint.certificates,
                source: None,
                config,
            },
        })
    }

    /// At SIGHUP, the configuration is read again from `source` (the
    /// binary's: its file, the environment and its flags) rather than the
    /// files the first one names being read again.
    #[must_use]
    pub fn reload_config_from(mut self, source: ConfigSource) -> Self {
        self.reloadable.source = Some(source);
        self
    }

    /// The address actually bound (the port is chosen when 0 was asked).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Where `/metrics` is served, if it is (`--metrics-bind`).
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics
            .as_ref()
            .and_then(|(listener, _, _)| listener.local_addr().ok())
    }

    /// The server's database, for what a test sets up beside the API as
    /// the operator would (an OAuth client), even while the server runs
    /// and when its database is in memory.
    pub fn operator(&self) -> fixtures::Operator {
        fixtures::Operator::of(self.database.clone())
    }

    /// `https` with TLS, `http` without.
    pub fn scheme(&self) -> &'static str {
        if self.tls.is_some() { "https" } else { "http" }
    }

    /// Serves until `shutdown` completes, then finishes the requests in flight.
    pub async fn run(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> anyhow::Result<()> {
        let Server {
            listener,
            serving,
            tls,
            limits,
            background,
            mail_worker: (mailer, mail_task),
            analytics_writer,
            metrics,
            draining,
            drain,
            reloadable,
            ..
        } = self;
        #[cfg(unix)]
        let hangups = tokio::spawn(reload::on_hangup(reloadable));
        #[cfg(not(unix))]
        drop(reloadable);
        // The metrics stay up until the last request is answered.
        let (metrics_stop, metrics_stopped) = tokio::sync::oneshot::channel::<()>();
        let metrics_task = metrics.map(|(listener, handle, sample)| {
            tokio::spawn(metrics::serve(listener, handle, sample, async move {
                let _ = metrics_stopped.await;
            }))
        });
        // Asked to stop: readiness says 503 at once, and the listener goes on
        // serving through the drain period, so that a load balancer that
        // has not yet seen it sends nothing to a closed port; then it stops
        // accepting and finishes what is in flight.
        let stop_accepting = {
            let draining = draining.clone();
            async move {
                shutdown.await;
                draining.start();
                tracing::info!(
                    drain_secs = drain.as_secs(),
                    "stopping: readiness answers 503; serving on through the drain period"
                );
                tokio::time::sleep(drain).await;
                tracing::info!("no longer accepting connections; finishing requests in flight");
            }
        };
        serving(listener, tls, limits, draining, Box::pin(stop_accepting)).await;
        // Let the mail worker finish the email in hand, so that no email stays
        // leased, and the analytics writer write what it holds (both bounded);
        // the other tasks hold nothing.
        mailer.stop();
        let mut mail_task = mail_task;
        if tokio::time::timeout(MAIL_STOP_TIMEOUT, &mut mail_task)
            .await
            .is_err()
        {
            // Cut off mid-delivery: what it holds goes back to the outbox.
            mail_task.abort();
            match mailer.hand_back_leases().await {
                Ok(n) => tracing::warn!(
                    handed_back = n,
                    "the mail worker did not stop in time; its emails are due again"
                ),
                Err(e) => tracing::warn!(error = %e, "cannot hand back the mail worker's leases"),
            }
        }
        if tokio::time::timeout(Duration::from_secs(10), analytics_writer)
            .await
            .is_err()
        {
            tracing::warn!("the analytics writer did not finish in time");
        }
        for task in background {
            task.abort();
        }
        #[cfg(unix)]
        hangups.abort();
        let _ = metrics_stop.send(());
        if let Some(task) = metrics_task {
            let _ = task.await;
        }
        Ok(())
    }
}

/// At a stop, how long the mail worker may take to finish the emails in
/// hand (an SMTP exchange each, bounded by its own timeout).
const MAIL_STOP_TIMEOUT: Duration = Duration::from_secs(10);

/// At a stop, what answers in flight get beyond the request timeout to be
/// sent.
pub(crate) const FINISH_GRACE: Duration = Duration::from_secs(2);

/// The settings no type can hold to: refused before anything opens.
fn check_settings(config: &Config) -> anyhow::Result<()> {
    anyhow::ensure!(
        config.petstore.failed_logins_per_minute > 0,
        "petstore.failed_logins_per_minute must be at least 1"
    );
    anyhow::ensure!(
        config.petstore.enabled || config.portfolio.enabled,
        "petstore.enabled and portfolio.enabled are both false: there is nothing to serve"
    );
    anyhow::ensure!(
        config.petstore.requests_per_minute != Some(0),
        "petstore.requests_per_minute must be at least 1 (leave it out for no limit)"
    );
    Ok(())
}
