//! Email settings (`[mail]`): the sender, the SMTP server, and how the outbox
//! retries.

use schemars::JsonSchema;
use secrecy::SecretString;
use serde::{Deserialize, Serialize};

/// Email settings.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct MailConfig {
    /// The sender of every email, e.g. `Portfolio <noreply@example.com>`.
    pub from: String,
    /// Where contact-form notifications go (the site owner).
    pub owner_address: String,
    /// The SMTP server; without one, emails are written as `.eml` files into
    /// `<data_dir>/outbox`.
    pub smtp: Option<SmtpConfig>,
    /// How long an email may wait for a transient failure to pass (the SMTP
    /// server down or refusing for now) before it is marked failed
    /// (seconds; default 3 days, like a mail server's queue lifetime). A
    /// permanent refusal (5xx) fails it at once.
    pub lifetime_secs: u64,
    /// Delay before the first retry (milliseconds); it doubles each time, up
    /// to `max_retry_delay_ms`.
    pub retry_base_ms: u64,
    /// The longest wait between two attempts (milliseconds; default an hour).
    pub max_retry_delay_ms: u64,
    /// How often the worker looks for due emails when nothing wakes it (milliseconds).
    pub poll_interval_ms: u64,
}

impl Default for MailConfig {
    fn default() -> Self {
        Self {
            from: "Portfolio <noreply@localhost>".to_owned(),
            owner_address: "owner@localhost".to_owned(),
            smtp: None,
            lifetime_secs: 3 * 24 * 3600,
            retry_base_ms: 1000,
            max_retry_delay_ms: 3_600_000,
            poll_interval_ms: 1000,
        }
    }
}

/// An SMTP server.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SmtpConfig {
    pub host: String,
    #[serde(default = "default_smtp_port")]
    pub port: u16,
    #[serde(default)]
    pub tls: SmtpTls,
    pub username: Option<String>,
    /// Give it through the configuration file or the environment.
    #[schemars(with = "Option<String>")]
    pub password: Option<SecretString>,
    /// Seconds before a connection or command gives up.
    #[serde(default = "default_smtp_timeout")]
    pub timeout_secs: u64,
    /// Connections open to the server at most, each delivering one email at
    /// a time. Several are needed for speed: lettre sends the end of an
    /// email's data as a packet of its own, which waits for the server's
    /// delayed acknowledgement of the one before (Nagle's algorithm), tens
    /// of milliseconds per email; parallel connections hide that wait.
    #[serde(default = "default_smtp_connections")]
    pub connections: u32,
}

fn default_smtp_connections() -> u32 {
    32
}

fn default_smtp_port() -> u16 {
    587
}

fn default_smtp_timeout() -> u64 {
    10
}

/// How the SMTP connection is secured.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SmtpTls {
    /// Plain text (local relays and tests only).
    None,
    /// Upgrade with STARTTLS (port 587).
    #[default]
    Starttls,
    /// TLS from the start (port 465).
    Tls,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_password_never_shows_in_debug_output() {
        let smtp = SmtpConfig {
            host: "smtp".into(),
            port: 587,
            tls: SmtpTls::Starttls,
            username: Some("u".into()),
            password: Some("s3cret".into()),
            timeout_secs: 5,
            connections: 4,
        };
        assert!(!format!("{smtp:?}").contains("s3cret"));
    }
}
