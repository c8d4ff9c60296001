//! How an email leaves: over SMTP (lettre), or, with no SMTP server
//! configured, as an `.eml` file in a folder.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;
use lettre::message::Mailbox;
use lettre::message::header::{ContentType, Header, HeaderName, HeaderValue};
use lettre::transport::smtp::authentication::Credentials;
use lettre::{AsyncFileTransport, AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};

use super::outbox::QueuedEmail;
use crate::config::{MailConfig, SmtpConfig, SmtpTls};

/// How a delivery attempt ended.
#[derive(Debug)]
pub enum Outcome {
    Sent,
    /// Worth another try (connection refused, a timeout, a 4xx reply).
    Retry(String),
    /// Will never work (a 5xx reply, e.g. the recipient was rejected).
    Permanent(String),
}

pub enum Transport {
    Smtp(AsyncSmtpTransport<Tokio1Executor>),
    Files {
        transport: AsyncFileTransport<Tokio1Executor>,
        dir: PathBuf,
    },
}

impl Transport {
    /// The transport the configuration asks for; the `.eml` folder is made
    /// under `data_dir` if need be.
    pub fn new(config: &MailConfig, data_dir: &Path) -> anyhow::Result<Self> {
        match &config.smtp {
            Some(smtp) => Ok(Transport::Smtp(smtp_transport(smtp)?)),
            None => {
                let dir = data_dir.join("outbox");
                std::fs::create_dir_all(&dir)
                    .with_context(|| format!("cannot create the email folder {}", dir.display()))?;
                Ok(Transport::Files {
                    transport: AsyncFileTransport::new(&dir),
                    dir,
                })
            }
        }
    }

    /// One attempt to deliver `email` from `from`.
    pub async fn send(&self, from: &Mailbox, email: &QueuedEmail) -> Outcome {
        let message = match message(from, email) {
            Ok(message) => message,
            Err(e) => return Outcome::Permanent(format!("cannot build the message: {e}")),
        };
        match self {
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

    /// Can email leave now? With what to say about it.
    pub async fn check(&self) -> (bool, String) {
        match self {
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
        }
    }
}

fn smtp_transport(smtp: &SmtpConfig) -> anyhow::Result<AsyncSmtpTransport<Tokio1Executor>> {
    let builder = match smtp.tls {
        SmtpTls::None => AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(&smtp.host),
        SmtpTls::Starttls => AsyncSmtpTransport::<Tokio1Executor>::starttls_relay(&smtp.host)
            .context("SMTP STARTTLS set-up")?,
        SmtpTls::Tls => {
            AsyncSmtpTransport::<Tokio1Executor>::relay(&smtp.host).context("SMTP TLS set-up")?
        }
    };
    let mut builder = builder
        .port(smtp.port)
        .timeout(Some(Duration::from_secs(smtp.timeout_secs)));
    if let (Some(user), Some(password)) = (&smtp.username, &smtp.password) {
        builder = builder.credentials(Credentials::new(user.clone(), password.clone()));
    }
    Ok(builder.build())
}

/// The email as a message: plain text, its Message-ID kept across attempts,
/// and the unsubscribe headers of RFC 2369 and 8058 for newsletter emails.
fn message(from: &Mailbox, email: &QueuedEmail) -> anyhow::Result<Message> {
    let to: Mailbox = email.recipient.parse().context("recipient")?;
    let mut builder = Message::builder()
        .from(from.clone())
        .to(to)
        .subject(&email.subject)
        .message_id(Some(email.message_id.clone()))
        .header(ContentType::TEXT_PLAIN);
    if let Some(url) = &email.list_unsubscribe {
        builder = builder
            .header(ListUnsubscribe(format!("<{url}>")))
            .header(ListUnsubscribePost);
    }
    Ok(builder.body(email.body.clone())?)
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
