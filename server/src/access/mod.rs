//! The credentials the server hands out and checks: API keys for both
//! services ([`keys`]) and the portfolio's OAuth clients and bearer tokens
//! ([`tokens`]). Each service decides which it asks for on which operation
//! (`portfolio::api::auth`, `petstore::api::auth`); this module only says what a
//! presented credential is.
//!
//! Credentials are cached in memory, so that checking one costs no database
//! round trip. Other processes on the same database (the operator's CLI,
//! other replicas) bump the access version when they change something;
//! [`Access::refresh`], run every second, notices and reloads.

pub(crate) mod db;
pub(crate) mod keys;
pub(crate) mod model;
pub(crate) mod ops;
pub(crate) mod sessions;
pub(crate) mod tokens;

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use crate::config::ConfiguredApiKey;
use crate::core::clock::now_ms;
use crate::storage::{Database, StoreError};
use keys::KeyStore;
pub use model::Service;
use sessions::{RememberedLogins, SessionCache};
use tokens::TokenStore;

/// How often the server looks for changes other processes made, and writes
/// when keys were last used.
const REFRESH_EVERY: Duration = Duration::from_secs(1);

/// How often expired tokens are swept from the cache and the database.
const SWEEP_EVERY: Duration = Duration::from_secs(3600);

/// Expired tokens are kept this long (for the operator's questions), then
/// deleted.
const KEEP_EXPIRED_TOKENS_MS: i64 = 24 * 3600 * 1000;

/// Who may do what: the keys and tokens the server accepts.
#[derive(Debug)]
pub(crate) struct Access {
    pub(crate) keys: KeyStore,
    pub(crate) tokens: TokenStore,
    /// Pet store sessions (`loginUser`, the implicit flow).
    pub(crate) sessions: SessionCache,
    /// Pet store users' names and passwords that verified a moment ago.
    pub(crate) logins: RememberedLogins,
    /// The access version the caches agree with.
    version: AtomicI64,
    /// Where credentials not yet cached are looked up.
    db: Database,
}

impl Access {
    pub(crate) async fn load(
        db: &Database,
        configured: &[ConfiguredApiKey],
    ) -> Result<Self, StoreError> {
        let version = db::version(db).await?;
        Ok(Access {
            keys: KeyStore::load(db, configured).await?,
            tokens: TokenStore::default(),
            sessions: SessionCache::default(),
            logins: RememberedLogins::default(),
            version: AtomicI64::new(version),
            db: db.clone(),
        })
    }

    /// Credentials on a database of their own, in memory, with the keys
    /// `configured`: for unit tests of what judges credentials.
    #[cfg(test)]
    pub(crate) async fn in_memory(configured: &[ConfiguredApiKey]) -> Access {
        let db = Database::connect("sqlite::memory:")
            .await
            .unwrap_or_else(|e| panic!("an in-memory database: {e:#}"));
        Access::load(&db, configured)
            .await
            .unwrap_or_else(|e| panic!("the keys load: {e:#}"))
    }

    /// What a presented bearer token is: from the cache, or looked up once.
    pub(crate) async fn verify_token(
        &self,
        presented: &str,
    ) -> Result<tokens::TokenVerdict, StoreError> {
        self.tokens.verify(&self.db, presented).await
    }

    /// Reloads what another process changed, if anything.
    pub(crate) async fn refresh(&self, db: &Database) -> Result<(), StoreError> {
        let version = db::version(db).await?;
        if version == self.version.load(Ordering::SeqCst) {
            return Ok(());
        }
        self.tokens.clear();
        self.sessions.clear();
        self.logins.clear();
        if self.keys.reload(db).await? {
            self.version.store(version, Ordering::SeqCst);
        }
        Ok(())
    }

    /// Keeps the caches in step with other processes and writes last-used
    /// times, every second, and sweeps expired tokens every hour, until the
    /// process ends.
    pub(crate) fn spawn_refresh(self: &Arc<Self>, db: Database) -> tokio::task::JoinHandle<()> {
        let access = self.clone();
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(REFRESH_EVERY);
            let mut last_sweep = tokio::time::Instant::now();
            loop {
                ticks.tick().await;
                if let Err(e) = access.refresh(&db).await {
                    tracing::warn!(error = %e, "cannot reload the credentials; keeping the ones known");
                }
                access.record_key_uses(&db).await;
                if last_sweep.elapsed() >= SWEEP_EVERY {
                    last_sweep = tokio::time::Instant::now();
                    let now = now_ms();
                    access.tokens.sweep(now);
                    if let Err(e) =
                        db::delete_expired_tokens(&db, now - KEEP_EXPIRED_TOKENS_MS).await
                    {
                        tracing::warn!(error = %e, "cannot delete expired tokens");
                    }
                }
            }
        })
    }

    /// Revokes a token, which stops working at once.
    pub(crate) async fn revoke_token(&self, db: &Database, id: &str) -> Result<bool, StoreError> {
        let revoked = db::revoke_token(db, id, chrono::Utc::now()).await?;
        self.tokens.forget(id);
        Ok(revoked)
    }

    /// Writes when keys were last used (also at shutdown, so that none is lost).
    pub(crate) async fn record_key_uses(&self, db: &Database) {
        if let Err(e) = self.keys.record_uses(db).await {
            tracing::warn!(error = %e, "cannot record when API keys were used");
        }
    }
}
