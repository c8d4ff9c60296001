//! W3C Trace Context: a request's `traceparent` is continued, so that our
//! log lines and spans join the caller's trace; a request without one (or
//! with one that cannot be read, which is never an error) starts a trace.
//! Calls the server makes while answering (the social network) carry the
//! trace on.
//!
//! The header is `version-traceid-parentid-flags` in lowercase hex
//! (<https://www.w3.org/TR/trace-context/#traceparent-header>); a version
//! above `00` is read as `00` if its first four fields are, and `ff` is
//! invalid, as the recommendation says.

use std::fmt;

use http::{HeaderMap, HeaderValue};

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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceContext {
    pub trace_id: TraceId,
    /// This request's span (the parent of the calls it makes).
    pub span_id: SpanId,
    /// The caller's span, when the trace was continued.
    pub parent_id: Option<SpanId>,
    /// The caller's `sampled` flag (a new trace is sampled).
    pub sampled: bool,
    /// The caller's `tracestate`, passed on with the trace.
    pub state: Option<HeaderValue>,
}

impl TraceContext {
    /// Continues the trace of `headers`' `traceparent` if there is exactly
    /// one and it can be read; starts a new one otherwise.
    pub fn continue_or_start(headers: &HeaderMap) -> TraceContext {
        let mut values = headers.get_all(TRACEPARENT).iter();
        let parsed = match (values.next(), values.next()) {
            (Some(value), None) => value.to_str().ok().and_then(parse),
            _ => None,
        };
        match parsed {
            Some((trace_id, parent_id, flags)) => TraceContext {
                trace_id,
                span_id: new_span_id(),
                parent_id: Some(parent_id),
                sampled: flags & 1 == 1,
                state: headers
                    .get(TRACESTATE)
                    .filter(|state| state.len() <= 512)
                    .cloned(),
            },
            None => TraceContext::start(),
        }
    }

    /// A new trace, sampled, with this request's span as its root.
    pub fn start() -> TraceContext {
        TraceContext {
            trace_id: TraceId(fastrand::u128(1..)),
            span_id: new_span_id(),
            parent_id: None,
            sampled: true,
            state: None,
        }
    }

    /// The `traceparent` of a call made while answering: this trace, with
    /// this request's span as the parent.
    pub fn traceparent(&self) -> String {
        format!(
            "00-{}-{}-{:02x}",
            self.trace_id,
            self.span_id,
            u8::from(self.sampled)
        )
    }

    /// The headers a call made while answering carries.
    pub fn outgoing_headers(&self) -> Vec<(&'static str, String)> {
        let mut headers = vec![(TRACEPARENT, self.traceparent())];
        if let Some(state) = self.state.as_ref().and_then(|s| s.to_str().ok()) {
            headers.push((TRACESTATE, state.to_owned()));
        }
        headers
    }
}

fn new_span_id() -> SpanId {
    SpanId(fastrand::u64(1..))
}

/// The trace id, parent id and flags of a `traceparent`, if it is valid.
fn parse(value: &str) -> Option<(TraceId, SpanId, u8)> {
    let value = value.trim_matches([' ', '\t']);
    let version = hex_field(value.get(0..2)?)?;
    let fits = match version {
        0xff => false,
        0 => value.len() == 55,
        // A later version may add fields, after a dash.
        _ => value.len() == 55 || value.as_bytes().get(55) == Some(&b'-'),
    };
    if !fits {
        return None;
    }
    let bytes = value.as_bytes();
    if bytes[2] != b'-' || bytes[35] != b'-' || bytes[52] != b'-' {
        return None;
    }
    let trace_id = u128::from_str_radix(hex(value.get(3..35)?)?, 16).ok()?;
    let parent_id = u64::from_str_radix(hex(value.get(36..52)?)?, 16).ok()?;
    let flags = hex_field(value.get(53..55)?)?;
    (trace_id != 0 && parent_id != 0).then_some((TraceId(trace_id), SpanId(parent_id), flags))
}

/// `text` if it is lowercase hex digits only (the recommendation allows no
/// other case).
fn hex(text: &str) -> Option<&str> {
    text.bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        .then_some(text)
}

fn hex_field(text: &str) -> Option<u8> {
    u8::from_str_radix(hex(text)?, 16).ok()
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
    use super::*;

    fn with(values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append(TRACEPARENT, HeaderValue::from_str(value).unwrap());
        }
        headers
    }

    const EXAMPLE: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn the_recommendations_example_is_continued_with_a_new_span() {
        let trace = TraceContext::continue_or_start(&with(&[EXAMPLE]));
        assert_eq!(
            trace.trace_id.to_string(),
            "4bf92f3577b34da6a3ce929d0e0e4736"
        );
        assert_eq!(trace.parent_id.unwrap().to_string(), "00f067aa0ba902b7");
        assert_ne!(trace.span_id, trace.parent_id.unwrap());
        assert!(trace.sampled);
        let passed_on = trace.traceparent();
        assert!(passed_on.starts_with("00-4bf92f3577b34da6a3ce929d0e0e4736-"));
        assert!(passed_on.ends_with("-01"));
        assert_eq!(passed_on.len(), 55);
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
            // Version ff, version 00 with more fields, a short trace id.
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
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
        assert_eq!(a.traceparent().len(), 55);
    }
}
