//! Structured logs with `tracing`.

use axum::http::HeaderName;
use tracing_subscriber::EnvFilter;

use crate::config::{LogConfig, LogFormat};

/// The header that carries a request's id: set on the way in unless the
/// client sent one, returned on the answer, and on every log line of the
/// request.
pub const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// Installs the global subscriber. `RUST_LOG`, when set, overrides the
/// configured filter.
pub fn init(config: &LogConfig) {
    let filter = EnvFilter::try_from_default_env()
        .or_else(|_| EnvFilter::try_new(&config.filter))
        .unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    // A second init (tests) is harmless: the first subscriber stays.
    let _ = match config.format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}
