//! W3C Trace Context: a request's `traceparent` is continued, so that our
//! log lines and spans join the caller's trace; a request without one (or
//! with one that cannot be read, which is never an error) starts a trace.
//! Calls the server makes while answering (the social network) carry the
//! trace on. The headers are read and written by OpenTelemetry's
//! `TraceContextPropagator`; a request without `traceparent` does not call
//! it.

use std::fmt;

use http::HeaderMap;
use opentelemetry::Context;
use opentelemetry::propagation::TextMapPropagator as _;
use opentelemetry::trace::{
    SpanContext, SpanId as OtelSpanId, TraceContextExt as _, TraceFlags, TraceId as OtelTraceId,
    TraceState,
};
use opentelemetry_http::{HeaderExtractor, HeaderInjector};
use opentelemetry_sdk::propagation::TraceContextPropagator;

/// The request header that carries a trace.
pub const TRACEPARENT: &str = "traceparent";
/// The vendors' state that travels with a trace, passed on unread.
pub const TRACESTATE: &str = "tracestate";

/// A trace's id: 16 bytes, never all zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TraceId(pub u128);

/// A span's id: 8 bytes, never all zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SpanId(pub u64);

impl fmt::Display for TraceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:032x}", self.0)
    }
}

impl fmt::Display for SpanId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

/// Where a request stands in its trace.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceContext {
    pub trace_id: TraceId,
    /// This request's span (the parent of the calls it makes).
    pub span_id: SpanId,
    /// The caller's span, when the trace was continued.
    pub parent_id: Option<SpanId>,
    /// The caller's `sampled` flag (a new trace is sampled).
    pub sampled: bool,
    /// The caller's `tracestate`, passed on with the trace.
    pub state: TraceState,
}

impl TraceContext {
    /// Continues the trace of `headers`' `traceparent` if there is exactly
    /// one and it can be read; starts a new one otherwise.
    pub fn continue_or_start(headers: &HeaderMap) -> TraceContext {
        let mut values = headers.get_all(TRACEPARENT).iter();
        if values.next().is_none() || values.next().is_some() {
            // None, or two: which one is meant cannot be known.
            return TraceContext::start();
        }
        let extracted = TraceContextPropagator::new()
            .extract_with_context(&Context::new(), &HeaderExtractor(headers));
        let caller = extracted.span().span_context().clone();
        if !caller.is_valid() {
            return TraceContext::start();
        }
        TraceContext {
            trace_id: TraceId(u128::from_be_bytes(caller.trace_id().to_bytes())),
            span_id: new_span_id(),
            parent_id: Some(SpanId(u64::from_be_bytes(caller.span_id().to_bytes()))),
            sampled: caller.is_sampled(),
            state: caller.trace_state().clone(),
        }
    }

    /// A new trace, sampled, with this request's span as its root.
    pub fn start() -> TraceContext {
        TraceContext {
            trace_id: TraceId(fastrand::u128(1..)),
            span_id: new_span_id(),
            parent_id: None,
            sampled: true,
            state: TraceState::default(),
        }
    }

    /// This trace, with this request's span, as OpenTelemetry's.
    fn span_context(&self) -> SpanContext {
        SpanContext::new(
            OtelTraceId::from_bytes(self.trace_id.0.to_be_bytes()),
            OtelSpanId::from_bytes(self.span_id.0.to_be_bytes()),
            if self.sampled {
                TraceFlags::SAMPLED
            } else {
                TraceFlags::default()
            },
            true,
            self.state.clone(),
        )
    }

    /// Puts the trace on `headers` of a call made while answering:
    /// `traceparent` with this request's span as the parent, and
    /// `tracestate`.
    pub fn inject(&self, headers: &mut HeaderMap) {
        let context = Context::new().with_remote_span_context(self.span_context());
        TraceContextPropagator::new().inject_context(&context, &mut HeaderInjector(headers));
    }
}

fn new_span_id() -> SpanId {
    SpanId(fastrand::u64(1..))
}

tokio::task_local! {
    /// The trace of the request being answered, for the calls it makes.
    static CURRENT: TraceContext;
}

/// Runs `future` as part of `trace`: [`current`] gives it within.
pub fn scope<F: Future>(
    trace: TraceContext,
    future: F,
) -> tokio::task::futures::TaskLocalFuture<TraceContext, F> {
    CURRENT.scope(trace, future)
}

/// The trace of the request being answered, if any.
pub fn current() -> Option<TraceContext> {
    CURRENT.try_with(Clone::clone).ok()
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    fn with(values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append(TRACEPARENT, HeaderValue::from_str(value).unwrap());
        }
        headers
    }

    const EXAMPLE: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    /// What a trace puts on a call's headers.
    fn passed_on(trace: &TraceContext) -> HeaderMap {
        let mut headers = HeaderMap::new();
        trace.inject(&mut headers);
        headers
    }

    #[test]
    fn the_recommendations_example_is_continued_with_a_new_span() {
        let mut headers = with(&[EXAMPLE]);
        headers.insert(TRACESTATE, HeaderValue::from_static("vendor=abc"));
        let trace = TraceContext::continue_or_start(&headers);
        assert_eq!(
            trace.trace_id.to_string(),
            "4bf92f3577b34da6a3ce929d0e0e4736"
        );
        assert_eq!(trace.parent_id.unwrap().to_string(), "00f067aa0ba902b7");
        assert_ne!(trace.span_id, trace.parent_id.unwrap());
        assert!(trace.sampled);
        let passed_on = passed_on(&trace);
        let traceparent = passed_on[TRACEPARENT].to_str().unwrap();
        assert!(traceparent.starts_with("00-4bf92f3577b34da6a3ce929d0e0e4736-"));
        assert!(traceparent.ends_with(&format!("{}-01", trace.span_id)));
        assert_eq!(passed_on[TRACESTATE], "vendor=abc");
    }

    #[test]
    fn malformed_headers_start_a_new_trace() {
        for bad in [
            "",
            "garbage",
            // Uppercase hex, a zero trace id, a zero parent id.
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            // Version ff, version 00 with more fields.
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0x",
        ] {
            let trace = TraceContext::continue_or_start(&with(&[bad]));
            assert_eq!(trace.parent_id, None, "{bad:?} was continued");
            assert_ne!(trace.trace_id.0, 0x4bf9_2f35_77b3_4da6_a3ce_929d_0e0e_4736);
        }
        // Two headers: which one is meant cannot be known.
        let two = with(&[EXAMPLE, EXAMPLE]);
        assert_eq!(TraceContext::continue_or_start(&two).parent_id, None);
    }

    #[test]
    fn a_later_version_is_read_as_version_00() {
        let later = "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-what-comes";
        let trace = TraceContext::continue_or_start(&with(&[later]));
        assert!(trace.parent_id.is_some());
        assert!(!trace.sampled);
    }

    #[test]
    fn new_traces_differ() {
        let a = TraceContext::start();
        let b = TraceContext::start();
        assert_ne!(a.trace_id, b.trace_id);
        assert_eq!(passed_on(&a)[TRACEPARENT].len(), 55);
    }
}
