//! What the portfolio's handlers reach: its state, one pointer to what it
//! shares, and from it what the reads and the operations need.

use std::sync::Arc;
use std::time::Instant;

use crate::access::Access;
use crate::access::ops::tokens::TokenService;
use crate::config::{MailConfig, PortfolioConfig};
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

impl PortfolioState {
    /// What the reads need of the state.
    pub(crate) fn reads(&self) -> reads::Context<'_> {
        reads::Context {
            db: &self.db,
            caches: &self.caches,
        }
    }

    /// What the operations need of the state.
    pub(crate) fn ops(&self) -> ops::Context<'_> {
        ops::Context {
            db: &self.db,
            access: Some(&self.access),
            mailer: Some(&self.mailer),
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
}
