//! Structured logs with `tracing`, metrics ([`metrics`]) and trace
//! context ([`trace_context`]).

use std::io::IsTerminal as _;

use axum::http::HeaderName;
use tracing_subscriber::EnvFilter;

use crate::config::{LogConfig, LogFormat};

pub mod build_info;
pub mod metrics;
pub(crate) mod otlp;
pub mod trace_context;

/// The header that carries a request's id. Inside the server it is always
/// the server's own, unique to the request, and on every log line of it; the
/// answer carries the client's when it sent one the server keeps
/// ([`client_request_id`]), the server's otherwise.
pub(crate) const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// The longest request id of a client's that is kept.
pub(crate) const MAX_CLIENT_REQUEST_ID: usize = 128;

/// A client's `X-Request-Id`, if it is one worth keeping: at most
/// [`MAX_CLIENT_REQUEST_ID`] characters, each an ASCII letter, digit or one
/// of `- _ . : + / = @` (what UUIDs, ULIDs, base64 and the usual tracing
/// ids are made of). Anything else (long, spaced, quoted, control
/// characters) would be echoed into answers and logs as sent; it is
/// ignored instead.
pub(crate) fn client_request_id(value: &axum::http::HeaderValue) -> bool {
    let bytes = value.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= MAX_CLIENT_REQUEST_ID
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.:+/=@".contains(b))
}

/// `future`, to be spawned as part of the request being answered: it keeps
/// the request's span (so its log lines carry the request and trace ids)
/// and its trace (for the calls it makes), which a spawned task would
/// otherwise lose.
pub(crate) fn within_request<F: Future>(future: F) -> impl Future<Output = F::Output> {
    use tracing::Instrument as _;
    let trace = trace_context::current();
    async move {
        match trace {
            Some(trace) => trace_context::scope(trace, future).await,
            None => future.await,
        }
    }
    .instrument(tracing::Span::current())
}

/// What was installed for the process's telemetry; [`Telemetry::shutdown`]
/// sends the spans not yet exported.
#[derive(Debug, Default)]
pub struct Telemetry {
    spans: Option<opentelemetry_sdk::trace::SdkTracerProvider>,
    /// Writes the lines still queued when dropped.
    _logs: Option<tracing_appender::non_blocking::WorkerGuard>,
}

impl Telemetry {
    /// Exports what is left of the spans and stops the exporter.
    pub fn shutdown(self) {
        if let Some(provider) = self.spans
            && let Err(e) = provider.shutdown()
        {
            tracing::warn!(error = %e, "cannot send the last spans");
        }
    }
}

/// Installs the global subscriber: logs in `config`'s format and, with
/// `otlp_endpoint`, the export of spans. `RUST_LOG`, when set, overrides
/// the configured filter.
pub fn init(config: &LogConfig, otlp_endpoint: Option<&str>) -> anyhow::Result<Telemetry> {
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;

    let filter = EnvFilter::try_from_default_env()
        .or_else(|_| EnvFilter::try_new(&config.filter))
        .unwrap_or_else(|_| EnvFilter::new("info"));
    // Replaceable while the server runs (SIGHUP: `set_log_filter`).
    let (filter, filter_handle) = tracing_subscriber::reload::Layer::new(filter);
    // Colours only for a person at a terminal: in a file or a log
    // collector the escape codes are noise (and each request's span would
    // pay for writing them).
    // Written by a thread of their own, so that a request does not wait for
    // its access line's write (a quarter of the rate of `GET /v2/pet/{id}`
    // when each line was written at once); never dropped: a full queue
    // makes the requests wait instead. 8,192 lines queued at most: the
    // default 128,000 places take 4 MiB up front.
    let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .buffered_lines_limit(8_192)
        .lossy(false)
        .thread_name("log-writer")
        .finish(std::io::stderr());
    let logs = tracing_subscriber::fmt::layer()
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(writer);
    let logs = match config.format {
        LogFormat::Text => logs.boxed(),
        LogFormat::Json => logs.json().boxed(),
    };
    let (spans, exporting) = match otlp_endpoint {
        Some(endpoint) => {
            let (provider, layer) = otlp::start(endpoint)?;
            (Some(provider), Some(layer))
        }
        None => (None, None),
    };
    // A second init (tests) is harmless: the first subscriber stays. The
    // filter gates every layer wherever it stands; first, its handle's
    // type names only the registry.
    if tracing_subscriber::registry()
        .with(filter)
        .with(exporting)
        .with(logs)
        .try_init()
        .is_ok()
    {
        let _ = LOG_FILTER.set(filter_handle);
    }
    Ok(Telemetry {
        spans,
        _logs: Some(guard),
    })
}

/// The installed log filter, replaceable.
static LOG_FILTER: std::sync::OnceLock<
    tracing_subscriber::reload::Handle<EnvFilter, tracing_subscriber::Registry>,
> = std::sync::OnceLock::new();

/// What became of a request to change the log filter.
#[derive(Debug, PartialEq, Eq)]
pub enum LogFilterChange {
    /// The filter is now this.
    Set(String),
    /// `RUST_LOG` is set, and overrides the configuration: it stays.
    KeptFromEnvironment,
    /// No filter of this process's is installed (a test's second server).
    NotInstalled,
}

/// Replaces the log filter with `directives` (the configuration's
/// `log.filter`), unless `RUST_LOG` set it.
pub fn set_log_filter(directives: &str) -> anyhow::Result<LogFilterChange> {
    if std::env::var_os(EnvFilter::DEFAULT_ENV).is_some() {
        return Ok(LogFilterChange::KeptFromEnvironment);
    }
    let Some(handle) = LOG_FILTER.get() else {
        return Ok(LogFilterChange::NotInstalled);
    };
    let filter = EnvFilter::try_new(directives)
        .map_err(|e| anyhow::anyhow!("log.filter {directives:?} is not a filter: {e}"))?;
    handle
        .reload(filter)
        .map_err(|e| anyhow::anyhow!("cannot replace the log filter: {e}"))?;
    Ok(LogFilterChange::Set(directives.to_owned()))
}

/// Where each service's edge leaves a request's route template
/// (`error::ErrorRenderer`) for the observing layer (`observe.rs`), which
/// puts it in the request's extensions when it will read it.
#[derive(Debug, Clone, Default)]
pub(crate) struct RouteSlot(std::sync::Arc<std::sync::OnceLock<axum::extract::MatchedPath>>);

impl RouteSlot {
    /// Leaves `route` here (the first one left stays).
    pub(crate) fn fill(&self, route: &axum::extract::MatchedPath) {
        let _ = self.0.set(route.clone());
    }

    /// The route left here, if any.
    pub(crate) fn route(&self) -> Option<axum::extract::MatchedPath> {
        self.0.get().cloned()
    }
}

/// The id of a request that comes without one: a random version-4
/// UUID, as tower-http's `MakeRequestUuid` makes it, but drawn from a
/// generator of each thread's own (fastrand, seeded from the operating
/// system once per thread) rather than by a `getrandom` system call each.
/// An id must be unique, not secret: it is sent back and logged; a system
/// call for every request is a cost the cheapest requests feel.
pub(crate) fn new_request_id() -> axum::http::HeaderValue {
    let id = uuid::Builder::from_random_bytes(fastrand::u128(..).to_le_bytes()).into_uuid();
    let mut text = [0; uuid::fmt::Hyphenated::LENGTH];
    let text = id.hyphenated().encode_lower(&mut text);
    // A hyphenated UUID is always a valid header value.
    axum::http::HeaderValue::from_str(text)
        .unwrap_or_else(|_| axum::http::HeaderValue::from_static("-"))
}

/// What a test logs, captured: the events of the thread that holds the
/// guard (and of the tasks a current-thread runtime runs on it).
#[cfg(test)]
#[derive(Clone, Default)]
pub(crate) struct CapturedLogs(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

#[cfg(test)]
#[allow(clippy::unwrap_used)]
impl CapturedLogs {
    /// Captures this thread's logs until the guard is dropped.
    pub(crate) fn start() -> (Self, tracing::subscriber::DefaultGuard) {
        let logs = Self::default();
        let sink = logs.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || sink.clone())
            .with_ansi(false)
            .finish();
        (logs, tracing::subscriber::set_default(subscriber))
    }

    /// What was logged so far.
    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
impl std::io::Write for CapturedLogs {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::new_request_id;

    #[test]
    fn a_clients_request_id_is_kept_only_when_short_and_plain() {
        use axum::http::HeaderValue;
        for kept in [
            "trace-me-42",
            "01J9Z3KZ8W6Q",
            "Root=1-5759e988-bd862e3f",
            "a/b+c==",
        ] {
            assert!(
                super::client_request_id(&HeaderValue::from_static(kept)),
                "{kept}"
            );
        }
        let long = "x".repeat(super::MAX_CLIENT_REQUEST_ID + 1);
        for ignored in [
            "",
            "with space",
            "quo\"te",
            "semi;colon",
            "tab\there",
            long.as_str(),
        ] {
            let value = HeaderValue::from_str(ignored).unwrap();
            assert!(!super::client_request_id(&value), "{ignored:?}");
        }
        let longest = "x".repeat(super::MAX_CLIENT_REQUEST_ID);
        assert!(super::client_request_id(
            &HeaderValue::from_str(&longest).unwrap()
        ));
    }

    #[test]
    fn request_ids_are_distinct_version_4_uuids() {
        let ids: std::collections::HashSet<_> = (0..1000)
            .map(|_| {
                let id = new_request_id();
                let id = uuid::Uuid::parse_str(id.to_str().unwrap()).unwrap();
                assert_eq!(id.get_version(), Some(uuid::Version::Random));
                id
            })
            .collect();
        assert_eq!(ids.len(), 1000);
    }
}
