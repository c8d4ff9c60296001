//! How an email leaves: over SMTP (lettre), or, with no SMTP server
//! configured, as an `.eml` file in a folder. A file appears whole or not
//! at all: it is written under a hidden temporary name in the same folder,
//! synced, then renamed, so a crash never leaves a torn file; and it is named
//! after the email, so delivering it again after a crash rewrites the same
//! file instead of adding one.

use secrecy::ExposeSecret as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;
use lettre::message::header::{ContentType, Header, HeaderName, HeaderValue};
use lettre::message::{Mailbox, MultiPart};
use lettre::transport::smtp::PoolConfig;
use lettre::transport::smtp::authentication::Credentials;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};

use super::outbox::QueuedEmail;
use crate::config::{MailConfig, SmtpConfig, SmtpTls};

/// How a delivery attempt ended.
#[derive(Debug)]
pub(crate) enum Outcome {
    Sent,
    /// Worth another try (connection refused, a timeout, a 4xx reply).
    Retry(String),
    /// Will never work (a 5xx reply, e.g. the recipient was rejected).
    Permanent(String),
}

pub(crate) enum Transport {
    Smtp(AsyncSmtpTransport<Tokio1Executor>),
    /// `.eml` files in this folder.
    Files(PathBuf),
}

impl Transport {
    /// How many emails it can usefully deliver at once: one per SMTP
    /// connection; a few files (each is written and synced on its own).
    pub(crate) fn at_once(config: &MailConfig) -> usize {
        config.smtp.as_ref().map_or(8, |smtp| {
            usize::try_from(smtp.connections.max(1)).unwrap_or(1)
        })
    }

    /// The transport the configuration asks for; the `.eml` folder is made
    /// under `data_dir` if need be.
    pub(crate) fn new(config: &MailConfig, data_dir: &Path) -> anyhow::Result<Self> {
        match &config.smtp {
            Some(smtp) => Ok(Transport::Smtp(smtp_transport(smtp)?)),
            None => {
                let dir = data_dir.join("outbox");
                std::fs::create_dir_all(&dir)
                    .with_context(|| format!("cannot create the email folder {}", dir.display()))?;
                remove_unfinished_files(&dir)?;
                Ok(Transport::Files(dir))
            }
        }
    }

    /// One attempt to deliver `email` from `from`.
    pub(crate) async fn send(&self, from: &Mailbox, email: &QueuedEmail) -> Outcome {
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
            Transport::Files(dir) => match write_whole(dir, email.id, &message.formatted()).await {
                Ok(()) => Outcome::Sent,
                Err(e) => Outcome::Retry(format!("cannot write the .eml file: {e}")),
            },
        }
    }

    /// Can email leave now? With what to say about it.
    pub(crate) async fn check(&self) -> (bool, String) {
        match self {
            Transport::Smtp(smtp) => {
                match tokio::time::timeout(Duration::from_secs(3), smtp.test_connection()).await {
                    Ok(Ok(true)) => (true, "SMTP server reachable".to_owned()),
                    Ok(Ok(false)) => (false, "SMTP server did not accept a connection".to_owned()),
                    Ok(Err(e)) => (false, format!("SMTP server unreachable: {e}")),
                    Err(_) => (false, "SMTP server did not answer in time".to_owned()),
                }
            }
            Transport::Files(dir) => match std::fs::metadata(dir) {
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

/// The file of outbox email `id`.
fn eml_name(id: i64) -> String {
    format!("outbox-{id}.eml")
}

/// Writes `bytes` as `dir/outbox-<id>.eml`: first under a hidden temporary
/// name, synced to disk, then renamed (atomic within a folder), and the
/// folder synced so that the rename itself survives a crash.
async fn write_whole(dir: &Path, id: i64, bytes: &[u8]) -> std::io::Result<()> {
    use tokio::io::AsyncWriteExt as _;
    let name = eml_name(id);
    let temporary = dir.join(format!(".{name}.tmp"));
    let mut file = tokio::fs::File::create(&temporary).await?;
    file.write_all(bytes).await?;
    // tokio finishes a write in the background: flush waits for it and
    // reports its error (a full disk), which sync_all would not.
    file.flush().await?;
    file.sync_all().await?;
    drop(file);
    tokio::fs::rename(&temporary, dir.join(&name)).await?;
    tokio::fs::File::open(dir).await?.sync_all().await
}

/// Removes what a crash left half-written (hidden `.tmp` files); their
/// emails are still pending and are written again.
fn remove_unfinished_files(dir: &Path) -> anyhow::Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let path = entry?.path();
        let unfinished = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with('.') && n.ends_with(".tmp"));
        if unfinished {
            std::fs::remove_file(&path)
                .with_context(|| format!("cannot remove {}", path.display()))?;
        }
    }
    Ok(())
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
        .timeout(Some(Duration::from_secs(smtp.timeout_secs)))
        .pool_config(PoolConfig::new().max_size(smtp.connections.max(1)));
    if let (Some(user), Some(password)) = (&smtp.username, &smtp.password) {
        builder = builder.credentials(Credentials::new(
            user.clone(),
            password.expose_secret().to_owned(),
        ));
    }
    Ok(builder.build())
}

/// The email as a message: text and HTML as `multipart/alternative` (text
/// alone for an email queued without HTML), its Message-ID kept across
/// attempts, and the unsubscribe headers of RFC 2369 and 8058 for
/// newsletter emails.
fn message(from: &Mailbox, email: &QueuedEmail) -> anyhow::Result<Message> {
    // The rule every entry point checked the address with.
    let to = Mailbox::new(
        None,
        super::address::parse(&email.recipient)
            .map_err(|problem| anyhow::anyhow!("recipient: {problem}"))?,
    );
    let mut builder = Message::builder()
        .from(from.clone())
        .to(to)
        .subject(&email.subject)
        .message_id(Some(email.message_id.clone()));
    if let Some(url) = &email.list_unsubscribe {
        builder = builder
            .header(ListUnsubscribe(format!("<{url}>")))
            .header(ListUnsubscribePost);
    }
    Ok(match &email.html_body {
        Some(html) => builder.multipart(MultiPart::alternative_plain_html(
            email.body.clone(),
            html.clone(),
        ))?,
        None => builder
            .header(ContentType::TEXT_PLAIN)
            .body(email.body.clone())?,
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_eml_file_appears_whole_or_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let bytes = vec![b'x'; 64 * 1024 * 1024];
        let size = bytes.len() as u64;
        let folder = dir.path().to_path_buf();
        let writer = tokio::spawn(async move { write_whole(&folder, 7, &bytes).await });
        let path = dir.path().join("outbox-7.eml");
        let mut seen_partial = None;
        while !writer.is_finished() {
            if let Ok(meta) = std::fs::metadata(&path)
                && meta.len() != size
            {
                seen_partial = Some(meta.len());
            }
            tokio::task::yield_now().await;
        }
        writer.await.unwrap().unwrap();
        assert_eq!(seen_partial, None, "the file was visible half-written");
        assert_eq!(std::fs::metadata(&path).unwrap().len(), size);
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["outbox-7.eml"], "no temporary file is left");
    }

    #[test]
    fn what_a_crash_left_half_written_is_removed_at_start() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".outbox-3.eml.tmp"), "half").unwrap();
        std::fs::write(dir.path().join("outbox-2.eml"), "whole").unwrap();
        remove_unfinished_files(dir.path()).unwrap();
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["outbox-2.eml"]);
    }
}
