//! Both services' state, built from what the server opened, the tasks that
//! keep it fresh, and the data an empty store starts with.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;

use super::resources::Storage;
use crate::access::Access;
use crate::config::Config;
use crate::http::idempotency;
use crate::petstore::ops::demo_data;
use crate::petstore::state::PetstoreState;
use crate::portfolio;
use crate::portfolio::state::{Background, PortfolioState};
use crate::storage::Database;
use crate::telemetry::metrics::{self as metrics, Sampler};

/// Both services' state, and the tasks that run beside them.
pub(super) struct Services {
    pub(super) petstore: PetstoreState,
    pub(super) portfolio: PortfolioState,
    /// The portfolio's mail worker and analytics writer.
    pub(super) background: Background,
}

impl Services {
    pub(super) async fn build(
        config: &Config,
        storage: &Storage,
        public_url: &str,
    ) -> anyhow::Result<Self> {
        let db = &storage.db;
        let shared_counters = storage.shared_counters.as_ref();
        let access = Arc::new(
            Access::load(db, &config.portfolio.api_keys)
                .await
                .context("cannot load the API keys")?,
        );
        let petstore = PetstoreState::build(
            db,
            &config.petstore,
            access.clone(),
            public_url,
            shared_counters,
        )?;
        let (portfolio, background) =
            PortfolioState::build(db, config, access, public_url, shared_counters)?;
        Ok(Services {
            petstore,
            portfolio,
            background,
        })
    }

    /// What sets the gauges read when `/metrics` is scraped: the database
    /// pool, the outbox and Redis's state.
    pub(super) fn metrics_sampler(&self, storage: &Storage) -> Sampler {
        let db = storage.db.clone();
        let mailer = self.portfolio.mailer.clone();
        let shared_counters = storage.shared_counters.clone();
        Arc::new(move || {
            let (db, mailer, shared_counters) =
                (db.clone(), mailer.clone(), shared_counters.clone());
            Box::pin(async move {
                let (open, idle) = db.pool_connections();
                metrics::db_pool(open, idle);
                mailer.sample_metrics().await;
                metrics::redis_fallback(
                    shared_counters.is_some_and(|counters| counters.problem().is_some()),
                );
            })
        })
    }

    /// The tasks that keep the state fresh: the credentials' refresh, the
    /// sweep of old idempotency keys, the demo data's periodic reset.
    pub(super) fn spawn_background(
        &self,
        config: &Config,
        db: &Database,
    ) -> Vec<tokio::task::JoinHandle<()>> {
        let mut background = vec![
            self.portfolio.access.spawn_refresh(db.clone()),
            idempotency::spawn_sweeper(db.clone(), config.http.idempotency_keys_kept()),
        ];
        if let Some(secs) = config
            .petstore
            .demo_reset_interval_secs
            .filter(|s| *s > 0 && config.petstore.enabled)
        {
            background.push(demo_data::spawn_periodic_reset(
                db.clone(),
                Duration::from_secs(secs),
            ));
        }
        background
    }
}

/// Fills empty tables on the first start: the demo pets (if configured)
/// and the portfolio's content. Replicas starting at once take turns.
pub(super) async fn load_startup_data(config: &Config, db: &Database) -> anyhow::Result<()> {
    let startup = db
        .lock_for_startup()
        .await
        .context("cannot take the startup lock")?;
    if config.petstore.enabled && config.petstore.demo_data {
        demo_data::load_if_empty(db)
            .await
            .context("cannot load the demo data")?;
    }
    if !config.portfolio.enabled {
        return startup
            .release()
            .await
            .context("cannot release the startup lock");
    }
    portfolio::ops::content::load_if_empty(db, config.portfolio.content_file.as_deref())
        .await
        .context("cannot load the portfolio content")?;
    // Loaded only into an empty database: a file changed since says so.
    if let Some(file) = config.portfolio.content_file.as_deref() {
        match portfolio::ops::content::import(db, Some(file), true).await {
            Ok(diff) if !diff.is_empty() => tracing::warn!(
                file = %file.display(),
                changes = %diff.lines().join("; "),
                "the content file differs from the database; load it with \
                 `petstore-portfolio content import` or SIGHUP"
            ),
            Ok(_) => {}
            Err(e) => tracing::warn!(
                file = %file.display(),
                error = %format!("{e:#}"),
                "the content file cannot be read; the database's content is served"
            ),
        }
    }
    startup
        .release()
        .await
        .context("cannot release the startup lock")
}
