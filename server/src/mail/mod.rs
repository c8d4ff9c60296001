//! Email through a transactional outbox. lettre sends; the outbox is
//! hand-written because it lives in the transactions of this server's
//! database, which no mail crate sees.
//!
//! A request that causes an email calls [`outbox::enqueue`] inside its own
//! write transaction, so the email exists exactly when the change does. The
//! [`Mailer`]'s worker ([`worker`]) then delivers due emails through the
//! [`transport`] (SMTP, or `.eml` files with no SMTP configured), retries
//! failures with exponential backoff and marks each email sent or failed.
//! What the emails say is in [`templates`].
//!
//! Delivery is at least once: an email is claimed with a lease before it is
//! sent and marked sent right after, so a worker that stops mid-way leaves it
//! to be sent again only if it stopped between the two. Each email keeps one
//! Message-ID across attempts, which lets receivers drop such a repeat.

pub(crate) mod address;
pub(crate) mod outbox;
pub(crate) mod templates;
pub(crate) mod transport;
pub(crate) mod worker;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context as _;
use lettre::message::Mailbox;
use tokio::sync::Notify;

use crate::config::MailConfig;
use crate::core::clock::now_ms;
use crate::storage::{Database, StoreError};
use transport::Transport;

struct Inner {
    db: Database,
    transport: Transport,
    from: Mailbox,
    config: MailConfig,
    wake: Notify,
    stopping: AtomicBool,
    /// The emails this process has claimed and not yet recorded: their
    /// leases are handed back if the worker is cut off at a stop.
    in_hand: std::sync::Mutex<std::collections::HashSet<i64>>,
}

/// Delivers the outbox.
#[derive(Clone)]
pub(crate) struct Mailer {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Mailer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mailer").finish_non_exhaustive()
    }
}

/// What readiness reports about email.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MailHealth {
    pub(crate) transport_ok: bool,
    pub(crate) transport_detail: String,
    pub(crate) pending: i64,
    pub(crate) failed: i64,
    /// How long the oldest due email has waited (seconds).
    pub(crate) oldest_due_secs: i64,
}

impl Mailer {
    pub(crate) fn new(
        db: Database,
        config: &MailConfig,
        data_dir: &std::path::Path,
    ) -> anyhow::Result<Self> {
        let from: Mailbox = config
            .from
            .parse()
            .with_context(|| format!("mail.from {:?}", config.from))?;
        Ok(Self {
            inner: Arc::new(Inner {
                db,
                transport: Transport::new(config, data_dir)?,
                from,
                config: config.clone(),
                wake: Notify::new(),
                stopping: AtomicBool::new(false),
                in_hand: std::sync::Mutex::default(),
            }),
        })
    }

    /// Tells the worker that an email was queued (after the commit).
    pub(crate) fn wake(&self) {
        self.inner.wake.notify_one();
    }

    /// The delivery loop, until [`stop`](Self::stop).
    pub(crate) fn spawn_worker(&self) -> tokio::task::JoinHandle<()> {
        tokio::spawn(worker::run(self.clone()))
    }

    /// Asks the worker to stop once the email in hand is delivered and
    /// recorded, so that a graceful shutdown leaves no email leased.
    pub(crate) fn stop(&self) {
        self.inner.stopping.store(true, Ordering::SeqCst);
        self.inner.wake.notify_one();
    }

    fn stopping(&self) -> bool {
        self.inner.stopping.load(Ordering::SeqCst)
    }

    /// Notes email `id` claimed (true) or recorded (false).
    fn hold(&self, id: i64, held: bool) {
        let mut in_hand = self
            .inner
            .in_hand
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if held {
            in_hand.insert(id);
        } else {
            in_hand.remove(&id);
        }
    }

    /// Hands back the leases of the emails still in hand (the worker was
    /// stopped before it recorded them), so that another replica, or this
    /// one after its restart, delivers them at once rather than when the
    /// leases run out. Returns how many.
    pub(crate) async fn hand_back_leases(&self) -> Result<usize, StoreError> {
        let ids: Vec<i64> = {
            let mut in_hand = self
                .inner
                .in_hand
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            in_hand.drain().collect()
        };
        for id in &ids {
            outbox::release(&self.inner.db, *id).await?;
        }
        Ok(ids.len())
    }

    /// For readiness: can email leave, and how is the outbox doing.
    pub(crate) async fn health(&self) -> Result<MailHealth, StoreError> {
        let (transport_ok, transport_detail) = self.inner.transport.check().await;
        let backlog = outbox::backlog(&self.inner.db).await?;
        Ok(MailHealth {
            transport_ok,
            transport_detail,
            pending: backlog.pending,
            failed: backlog.failed,
            oldest_due_secs: oldest_due_secs(&backlog),
        })
    }

    /// Sets the outbox's gauges (for a scrape of the metrics).
    pub(crate) async fn sample_metrics(&self) {
        match outbox::backlog(&self.inner.db).await {
            Ok(backlog) => {
                crate::telemetry::metrics::outbox_backlog(
                    backlog.pending,
                    oldest_due_secs(&backlog),
                );
            }
            Err(e) => tracing::warn!(error = %e, "cannot read the outbox for the metrics"),
        }
    }
}

/// How long the oldest due email has waited (seconds; 0 if none is due).
fn oldest_due_secs(backlog: &outbox::Backlog) -> i64 {
    backlog
        .oldest_due_ms
        .map(|at| ((now_ms() - at) / 1000).max(0))
        .unwrap_or(0)
}
