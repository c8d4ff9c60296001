//! The emails the server sent, read back from the `.eml` files it writes
//! into `<data_dir>/outbox` when no SMTP server is configured (the test
//! kit's default).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::TestServer;

/// How long [`TestServer::wait_for_emails`] waits.
pub const EMAIL_PATIENCE: Duration = Duration::from_secs(10);

/// One email the server sent.
#[derive(Debug, Clone)]
pub struct SentEmail {
    /// The recipients' addresses (`To`).
    pub to: Vec<String>,
    pub subject: String,
    /// The plain-text body, decoded.
    pub text: String,
    /// The HTML body, decoded (`multipart/alternative`'s HTML part); empty
    /// when the email has none.
    pub html: String,
    /// Every header, in order, as written (unfolded, not decoded).
    pub headers: Vec<(String, String)>,
    /// The file it was read from.
    pub path: PathBuf,
}

impl SentEmail {
    /// The first value of the header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.trim())
    }

    /// The first link in the body that starts with `prefix` (e.g. the
    /// server's URL followed by `/api/newsletter/confirm`).
    pub fn link(&self, prefix: &str) -> Option<String> {
        let start = self.text.find(prefix)?;
        let link = self.text[start..]
            .split(|c: char| c.is_whitespace() || c == '>' || c == '"')
            .next()?;
        Some(link.to_owned())
    }

    fn read(path: &Path) -> Option<SentEmail> {
        let bytes = std::fs::read(path).ok()?;
        let message = mail_parser::MessageParser::default().parse(&bytes)?;
        let to = message
            .to()
            .map(|to| {
                to.iter()
                    .filter_map(|addr| addr.address())
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        Some(SentEmail {
            to,
            subject: message.subject().unwrap_or_default().to_owned(),
            text: message
                .body_text(0)
                .map(|text| text.into_owned())
                .unwrap_or_default(),
            html: message
                .html_bodies()
                .next()
                .filter(|part| part.is_text_html())
                .and_then(|part| part.text_contents())
                .map(str::to_owned)
                .unwrap_or_default(),
            headers: message
                .headers_raw()
                .map(|(name, value)| (name.to_owned(), unfold(value)))
                .collect(),
            path: path.to_path_buf(),
        })
    }
}

/// A header's value on one line.
fn unfold(value: &str) -> String {
    value
        .split(['\r', '\n'])
        .map(str::trim_start)
        .collect::<Vec<_>>()
        .join(" ")
        .trim()
        .to_owned()
}

impl TestServer {
    /// The emails sent so far, oldest first. Emails leave through an outbox,
    /// a moment after the call that sends them: [`wait_for_emails`](Self::wait_for_emails)
    /// waits for them. (With an SMTP server configured, they go there
    /// instead, and this is empty.)
    pub fn emails(&self) -> Vec<SentEmail> {
        let folder = self.data_dir().join("outbox");
        let Ok(entries) = std::fs::read_dir(&folder) else {
            return Vec::new();
        };
        let mut files: Vec<(u64, PathBuf)> = entries
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter_map(|path| {
                // `outbox-<id>.eml`: the outbox's ids rise as emails are queued.
                let id = path
                    .file_name()?
                    .to_str()?
                    .strip_prefix("outbox-")?
                    .strip_suffix(".eml")?
                    .parse()
                    .ok()?;
                Some((id, path))
            })
            .collect();
        files.sort();
        files
            .iter()
            .filter_map(|(_, path)| SentEmail::read(path))
            .collect()
    }

    /// Waits until at least `count` emails have been sent (at most
    /// [`EMAIL_PATIENCE`]), and returns them all.
    ///
    /// # Panics
    /// When fewer have been sent by then: the message says how many were.
    pub async fn wait_for_emails(&self, count: usize) -> Vec<SentEmail> {
        let deadline = Instant::now() + EMAIL_PATIENCE;
        loop {
            let emails = self.emails();
            if emails.len() >= count {
                return emails;
            }
            assert!(
                Instant::now() < deadline,
                "{count} email(s) expected within {:?}, {} sent",
                EMAIL_PATIENCE,
                emails.len()
            );
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }
}
