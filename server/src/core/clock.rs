//! The server's clock and how it writes times: Unix milliseconds for
//! deadlines and due times, RFC 3339 text for timestamps that are shown or
//! stored.

use chrono::{DateTime, SecondsFormat, Utc};

/// Now, in Unix milliseconds (deadlines: leases, retries, expiries).
pub(crate) fn now_ms() -> i64 {
    Utc::now().timestamp_millis()
}

/// Now, to the millisecond: times kept as Unix milliseconds read back the
/// same.
pub(crate) fn now() -> DateTime<Utc> {
    DateTime::from_timestamp_millis(now_ms()).unwrap_or_else(Utc::now)
}

/// A time as stored and shown: RFC 3339 in UTC with milliseconds
/// (`2026-11-21T10:00:00.000Z`).
pub(crate) fn timestamp(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// [`timestamp`] of now.
pub(crate) fn now_timestamp() -> String {
    timestamp(Utc::now())
}

/// A time to the second (`2026-11-21T10:00:00Z`): headers, and the post
/// dates that order the posts.
pub(crate) fn timestamp_secs(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// `at` without its fraction of a second, as a time stored to the second
/// reads back.
pub(crate) fn to_the_second(at: DateTime<Utc>) -> DateTime<Utc> {
    DateTime::from_timestamp(at.timestamp(), 0).unwrap_or(at)
}

/// Reads back a stored RFC 3339 time.
pub(crate) fn parse_timestamp(text: &str) -> Result<DateTime<Utc>, chrono::ParseError> {
    DateTime::parse_from_rfc3339(text).map(|t| t.with_timezone(&Utc))
}
