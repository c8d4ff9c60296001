//! What the portfolio's handlers reach: its state, one pointer to what it
//! shares, and from it what the reads and the operations need.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;

use crate::access::Access;
use crate::access::ops::tokens::TokenService;
use crate::config::{Config, MailConfig, PortfolioConfig};
use crate::core::lifecycle::Draining;
use crate::http::service_state::ServiceState;
use crate::limits::Limiter;
use crate::limits::shared_counters::SharedCounters;
use crate::mail::Mailer;
use crate::portfolio::ops;
use crate::portfolio::ops::analytics::Recorder;
use crate::portfolio::reads;
use crate::storage::Database;

/// What every portfolio handler can reach.
pub(crate) type PortfolioState = ServiceState<Shared>;

/// What the portfolio's state holds.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) db: Database,
    /// The keys and tokens the service accepts.
    pub(crate) access: Arc<Access>,
    pub(crate) config: Arc<PortfolioConfig>,
    pub(crate) mail: Arc<MailConfig>,
    pub(crate) mailer: Mailer,
    /// Base URL for links in emails, without a trailing slash.
    pub(crate) public_url: Arc<str>,
    /// Where requests and page views are counted.
    pub(crate) analytics: Recorder,
    /// Counts failed client authentications at the OAuth endpoints.
    pub(crate) client_auth_failures: Arc<Limiter>,
    /// Counts requests for API keys per client address (hourly).
    pub(crate) key_request_limiter: Arc<Limiter>,
    /// For calls to other services (the social network); one pool for all.
    pub(crate) http: reqwest::Client,
    pub(crate) started: Instant,
    /// Answers kept in memory while still current.
    pub(crate) caches: reads::Caches,
    /// The rate limits' counters in Redis, if configured (for readiness).
    pub(crate) shared_counters: Option<Arc<SharedCounters>>,
    /// On once the server is stopping: readiness answers 503.
    pub(crate) draining: Draining,
}

/// What runs beside the portfolio: the mail worker (stopped gracefully:
/// it finishes the email in hand) and the analytics writer (which ends by
/// itself once every sender is gone, after writing what it holds).
#[derive(Debug)]
pub(crate) struct Background {
    pub(crate) mail_worker: (Mailer, tokio::task::JoinHandle<()>),
    pub(crate) analytics_writer: tokio::task::JoinHandle<()>,
}

impl PortfolioState {
    /// The portfolio's state on `db`, and the tasks it starts: the mail
    /// worker and the analytics writer.
    pub(crate) fn build(
        db: &Database,
        config: &Config,
        access: Arc<Access>,
        public_url: &str,
        shared_counters: Option<&Arc<SharedCounters>>,
    ) -> anyhow::Result<(PortfolioState, Background)> {
        let mailer = Mailer::new(db.clone(), &config.mail, &config.data_dir)?;
        let mail_worker = (mailer.clone(), mailer.spawn_worker());
        let (analytics, analytics_writer) = Recorder::start(
            db.clone(),
            Duration::from_millis(config.portfolio.analytics_flush_interval_ms.max(10)),
        );
        let limiter = |limiter: Limiter, name| Arc::new(limiter.shared_as(shared_counters, name));
        let state = PortfolioState::new(Shared {
            db: db.clone(),
            access,
            config: Arc::new(config.portfolio.clone()),
            mail: Arc::new(config.mail.clone()),
            mailer,
            public_url: Arc::from(public_url),
            analytics,
            client_auth_failures: limiter(Limiter::default(), "client-auth-failures"),
            key_request_limiter: limiter(Limiter::with_window(3600), "key-requests"),
            shared_counters: shared_counters.cloned(),
            http: reqwest::Client::builder()
                .user_agent(concat!("petstore-portfolio/", env!("CARGO_PKG_VERSION")))
                .build()
                .context("cannot build the HTTP client")?,
            started: Instant::now(),
            draining: Draining::default(),
            caches: reads::Caches::new(db),
        });
        let background = Background {
            mail_worker,
            analytics_writer,
        };
        Ok((state, background))
    }

    /// What the operations need of the state.
    pub(crate) fn ops(&self) -> ops::Context<'_> {
        ops::Context {
            db: &self.db,
            access: Some(&self.access),
            mailer: Some(&self.mailer),
            public_url: &self.public_url,
        }
    }

    /// What the token endpoints' operations need of the state.
    pub(crate) fn token_service(&self) -> TokenService<'_> {
        TokenService {
            db: &self.db,
            access: &self.access,
            failures: &self.client_auth_failures,
            config: self.config.oauth,
        }
    }

    /// What the reads need of the state.
    pub(crate) fn reads(&self) -> reads::Context<'_> {
        self.caches.reader(&self.db)
    }
}
