//! The one log line that says, at start, what this server is and how it is
//! set up: what an operator checks first when something behaves unlike
//! they expected (emails written to files, an open pet store, CORS).

use super::resources::Endpoint;
use crate::config::{AuthMode, Config, SmtpTls, redact_url};
use crate::telemetry::build_info;

/// Logs the summary of `config`, with the address the server listens on,
/// before it opens anything else.
pub(super) fn log(config: &Config, endpoint: &Endpoint) {
    let services = config.services_on().join(", ");
    let petstore_auth = match config.petstore.auth_mode {
        AuthMode::Open => "open",
        AuthMode::Enforce => "enforce",
    };
    let mail = match &config.mail.smtp {
        Some(smtp) => {
            let tls = match smtp.tls {
                SmtpTls::None => "plain",
                SmtpTls::Starttls => "starttls",
                SmtpTls::Tls => "tls",
            };
            format!("smtp {}:{} ({tls})", smtp.host, smtp.port)
        }
        None => format!(
            ".eml files in {} (no SMTP server configured)",
            config.data_dir.join("outbox").display()
        ),
    };
    let cors = if config.http.cors_allowed_origins.is_empty() {
        "none".to_owned()
    } else {
        config.http.cors_allowed_origins.join(" ")
    };
    let metrics = endpoint
        .metrics_listener
        .as_ref()
        .and_then(|listener| listener.local_addr().ok())
        .map_or_else(|| "off".to_owned(), |addr| format!("http://{addr}/metrics"));
    tracing::info!(
        version = build_info::VERSION,
        commit = build_info::COMMIT,
        built_on = build_info::BUILT_ON,
        profile = config.profile.as_str(),
        services = %services,
        petstore_auth,
        database = %redact_url(&config.database_url()),
        mail = %mail,
        redis = if config.redis_url.is_some() { "shared rate limits" } else { "off" },
        cors = %cors,
        metrics = %metrics,
        listen = %format!(
            "{}://{}",
            if endpoint.tls.is_some() { "https" } else { "http" },
            endpoint.local_addr
        ),
        "petstore-portfolio starting"
    );
}
