//! W3C Trace Context on the SDK's requests: every request carries a
//! `traceparent`, so that the server's logs and traces can be followed back
//! to the call. A client made with `with_traceparent` continues the
//! caller's trace (its calls and the token fetches they need become part of
//! it); otherwise each request starts a trace of its own. A retry of a
//! request is the same request: it keeps its `traceparent`.

use reqwest::header::{HeaderName, HeaderValue};

/// The header that carries a trace.
pub const TRACEPARENT: HeaderName = HeaderName::from_static("traceparent");

/// A trace to continue: its id and flags (the caller's span is not ours to
/// reuse: each request gets a span id of its own).
#[derive(Debug, Clone, PartialEq, Eq)]
#[doc(hidden)]
pub struct Trace {
    trace_id: String,
    flags: String,
}

impl Trace {
    /// The trace of a `traceparent` value, if it is a valid one (version
    /// 00: `00-<32 hex>-<16 hex>-<2 hex>`, lowercase, ids not all zero).
    #[doc(hidden)]
    pub fn parse(traceparent: &str) -> Option<Trace> {
        let parts: Vec<&str> = traceparent.trim().split('-').collect();
        let [version, trace_id, parent_id, flags] = parts[..] else {
            return None;
        };
        let hex = |text: &str, len: usize| {
            text.len() == len && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        };
        let valid = version == "00"
            && hex(trace_id, 32)
            && hex(parent_id, 16)
            && hex(flags, 2)
            && trace_id.bytes().any(|b| b != b'0')
            && parent_id.bytes().any(|b| b != b'0');
        valid.then(|| Trace {
            trace_id: trace_id.to_owned(),
            flags: flags.to_owned(),
        })
    }

    /// The `traceparent` of a new request in this trace (a new trace when
    /// there is none to continue).
    pub(crate) fn header(trace: Option<&Trace>) -> HeaderValue {
        let value = match trace {
            Some(trace) => format!("00-{}-{}-{}", trace.trace_id, span_id(), trace.flags),
            None => format!("00-{:032x}-{}-01", fastrand::u128(1..), span_id()),
        };
        HeaderValue::from_str(&value).unwrap_or(HeaderValue::from_static(
            "00-00000000000000000000000000000001-0000000000000001-01",
        ))
    }

    /// The `traceparent` of a request made for `request` (a token fetch):
    /// the same trace, a span of its own.
    pub(crate) fn child_of(request: &reqwest::Request) -> HeaderValue {
        let trace = request
            .headers()
            .get(TRACEPARENT)
            .and_then(|value| value.to_str().ok())
            .and_then(Trace::parse);
        Trace::header(trace.as_ref())
    }
}

fn span_id() -> String {
    format!("{:016x}", fastrand::u64(1..))
}

#[cfg(test)]
mod tests {
    use super::Trace;

    #[test]
    fn a_valid_traceparent_is_continued_with_new_spans() {
        let trace =
            Trace::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01").unwrap();
        let first = Trace::header(Some(&trace));
        let second = Trace::header(Some(&trace));
        let first = first.to_str().unwrap();
        assert!(first.starts_with("00-4bf92f3577b34da6a3ce929d0e0e4736-"));
        assert!(first.ends_with("-01"));
        assert_ne!(first, second.to_str().unwrap());
    }

    #[test]
    fn anything_else_starts_new_traces() {
        for bad in [
            "",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
        ] {
            assert_eq!(Trace::parse(bad), None, "{bad}");
        }
        let a = Trace::header(None);
        let b = Trace::header(None);
        assert_eq!(a.len(), 55);
        assert_ne!(a.to_str().unwrap()[3..35], b.to_str().unwrap()[3..35]);
    }
}
