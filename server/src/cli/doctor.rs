//! `doctor`: what `serve` would open, checked one part at a time before a
//! start (or beside a running server), each part's finding on a line of
//! its own; the exit code is non-zero when a part fails.

use std::time::Duration;

use serde::Serialize;

use crate::config::{Config, redact_url};
use crate::http::tls;
use crate::mail::transport::Transport;
use crate::storage::migrations;

/// How long a part that is asked over the network may take to answer.
const TIMEOUT: Duration = Duration::from_secs(5);

/// A certificate this close to its end is reported (it still passes).
const EXPIRY_WARNING_DAYS: i64 = 14;

/// One part's finding.
#[derive(Debug, Serialize)]
struct Finding {
    check: &'static str,
    ok: bool,
    detail: String,
}

impl Finding {
    fn of(check: &'static str, result: anyhow::Result<String>) -> Self {
        match result {
            Ok(detail) => Finding {
                check,
                ok: true,
                detail,
            },
            Err(e) => Finding {
                check,
                ok: false,
                detail: super::error_line(&e),
            },
        }
    }
}

#[derive(Debug, Serialize)]
struct Report {
    ok: bool,
    checks: Vec<Finding>,
}

/// Checks every part of `config`'s setup.
pub async fn run(config: &Config, json: bool) -> anyhow::Result<()> {
    let checks = vec![
        Finding::of("configuration", Ok(configuration(config))),
        Finding::of("data directory", data_dir(config)),
        Finding::of("database", database(config).await),
        Finding::of("mail", mail(config).await),
        Finding::of("redis", redis(config).await),
        Finding::of("certificate", certificate(config)),
    ];
    report(json, checks)
}

/// The doctor's report when the configuration itself cannot be read.
pub fn report_configuration_error(json: bool, error: &dyn std::fmt::Display) -> anyhow::Result<()> {
    let error = anyhow::anyhow!("invalid configuration: {error}");
    report(json, vec![Finding::of("configuration", Err(error))])
}

fn report(json: bool, checks: Vec<Finding>) -> anyhow::Result<()> {
    let failed = checks.iter().filter(|c| !c.ok).count();
    let report = Report {
        ok: failed == 0,
        checks,
    };
    super::print(json, &report, || {
        let mut lines: Vec<String> = report
            .checks
            .iter()
            .map(|c| {
                let mark = if c.ok { "ok  " } else { "FAIL" };
                format!("{mark}\t{}\t{}", c.check, c.detail)
            })
            .collect();
        lines.push(match failed {
            0 => "all checks passed".to_owned(),
            n => format!("{n} check(s) failed"),
        });
        lines
    })?;
    if failed > 0 {
        return Err(super::Reported.into());
    }
    Ok(())
}

fn configuration(config: &Config) -> String {
    let services = config.services_on().join(", ");
    format!(
        "profile {}; serving {services} on {}",
        config.profile.as_str(),
        config.bind
    )
}

/// The data directory exists (or can be made) and takes a file.
fn data_dir(config: &Config) -> anyhow::Result<String> {
    use anyhow::Context as _;
    let dir = &config.data_dir;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let probe = dir.join(format!(".doctor-{}", std::process::id()));
    std::fs::write(&probe, b"probe")
        .with_context(|| format!("{} is not writable", dir.display()))?;
    let _ = std::fs::remove_file(&probe);
    Ok(format!("{} is writable", dir.display()))
}

/// The database answers, and where it stands against the migrations.
async fn database(config: &Config) -> anyhow::Result<String> {
    let url = config.database_url();
    tokio::time::timeout(TIMEOUT, migrations::reach(&url))
        .await
        .map_err(|_| anyhow::anyhow!("{} did not answer in time", redact_url(&url)))??;
    let db = tokio::time::timeout(TIMEOUT, migrations::open(&url, Some(1)))
        .await
        .map_err(|_| anyhow::anyhow!("{} did not answer in time", redact_url(&url)))??;
    let status = migrations::status(&db).await;
    db.close().await;
    let status = status?;
    anyhow::ensure!(
        status.unknown.is_empty(),
        "{} has migration(s) {:?} of a newer server: this one would refuse it",
        redact_url(&url),
        status.unknown
    );
    let at = status.applied.last().map_or_else(
        || "empty".to_owned(),
        |m| format!("at migration {}", m.version),
    );
    let pending = match status.pending.len() {
        0 => "none pending".to_owned(),
        n => format!("{n} pending (applied at the next start, or by `migrate`)"),
    };
    Ok(format!(
        "{} ({}), {at}, {pending}",
        redact_url(&url),
        status.backend.name()
    ))
}

/// SMTP: the server greets, and takes the TLS and login the configuration
/// asks for; without SMTP, the outbox folder is writable.
async fn mail(config: &Config) -> anyhow::Result<String> {
    let transport = match &config.mail.smtp {
        Some(_) => Transport::new(&config.mail, &config.data_dir)?,
        // Not `Transport::new`, which clears the half-written files of a
        // server that may be running beside this.
        None => {
            let outbox = config.data_dir.join("outbox");
            if !outbox.exists() {
                return Ok(format!(
                    ".eml files will be written to {} (made at the first start; no SMTP \
                     server configured)",
                    outbox.display()
                ));
            }
            Transport::Files(outbox)
        }
    };
    let (ok, detail) = transport.check().await;
    let detail = match &config.mail.smtp {
        Some(smtp) => format!("{detail} ({}:{})", smtp.host, smtp.port),
        None => format!("{detail} (no SMTP server configured)"),
    };
    anyhow::ensure!(ok, "{detail}");
    Ok(detail)
}

/// Redis answers PING.
async fn redis(config: &Config) -> anyhow::Result<String> {
    use anyhow::Context as _;
    use secrecy::ExposeSecret as _;
    let Some(url) = config
        .redis_url
        .as_ref()
        .map(|u| u.expose_secret().to_owned())
    else {
        return Ok("not configured: each replica counts its rate limits alone".to_owned());
    };
    let shown = redact_url(&url);
    let client =
        redis::Client::open(url.as_str()).with_context(|| format!("{shown} is not a Redis URL"))?;
    let ping = async {
        let mut connection = client.get_multiplexed_async_connection().await?;
        redis::cmd("PING")
            .query_async::<String>(&mut connection)
            .await
    };
    // The error's text names its cause already.
    let answer = tokio::time::timeout(TIMEOUT, ping)
        .await
        .map_err(|_| anyhow::anyhow!("{shown} did not answer in time"))?
        .map_err(|e| anyhow::anyhow!("{shown} does not answer PING: {e}"))?;
    Ok(format!("{shown} answers {answer}"))
}

/// The certificate and key load, belong together, and are in their
/// validity period.
fn certificate(config: &Config) -> anyhow::Result<String> {
    use anyhow::Context as _;
    let (cert, key) = match (&config.tls_cert, &config.tls_key) {
        (None, None) => return Ok("no TLS: served over plain HTTP".to_owned()),
        (Some(cert), Some(key)) => (cert, key),
        _ => anyhow::bail!("HTTPS needs both tls_cert and tls_key (--tls-cert, --tls-key)"),
    };
    tls::acceptor(cert, key)?;
    let pem = std::fs::read(cert).with_context(|| format!("cannot read {}", cert.display()))?;
    let (_, pem) = x509_parser::pem::parse_x509_pem(&pem)
        .map_err(|e| anyhow::anyhow!("{}: {e}", cert.display()))?;
    let parsed = pem
        .parse_x509()
        .map_err(|e| anyhow::anyhow!("{}: {e}", cert.display()))?;
    let validity = parsed.validity();
    let now = x509_parser::time::ASN1Time::now();
    anyhow::ensure!(
        validity.not_before <= now,
        "{} is not valid before {}",
        cert.display(),
        validity.not_before
    );
    anyhow::ensure!(
        now <= validity.not_after,
        "{} expired on {}",
        cert.display(),
        validity.not_after
    );
    let days_left = validity.time_to_expiration().map_or(0, |d| d.whole_days());
    let soon = if days_left < EXPIRY_WARNING_DAYS {
        " (renew it soon)"
    } else {
        ""
    };
    Ok(format!(
        "{} for {}, valid until {} ({days_left} days){soon}",
        cert.display(),
        parsed.subject(),
        validity.not_after
    ))
}
