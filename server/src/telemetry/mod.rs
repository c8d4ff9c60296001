//! Structured logs with `tracing`, metrics ([`metrics`]) and trace
//! context ([`trace_context`]).

use std::io::IsTerminal as _;

use axum::http::HeaderName;
use tracing_subscriber::EnvFilter;

use crate::config::{LogConfig, LogFormat};

pub mod metrics;
pub mod trace_context;

/// The header that carries a request's id: set on the way in unless the
/// client sent one, returned on the answer, and on every log line of the
/// request.
pub(crate) const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

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

/// Installs the global subscriber. `RUST_LOG`, when set, overrides the
/// configured filter.
pub fn init(config: &LogConfig) {
    let filter = EnvFilter::try_from_default_env()
        .or_else(|_| EnvFilter::try_new(&config.filter))
        .unwrap_or_else(|_| EnvFilter::new("info"));
    // Colours only for a person at a terminal: in a file or a log
    // collector the escape codes are noise (and each request's span would
    // pay for writing them).
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr);
    // A second init (tests) is harmless: the first subscriber stays.
    let _ = match config.format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}

/// Makes the ids of requests that come without one: random version-4
/// UUIDs, as tower-http's `MakeRequestUuid` makes them, but drawn from a
/// generator of each thread's own (fastrand, seeded from the operating
/// system once per thread) rather than by a `getrandom` system call each.
/// An id must be unique, not secret: it is sent back and logged. The call
/// per request cost about a tenth of the rate of `GET /v2/pet/{id}` (issue
/// 9, BENCHMARKS.md).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct MakeRequestId;

impl tower_http::request_id::MakeRequestId for MakeRequestId {
    fn make_request_id<B>(
        &mut self,
        _request: &axum::http::Request<B>,
    ) -> Option<tower_http::request_id::RequestId> {
        let id = uuid::Builder::from_random_bytes(fastrand::u128(..).to_le_bytes()).into_uuid();
        let mut text = [0; uuid::fmt::Hyphenated::LENGTH];
        let text = id.hyphenated().encode_lower(&mut text);
        axum::http::HeaderValue::from_str(text)
            .ok()
            .map(tower_http::request_id::RequestId::new)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use tower_http::request_id::MakeRequestId as _;

    use super::MakeRequestId;

    #[test]
    fn request_ids_are_distinct_version_4_uuids() {
        let request = axum::http::Request::new(());
        let ids: std::collections::HashSet<_> = (0..1000)
            .map(|_| {
                let id = MakeRequestId.make_request_id(&request).unwrap();
                let id = uuid::Uuid::parse_str(id.header_value().to_str().unwrap()).unwrap();
                assert_eq!(id.get_version(), Some(uuid::Version::Random));
                id
            })
            .collect();
        assert_eq!(ids.len(), 1000);
    }
}
