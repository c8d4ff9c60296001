//! Email through a transactional outbox (DESIGN 4.2).
//!
//! A request that causes an email calls [`enqueue`] inside its own write
//! transaction, so the email exists exactly when the change does. The
//! [`Mailer`]'s worker then delivers due emails over SMTP (lettre) or, with no
//! SMTP configured, writes them as `.eml` files; it retries failures with
//! exponential backoff and marks each email sent or failed.
//!
//! Delivery is at least once: an email is claimed with a lease before it is
//! sent and marked sent right after, so a worker that stops mid-way leaves it
//! to be sent again only if it stopped between the two. Each email keeps one
//! Message-ID across attempts, which lets receivers drop such a repeat.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use lettre::message::Mailbox;
use lettre::message::header::{ContentType, Header, HeaderName, HeaderValue};
use lettre::transport::smtp::authentication::Credentials;
use lettre::{AsyncFileTransport, AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use rand::RngCore as _;
use sqlx::{AnyConnection, FromRow};
use tokio::sync::Notify;

use crate::config::{MailConfig, SmtpTls};
use crate::storage::Database;

/// An email to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutgoingEmail {
    pub to: String,
    pub subject: String,
    pub body: String,
    /// The one-request unsubscribe URL (RFC 8058) of newsletter emails.
    pub list_unsubscribe: Option<String>,
}

/// Now, in Unix milliseconds (the outbox's and the subscribers' clock).
pub(crate) fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// Writes an email into the outbox, in the caller's transaction.
pub async fn enqueue(conn: &mut AnyConnection, email: &OutgoingEmail) -> Result<(), sqlx::Error> {
    let mut nonce = [0_u8; 16];
    rand::rng().fill_bytes(&mut nonce);
    let nonce: String = nonce.iter().map(|b| format!("{b:02x}")).collect();
    let message_id = format!("<{nonce}@petstore-portfolio>");
    let now = now_ms();
    sqlx::query(
        "INSERT INTO outbox (recipient, subject, body, list_unsubscribe, message_id, status, attempts, \
         next_attempt_at_ms, created_at_ms) VALUES ($1, $2, $3, $4, $5, 'pending', 0, $6, $7)",
    )
    .bind(&email.to)
    .bind(&email.subject)
    .bind(&email.body)
    .bind(&email.list_unsubscribe)
    .bind(message_id)
    .bind(now)
    .bind(now)
    .execute(conn)
    .await?;
    Ok(())
}

/// `List-Unsubscribe: <url>` (RFC 2369).
#[derive(Debug, Clone)]
struct ListUnsubscribe(String);

impl Header for ListUnsubscribe {
    fn name() -> HeaderName {
        HeaderName::new_from_ascii_str("List-Unsubscribe")
    }

    fn parse(s: &str) -> Result<Self, Box<dyn std::error::Error + Send + Sync>> {
        Ok(Self(s.to_owned()))
    }

    fn display(&self) -> HeaderValue {
        HeaderValue::new(Self::name(), self.0.clone())
    }
}

/// `List-Unsubscribe-Post: List-Unsubscribe=One-Click` (RFC 8058).
#[derive(Debug, Clone)]
struct ListUnsubscribePost;

impl Header for ListUnsubscribePost {
    fn name() -> HeaderName {
        HeaderName::new_from_ascii_str("List-Unsubscribe-Post")
    }

    fn parse(_: &str) -> Result<Self, Box<dyn std::error::Error + Send + Sync>> {
        Ok(Self)
    }

    fn display(&self) -> HeaderValue {
        HeaderValue::new(Self::name(), "List-Unsubscribe=One-Click".to_owned())
    }
}

enum Transport {
    Smtp(AsyncSmtpTransport<Tokio1Executor>),
    Files {
        transport: AsyncFileTransport<Tokio1Executor>,
        dir: PathBuf,
    },
}

/// How a delivery attempt ended.
enum Outcome {
    Sent,
    /// Worth another try (connection refused, 4xx).
    Retry(String),
    /// Will never work (5xx: e.g. the recipient was rejected).
    Permanent(String),
}

struct Inner {
    db: Database,
    transport: Transport,
    from: Mailbox,
    config: MailConfig,
    wake: Notify,
    stopping: std::sync::atomic::AtomicBool,
}

/// Delivers the outbox.
#[derive(Clone)]
pub struct Mailer {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Mailer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mailer").finish_non_exhaustive()
    }
}

#[derive(Debug, FromRow)]
struct OutboxRow {
    id: i64,
    recipient: String,
    subject: String,
    body: String,
    list_unsubscribe: Option<String>,
    message_id: String,
    attempts: i32,
}

/// What readiness reports about email.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MailHealth {
    pub transport_ok: bool,
    pub transport_detail: String,
    pub pending: i64,
    pub failed: i64,
    /// How long the oldest due email has waited (seconds).
    pub oldest_due_secs: i64,
}

impl Mailer {
    pub fn new(
        db: Database,
        config: &MailConfig,
        data_dir: &std::path::Path,
    ) -> anyhow::Result<Self> {
        let from: Mailbox = config
            .from
            .parse()
            .with_context(|| format!("mail.from {:?}", config.from))?;
        let transport = match &config.smtp {
            Some(smtp) => {
                let builder = match smtp.tls {
                    SmtpTls::None => {
                        AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(&smtp.host)
                    }
                    SmtpTls::Starttls => {
                        AsyncSmtpTransport::<Tokio1Executor>::starttls_relay(&smtp.host)
                            .context("SMTP STARTTLS set-up")?
                    }
                    SmtpTls::Tls => AsyncSmtpTransport::<Tokio1Executor>::relay(&smtp.host)
                        .context("SMTP TLS set-up")?,
                };
                let mut builder = builder
                    .port(smtp.port)
                    .timeout(Some(Duration::from_secs(smtp.timeout_secs)));
                if let (Some(user), Some(password)) = (&smtp.username, &smtp.password) {
                    builder = builder.credentials(Credentials::new(user.clone(), password.clone()));
                }
                Transport::Smtp(builder.build())
            }
            None => {
                let dir = data_dir.join("outbox");
                std::fs::create_dir_all(&dir)
                    .with_context(|| format!("cannot create the email folder {}", dir.display()))?;
                Transport::Files {
                    transport: AsyncFileTransport::new(&dir),
                    dir,
                }
            }
        };
        Ok(Self {
            inner: Arc::new(Inner {
                db,
                transport,
                from,
                config: config.clone(),
                wake: Notify::new(),
                stopping: std::sync::atomic::AtomicBool::new(false),
            }),
        })
    }

    /// Tells the worker that an email was queued (after the commit).
    pub fn wake(&self) {
        self.inner.wake.notify_one();
    }

    /// The delivery loop, until the process ends.
    /// The delivery loop, until [`stop`](Self::stop).
    pub fn spawn_worker(&self) -> tokio::task::JoinHandle<()> {
        let mailer = self.clone();
        tokio::spawn(async move {
            let poll = Duration::from_millis(mailer.inner.config.poll_interval_ms.max(10));
            while !mailer.stopping() {
                match mailer.deliver_due().await {
                    Ok(0) => {}
                    Ok(n) => tracing::debug!(delivered = n, "outbox pass"),
                    Err(e) => tracing::error!(error = %format!("{e:#}"), "outbox pass failed"),
                }
                tokio::select! {
                    () = mailer.inner.wake.notified() => {}
                    () = tokio::time::sleep(poll) => {}
                }
            }
        })
    }

    /// Asks the worker to stop once the email in hand is delivered and
    /// recorded, so that a graceful shutdown leaves no email leased.
    pub fn stop(&self) {
        self.inner
            .stopping
            .store(true, std::sync::atomic::Ordering::SeqCst);
        self.inner.wake.notify_one();
    }

    fn stopping(&self) -> bool {
        self.inner
            .stopping
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// How long a claim holds: long enough for one delivery attempt. A worker
    /// that dies mid-delivery leaves its email to others after this.
    fn lease_ms(&self) -> i64 {
        let smtp_timeout = self
            .inner
            .config
            .smtp
            .as_ref()
            .map_or(0, |smtp| smtp.timeout_secs);
        i64::try_from(smtp_timeout.saturating_mul(2).saturating_add(30)).unwrap_or(60) * 1000
    }

    /// One pass over the outbox: claims the due emails and tries each once.
    /// Returns how many were handled.
    pub async fn deliver_due(&self) -> anyhow::Result<usize> {
        let db = &self.inner.db;
        let now = now_ms();
        let due: Vec<i64> = sqlx::query_scalar(
            "SELECT id FROM outbox WHERE status = 'pending' AND next_attempt_at_ms <= $1 \
             AND (lease_until_ms IS NULL OR lease_until_ms < $1) ORDER BY id LIMIT 50",
        )
        .bind(now)
        .fetch_all(db.pool())
        .await?;
        let mut handled = 0;
        for id in due {
            if self.stopping() {
                break;
            }
            // Claim it: of several workers (replicas), one wins.
            let lease_until = now_ms() + self.lease_ms();
            let mut tx = db.begin_write().await?;
            let claimed = sqlx::query(
                "UPDATE outbox SET lease_until_ms = $1 WHERE id = $2 AND status = 'pending' \
                 AND (lease_until_ms IS NULL OR lease_until_ms < $3)",
            )
            .bind(lease_until)
            .bind(id)
            .bind(now_ms())
            .execute(tx.conn())
            .await?;
            let row: Option<OutboxRow> = if claimed.rows_affected() == 1 {
                sqlx::query_as(
                    "SELECT id, recipient, subject, body, list_unsubscribe, message_id, attempts \
                     FROM outbox WHERE id = $1",
                )
                .bind(id)
                .fetch_optional(tx.conn())
                .await?
            } else {
                None
            };
            tx.commit().await?;
            let Some(row) = row else { continue };
            let outcome = self.send(&row).await;
            self.record(&row, outcome).await?;
            handled += 1;
        }
        Ok(handled)
    }

    async fn send(&self, row: &OutboxRow) -> Outcome {
        let message = match self.message(row) {
            Ok(message) => message,
            Err(e) => return Outcome::Permanent(format!("cannot build the message: {e}")),
        };
        match &self.inner.transport {
            Transport::Smtp(smtp) => match smtp.send(message).await {
                Ok(_) => Outcome::Sent,
                Err(e) if e.is_permanent() => Outcome::Permanent(e.to_string()),
                Err(e) => Outcome::Retry(e.to_string()),
            },
            Transport::Files { transport, .. } => match transport.send(message).await {
                Ok(_) => Outcome::Sent,
                Err(e) => Outcome::Retry(e.to_string()),
            },
        }
    }

    fn message(&self, row: &OutboxRow) -> anyhow::Result<Message> {
        let to: Mailbox = row.recipient.parse().context("recipient")?;
        let mut builder = Message::builder()
            .from(self.inner.from.clone())
            .to(to)
            .subject(&row.subject)
            .message_id(Some(row.message_id.clone()))
            .header(ContentType::TEXT_PLAIN);
        if let Some(url) = &row.list_unsubscribe {
            builder = builder
                .header(ListUnsubscribe(format!("<{url}>")))
                .header(ListUnsubscribePost);
        }
        Ok(builder.body(row.body.clone())?)
    }

    async fn record(&self, row: &OutboxRow, outcome: Outcome) -> anyhow::Result<()> {
        let mut tx = self.inner.db.begin_write().await?;
        let attempts = row.attempts + 1;
        match outcome {
            Outcome::Sent => {
                sqlx::query(
                    "UPDATE outbox SET status = 'sent', attempts = $1, sent_at_ms = $2, \
                     lease_until_ms = NULL, last_error = NULL WHERE id = $3",
                )
                .bind(attempts)
                .bind(now_ms())
                .bind(row.id)
                .execute(tx.conn())
                .await?;
            }
            Outcome::Retry(error)
                if u32::try_from(attempts).unwrap_or(u32::MAX) < self.inner.config.max_attempts =>
            {
                let delay = self.retry_delay_ms(attempts);
                tracing::warn!(email = row.id, attempts, retry_in_ms = delay, %error, "email not delivered; will retry");
                sqlx::query(
                    "UPDATE outbox SET attempts = $1, next_attempt_at_ms = $2, lease_until_ms = NULL, \
                     last_error = $3 WHERE id = $4",
                )
                .bind(attempts)
                .bind(now_ms() + delay)
                .bind(&error)
                .bind(row.id)
                .execute(tx.conn())
                .await?;
            }
            Outcome::Retry(error) | Outcome::Permanent(error) => {
                tracing::error!(email = row.id, attempts, %error, "email failed for good");
                sqlx::query(
                    "UPDATE outbox SET status = 'failed', attempts = $1, lease_until_ms = NULL, \
                     last_error = $2 WHERE id = $3",
                )
                .bind(attempts)
                .bind(&error)
                .bind(row.id)
                .execute(tx.conn())
                .await?;
            }
        }
        tx.commit().await?;
        Ok(())
    }

    /// base * 2^(attempts - 1), at most an hour.
    fn retry_delay_ms(&self, attempts: i32) -> i64 {
        let base = i64::try_from(self.inner.config.retry_base_ms).unwrap_or(i64::MAX);
        let factor = 1_i64 << (attempts - 1).clamp(0, 20);
        base.saturating_mul(factor).min(3_600_000)
    }

    /// For readiness: can email leave, and how is the outbox doing.
    pub async fn health(&self) -> anyhow::Result<MailHealth> {
        let (transport_ok, transport_detail) = match &self.inner.transport {
            Transport::Smtp(smtp) => {
                match tokio::time::timeout(Duration::from_secs(3), smtp.test_connection()).await {
                    Ok(Ok(true)) => (true, "SMTP server reachable".to_owned()),
                    Ok(Ok(false)) => (false, "SMTP server did not accept a connection".to_owned()),
                    Ok(Err(e)) => (false, format!("SMTP server unreachable: {e}")),
                    Err(_) => (false, "SMTP server did not answer in time".to_owned()),
                }
            }
            Transport::Files { dir, .. } => match std::fs::metadata(dir) {
                Ok(meta) if meta.is_dir() && !meta.permissions().readonly() => {
                    (true, format!("writing .eml files to {}", dir.display()))
                }
                _ => (
                    false,
                    format!("cannot write .eml files to {}", dir.display()),
                ),
            },
        };
        let (pending, failed, oldest_due): (i64, i64, Option<i64>) = sqlx::query_as(
            "SELECT \
               (SELECT COUNT(*) FROM outbox WHERE status = 'pending'), \
               (SELECT COUNT(*) FROM outbox WHERE status = 'failed'), \
               (SELECT MIN(next_attempt_at_ms) FROM outbox WHERE status = 'pending')",
        )
        .fetch_one(self.inner.db.pool())
        .await?;
        let oldest_due_secs = oldest_due
            .map(|at| ((now_ms() - at) / 1000).max(0))
            .unwrap_or(0);
        Ok(MailHealth {
            transport_ok,
            transport_detail,
            pending,
            failed,
            oldest_due_secs,
        })
    }
}
