//! `SIGHUP`, which logrotate and most supervisors send to reload: what can
//! change without a restart is read again and put in place, each part on
//! its own (one that fails leaves the rest done and itself as it was), and
//! each says in the log what it did. The process lives on.

use std::sync::Arc;

use crate::config::Config;
use crate::http::tls::Certificates;
use crate::portfolio;
use crate::storage::Database;
use crate::telemetry::{self, LogFilterChange};

/// Reads the configuration again as the process first read it (its file,
/// the environment, the flags).
pub type ConfigSource = Arc<dyn Fn() -> anyhow::Result<Config> + Send + Sync>;

/// What a reload works on.
pub(super) struct Reloadable {
    pub(super) db: Database,
    /// The configuration the server started with.
    pub(super) config: Config,
    /// Where a new one comes from; without it, the files the first one
    /// names are read again.
    pub(super) source: Option<ConfigSource>,
    pub(super) certificates: Option<Certificates>,
}

/// Reloads at each `SIGHUP`, until the task is aborted.
#[cfg(unix)]
pub(super) async fn on_hangup(reloadable: Reloadable) {
    use tokio::signal::unix::{SignalKind, signal};
    let Ok(mut hangups) = signal(SignalKind::hangup()) else {
        tracing::warn!("cannot listen for SIGHUP: it would stop the process");
        return;
    };
    while hangups.recv().await.is_some() {
        reload(&reloadable).await;
    }
}

/// One reload: the configuration, then the log filter, the certificate
/// and the content file it names.
pub(super) async fn reload(reloadable: &Reloadable) {
    tracing::info!("SIGHUP: reloading the log filter, the certificate and the content file");
    let fresh;
    let config = match &reloadable.source {
        None => &reloadable.config,
        Some(source) => match source() {
            Ok(config) => {
                fresh = config;
                &fresh
            }
            Err(e) => {
                tracing::warn!(
                    error = %format!("{e:#}"),
                    "SIGHUP: the configuration cannot be read; reloading from the one in force"
                );
                &reloadable.config
            }
        },
    };
    reload_certificate(reloadable.certificates.as_ref(), config);
    if config.portfolio.enabled {
        reload_content(&reloadable.db, config).await;
    }
    // Last: a quieter filter would hide what the others said.
    reload_log_filter(config);
}

fn reload_log_filter(config: &Config) {
    // Said before it is put in place, which a quieter filter would hide.
    if std::env::var_os("RUST_LOG").is_none() {
        tracing::info!(filter = %config.log.filter, "SIGHUP: setting the log filter");
    }
    match telemetry::set_log_filter(&config.log.filter) {
        Ok(LogFilterChange::Set(_)) => {}
        Ok(LogFilterChange::KeptFromEnvironment) => {
            tracing::info!("SIGHUP: the log filter stays RUST_LOG's, which overrides log.filter");
        }
        Ok(LogFilterChange::NotInstalled) => {}
        Err(e) => tracing::warn!(
            error = %format!("{e:#}"),
            "SIGHUP: the log filter stays as it was"
        ),
    }
}

fn reload_certificate(certificates: Option<&Certificates>, config: &Config) {
    let Some(certificates) = certificates else {
        return;
    };
    let (Some(cert), Some(key)) = (&config.tls_cert, &config.tls_key) else {
        tracing::warn!(
            "SIGHUP: the configuration names no tls_cert and tls_key now; the certificate \
             stays (turning HTTPS off takes a restart)"
        );
        return;
    };
    match certificates.reload(cert, key) {
        Ok(presented) => tracing::info!(
            file = %cert.display(),
            subject = %presented.subject,
            not_after = %presented.not_after,
            "SIGHUP: certificate loaded; new connections get it"
        ),
        Err(e) => tracing::warn!(
            file = %cert.display(),
            error = %format!("{e:#}"),
            "SIGHUP: the certificate was not loaded; the one in place stays"
        ),
    }
}

/// Loads the content file again, logs what changed, and reads the content
/// from the database again.
async fn reload_content(db: &Database, config: &Config) {
    let Some(file) = config.portfolio.content_file.as_deref() else {
        tracing::info!("SIGHUP: no content file is configured (portfolio.content_file)");
        return;
    };
    let imported = portfolio::ops::content::import(db, Some(file), false).await;
    // Read again, whoever changed it (the CLI's import on SQLite).
    portfolio::ops::content::forget_cached(db);
    match imported {
        Ok(diff) if diff.is_empty() => {
            tracing::info!(file = %file.display(), "SIGHUP: the content file has no change");
        }
        Ok(diff) => tracing::info!(
            file = %file.display(),
            changes = %diff.lines().join("; "),
            "SIGHUP: loaded the content file"
        ),
        Err(e) => tracing::warn!(
            file = %file.display(),
            error = %format!("{e:#}"),
            "SIGHUP: the content file was not loaded; the content stays as it was"
        ),
    }
}
