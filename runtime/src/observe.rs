//! What the SDK tells the caller's `tracing` subscriber (the `tracing`
//! feature, on by default): a span for each call,
//! `petstore_portfolio_client.call`, with the operation, the method and the
//! route template, and once the call ends its status, its attempts, its
//! duration and the server's request id; an event for each retry
//! (`retrying`) and each token fetch (`token fetched`, `token refused`).
//! All under the target `petstore_portfolio_client`. Without the feature the
//! functions here do nothing and `tracing` is not compiled.

use std::future::Future;
use std::time::Duration;

/// A call's span (nothing without the `tracing` feature).
#[cfg(feature = "tracing")]
pub(crate) type CallSpan = tracing::Span;
/// A call's span (nothing without the `tracing` feature).
#[cfg(not(feature = "tracing"))]
#[derive(Debug, Clone)]
pub(crate) struct CallSpan;

/// The span of a call of `operation`, `method` on `route`.
#[cfg_attr(not(feature = "tracing"), allow(unused_variables))]
pub(crate) fn call_span(operation: &str, method: &reqwest::Method, route: &str) -> CallSpan {
    #[cfg(feature = "tracing")]
    {
        tracing::info_span!(
            target: "petstore_portfolio_client",
            "petstore_portfolio_client.call",
            operation,
            http.request.method = %method,
            url.template = route,
            http.response.status_code = tracing::field::Empty,
            attempts = tracing::field::Empty,
            duration_ms = tracing::field::Empty,
            request_id = tracing::field::Empty,
            error = tracing::field::Empty,
        )
    }
    #[cfg(not(feature = "tracing"))]
    CallSpan
}

/// `future`, run inside `span`: what it reports (the retries) is the
/// call's.
#[cfg(feature = "tracing")]
pub(crate) fn in_span<F: Future>(span: &CallSpan, future: F) -> impl Future<Output = F::Output> {
    tracing::Instrument::instrument(future, span.clone())
}

/// `future`, as it is (no `tracing` feature).
#[cfg(not(feature = "tracing"))]
pub(crate) fn in_span<F: Future>(_span: &CallSpan, future: F) -> F {
    future
}

/// Writes how the call ended into its span.
#[cfg_attr(not(feature = "tracing"), allow(unused_variables))]
pub(crate) fn ended(
    span: &CallSpan,
    outcome: &reqwest::Result<reqwest::Response>,
    attempts: u32,
    took: Duration,
) {
    #[cfg(feature = "tracing")]
    {
        span.record("attempts", attempts);
        span.record(
            "duration_ms",
            u64::try_from(took.as_millis()).unwrap_or(u64::MAX),
        );
        match outcome {
            Ok(response) => {
                span.record("http.response.status_code", response.status().as_u16());
                if let Some(id) = response
                    .headers()
                    .get("x-request-id")
                    .and_then(|id| id.to_str().ok())
                {
                    span.record("request_id", id);
                }
            }
            Err(error) => {
                span.record("error", tracing::field::display(error));
            }
        }
    }
}

/// Attempt `attempt` failed for `why`; the next goes out after `wait`.
#[cfg_attr(not(feature = "tracing"), allow(unused_variables))]
pub(crate) fn retrying(attempt: u32, wait: Duration, why: &str) {
    #[cfg(feature = "tracing")]
    tracing::info!(
        target: "petstore_portfolio_client",
        attempt,
        wait_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
        why,
        "retrying"
    );
}

/// A token was asked for at `endpoint`: got (`refused` none) or refused.
#[cfg_attr(not(feature = "tracing"), allow(unused_variables))]
pub(crate) fn token_fetch(endpoint: &str, refused: Option<&dyn std::fmt::Display>) {
    #[cfg(feature = "tracing")]
    match refused {
        None => tracing::debug!(target: "petstore_portfolio_client", endpoint, "token fetched"),
        Some(why) => tracing::warn!(
            target: "petstore_portfolio_client",
            endpoint,
            why = %why,
            "token refused"
        ),
    }
}

/// A server said the operation is deprecated (`Deprecation`, and maybe
/// `Sunset`): a warning, once per process, so that a program's log says
/// it without repeating it at every call.
#[cfg_attr(not(feature = "tracing"), allow(unused_variables))]
pub(crate) fn deprecated(operation: &str, headers: &reqwest::header::HeaderMap) {
    #[cfg(feature = "tracing")]
    {
        static WARNED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        let Some(since) = headers.get("deprecation") else {
            return;
        };
        if WARNED.swap(true, std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        let text = |value: &reqwest::header::HeaderValue| value.to_str().unwrap_or("?").to_owned();
        tracing::warn!(
            target: "petstore_portfolio_client",
            operation,
            deprecation = %text(since),
            sunset = headers.get("sunset").map(text).unwrap_or_default(),
            "the server says this operation is deprecated (told once per process)"
        );
    }
}
