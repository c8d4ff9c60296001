//! Metrics in Prometheus's text format, served on a listener of their own
//! (`--metrics-bind`; off by default).
//!
//! The HTTP server's metrics are named as OpenTelemetry's HTTP semantic
//! conventions name them, written the Prometheus way
//! (`http.server.request.duration` in seconds is
//! `http_server_request_duration_seconds`); ours start with
//! `petstore_portfolio_`. Every label value comes from a fixed set: a
//! method outside HTTP's own is `_OTHER`, a path the router does not know is
//! the route `unmatched`, and no credential, address, email or id is ever a
//! label. So a scanner sending random paths and methods adds no series.
//!
//! Code anywhere records through the `metrics` facade (the functions below,
//! which name each metric once); without `--metrics-bind` no recorder is
//! installed and recording costs a check of a global.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use anyhow::Context as _;

use crate::telemetry::build_info;
use metrics::{
    Unit, counter, describe_counter, describe_gauge, describe_histogram, gauge, histogram,
};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

/// `http.server.request.duration`: from the request's headers to its
/// answer's last byte.
pub(crate) const HTTP_REQUEST_DURATION: &str = "http_server_request_duration_seconds";
/// `http.server.active_requests`: requests whose answer is not yet sent.
pub(crate) const HTTP_ACTIVE_REQUESTS: &str = "http_server_active_requests";
/// `http.server.request.body.size`.
pub(crate) const HTTP_REQUEST_BODY_SIZE: &str = "http_server_request_body_size_bytes";
/// `http.server.response.body.size`.
pub(crate) const HTTP_RESPONSE_BODY_SIZE: &str = "http_server_response_body_size_bytes";

const RATE_LIMITED: &str = "petstore_portfolio_rate_limited_total";
const AUTHENTICATION_FAILURES: &str = "petstore_portfolio_authentication_failures_total";
const PASSWORD_HASH_QUEUE: &str = "petstore_portfolio_password_hash_queue_depth";
const PASSWORD_HASH_REFUSED: &str = "petstore_portfolio_password_hash_refused_total";
const OUTBOX_PENDING: &str = "petstore_portfolio_outbox_pending";
const OUTBOX_OLDEST_PENDING_AGE: &str = "petstore_portfolio_outbox_oldest_pending_age_seconds";
const EMAILS_DELIVERED: &str = "petstore_portfolio_emails_delivered_total";
const EMAILS_FAILED: &str = "petstore_portfolio_emails_failed_total";
const DB_POOL_CONNECTIONS: &str = "petstore_portfolio_db_pool_connections";
const DB_POOL_WAITS: &str = "petstore_portfolio_db_pool_waits_total";
const READ_CACHE_HITS: &str = "petstore_portfolio_read_cache_hits_total";
const READ_CACHE_MISSES: &str = "petstore_portfolio_read_cache_misses_total";
const CONNECTIONS_OPEN: &str = "petstore_portfolio_connections_open";
const CONNECTIONS_EVICTED: &str = "petstore_portfolio_connections_evicted_total";
const REDIS_FALLBACK: &str = "petstore_portfolio_redis_fallback";
const BUILD_INFO: &str = "petstore_portfolio_build_info";

/// What kind of series a metric is.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Counter,
    Gauge,
    Histogram,
}

/// Every metric this server exports: its kind, unit and help text.
const METRICS: [(&str, Kind, Option<Unit>, &str); 20] = [
    (
        HTTP_REQUEST_DURATION,
        Kind::Histogram,
        Some(Unit::Seconds),
        "Duration of HTTP server requests, to the answer's last byte",
    ),
    (
        HTTP_ACTIVE_REQUESTS,
        Kind::Gauge,
        None,
        "HTTP server requests whose answer is not yet sent",
    ),
    (
        HTTP_REQUEST_BODY_SIZE,
        Kind::Histogram,
        Some(Unit::Bytes),
        "Size of HTTP server request bodies",
    ),
    (
        HTTP_RESPONSE_BODY_SIZE,
        Kind::Histogram,
        Some(Unit::Bytes),
        "Size of HTTP server response bodies",
    ),
    (
        RATE_LIMITED,
        Kind::Counter,
        None,
        "Requests refused (429) by a rate limit",
    ),
    (
        AUTHENTICATION_FAILURES,
        Kind::Counter,
        None,
        "Credentials refused (401), by reason",
    ),
    (
        PASSWORD_HASH_QUEUE,
        Kind::Gauge,
        None,
        "Password checks waiting for a hashing thread",
    ),
    (
        PASSWORD_HASH_REFUSED,
        Kind::Counter,
        None,
        "Password checks refused because the hashing queue was full",
    ),
    (
        OUTBOX_PENDING,
        Kind::Gauge,
        None,
        "Emails waiting in the outbox",
    ),
    (
        OUTBOX_OLDEST_PENDING_AGE,
        Kind::Gauge,
        Some(Unit::Seconds),
        "How long the oldest due email has waited",
    ),
    (EMAILS_DELIVERED, Kind::Counter, None, "Emails delivered"),
    (EMAILS_FAILED, Kind::Counter, None, "Emails given up on"),
    (
        DB_POOL_CONNECTIONS,
        Kind::Gauge,
        None,
        "Database pool connections, by state",
    ),
    (
        DB_POOL_WAITS,
        Kind::Counter,
        None,
        "Statements that found every pool connection taken and waited",
    ),
    (
        READ_CACHE_HITS,
        Kind::Counter,
        None,
        "Reads answered from a read cache",
    ),
    (
        READ_CACHE_MISSES,
        Kind::Counter,
        None,
        "Reads a read cache sent to the database",
    ),
    (
        CONNECTIONS_OPEN,
        Kind::Gauge,
        None,
        "Client connections open",
    ),
    (
        CONNECTIONS_EVICTED,
        Kind::Counter,
        None,
        "Idle connections closed to make room for a newcomer",
    ),
    (
        REDIS_FALLBACK,
        Kind::Gauge,
        None,
        "1 while Redis does not answer and rate limits count in the process",
    ),
    (
        BUILD_INFO,
        Kind::Gauge,
        None,
        "Always 1; its labels say what the server is (version, commit, build day)",
    ),
];

/// The name of every metric this server exports (the dashboard's test
/// compares its queries with what `/metrics` shows).
pub fn names() -> impl Iterator<Item = &'static str> {
    METRICS.iter().map(|(name, ..)| *name)
}

/// The duration histogram's buckets (seconds): OpenTelemetry's advice for
/// `http.server.request.duration`, with three below 5 ms, where most of
/// this server's answers fall.
const DURATION_BUCKETS: [f64; 17] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0,
    7.5, 10.0,
];

/// The body-size histograms' buckets (bytes).
const SIZE_BUCKETS: [f64; 8] = [
    0.0,
    100.0,
    1_000.0,
    10_000.0,
    100_000.0,
    1_000_000.0,
    10_000_000.0,
    100_000_000.0,
];

/// The service a request is for, from its path: a label of every HTTP
/// metric.
pub(crate) fn service_of(path: &str) -> &'static str {
    if path == "/v2" || path.starts_with("/v2/") {
        "petstore"
    } else if path == "/api" || path.starts_with("/api/") {
        "portfolio"
    } else {
        "pages"
    }
}

/// A method as OpenTelemetry labels it: HTTP's own by name, any other
/// `_OTHER`.
pub(crate) fn method_label(method: &http::Method) -> &'static str {
    match *method {
        http::Method::GET => "GET",
        http::Method::HEAD => "HEAD",
        http::Method::POST => "POST",
        http::Method::PUT => "PUT",
        http::Method::DELETE => "DELETE",
        http::Method::PATCH => "PATCH",
        http::Method::OPTIONS => "OPTIONS",
        http::Method::CONNECT => "CONNECT",
        http::Method::TRACE => "TRACE",
        _ => "_OTHER",
    }
}

/// One answered request, as the HTTP metrics label it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HttpRequest<'a> {
    pub(crate) method: &'static str,
    pub(crate) service: &'static str,
    /// The route template, or `unmatched`.
    pub(crate) route: &'a str,
    pub(crate) status: u16,
}

/// The handles of one series of the HTTP metrics (a method, service, route
/// and status), kept once made: looking a series up by its labels costs
/// their allocation and hashing each time, a fifth of the rate of the
/// fastest reads. The labels' values are bounded, and so is this map.
#[derive(Debug)]
struct HttpSeries {
    duration: metrics::Histogram,
    request_size: metrics::Histogram,
    response_size: metrics::Histogram,
}

/// By route, then by (method, service, status).
type SeriesByRoute = std::collections::HashMap<
    String,
    std::collections::HashMap<(&'static str, &'static str, u16), Arc<HttpSeries>>,
>;

static HTTP_SERIES: std::sync::RwLock<Option<SeriesByRoute>> = std::sync::RwLock::new(None);

/// The requests in flight, by (method, service).
static ACTIVE: std::sync::RwLock<
    Option<std::collections::HashMap<(&'static str, &'static str), metrics::Gauge>>,
> = std::sync::RwLock::new(None);

/// The requests-in-flight gauge of `method` and `service`.
fn active(method: &'static str, service: &'static str) -> metrics::Gauge {
    let key = (method, service);
    if let Some(gauge) = ACTIVE
        .read()
        .ok()
        .and_then(|map| map.as_ref()?.get(&key).cloned())
    {
        return gauge;
    }
    let gauge = gauge!(HTTP_ACTIVE_REQUESTS, "http_request_method" => method, "service" => service);
    if let Ok(mut map) = ACTIVE.write() {
        map.get_or_insert_default().insert(key, gauge.clone());
    }
    gauge
}

/// A request came in: it is in flight until the gauge returned is
/// decremented (once its answer ends, or it is dropped unanswered).
pub(crate) fn http_request_started(method: &'static str, service: &'static str) -> metrics::Gauge {
    let in_flight = active(method, service);
    in_flight.increment(1.0);
    in_flight
}

/// A request's answer ended (sent whole, or its client gone): its
/// duration and body sizes.
pub(crate) fn http_request_finished(
    request: HttpRequest<'_>,
    duration: std::time::Duration,
    request_bytes: u64,
    response_bytes: u64,
) {
    let series = http_series(request);
    series.duration.record(duration.as_secs_f64());
    #[allow(clippy::cast_precision_loss)]
    {
        series.request_size.record(request_bytes as f64);
        series.response_size.record(response_bytes as f64);
    }
}

fn http_series(request: HttpRequest<'_>) -> Arc<HttpSeries> {
    let key = (request.method, request.service, request.status);
    if let Some(series) = HTTP_SERIES
        .read()
        .ok()
        .and_then(|map| map.as_ref()?.get(request.route)?.get(&key).cloned())
    {
        return series;
    }
    let labels = [
        ("http_request_method", request.method.to_owned()),
        ("http_route", request.route.to_owned()),
        ("http_response_status_code", request.status.to_string()),
        ("service", request.service.to_owned()),
    ];
    let series = Arc::new(HttpSeries {
        duration: histogram!(HTTP_REQUEST_DURATION, &labels),
        request_size: histogram!(HTTP_REQUEST_BODY_SIZE, &labels),
        response_size: histogram!(HTTP_RESPONSE_BODY_SIZE, &labels),
    });
    if let Ok(mut map) = HTTP_SERIES.write() {
        map.get_or_insert_default()
            .entry(request.route.to_owned())
            .or_default()
            .insert(key, series.clone());
    }
    series
}

/// The limits whose refusals are counted, by service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Limit {
    PetstoreRequests,
    FailedLogins,
    PortfolioRequestsPerKey,
    PortfolioRequestsPerAddress,
    ClientAuthenticationFailures,
    KeyRequests,
}

impl Limit {
    const ALL: [Limit; 6] = [
        Limit::PetstoreRequests,
        Limit::FailedLogins,
        Limit::PortfolioRequestsPerKey,
        Limit::PortfolioRequestsPerAddress,
        Limit::ClientAuthenticationFailures,
        Limit::KeyRequests,
    ];

    /// (service, limit) labels.
    fn labels(self) -> [(&'static str, &'static str); 2] {
        let (service, limit) = match self {
            Limit::PetstoreRequests => ("petstore", "requests_per_address"),
            Limit::FailedLogins => ("petstore", "failed_logins"),
            Limit::PortfolioRequestsPerKey => ("portfolio", "requests_per_key"),
            Limit::PortfolioRequestsPerAddress => ("portfolio", "requests_per_address"),
            Limit::ClientAuthenticationFailures => ("portfolio", "client_authentication_failures"),
            Limit::KeyRequests => ("portfolio", "key_requests_per_address"),
        };
        [("service", service), ("limit", limit)]
    }
}

/// A request refused by `limit` (429).
pub(crate) fn rate_limited(limit: Limit) {
    counter!(RATE_LIMITED, &limit.labels()).increment(1);
}

/// Why a credential was refused (401).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AuthFailure {
    /// An API key nobody issued.
    UnknownApiKey,
    /// An API key revoked or past its expiry.
    RevokedApiKey,
    /// A bearer token unknown, revoked or expired.
    InvalidToken,
    /// A username and password that do not match.
    WrongPassword,
    /// Credentials that cannot be read (bad Basic, a scheme not taken).
    Malformed,
    /// An OAuth client's id and secret that do not match.
    ClientCredentials,
}

impl AuthFailure {
    const ALL: [(&'static str, AuthFailure); 9] = [
        ("petstore", AuthFailure::UnknownApiKey),
        ("petstore", AuthFailure::RevokedApiKey),
        ("petstore", AuthFailure::InvalidToken),
        ("petstore", AuthFailure::WrongPassword),
        ("petstore", AuthFailure::Malformed),
        ("portfolio", AuthFailure::UnknownApiKey),
        ("portfolio", AuthFailure::RevokedApiKey),
        ("portfolio", AuthFailure::InvalidToken),
        ("portfolio", AuthFailure::ClientCredentials),
    ];

    fn reason(self) -> &'static str {
        match self {
            AuthFailure::UnknownApiKey => "unknown_api_key",
            AuthFailure::RevokedApiKey => "revoked_api_key",
            AuthFailure::InvalidToken => "invalid_token",
            AuthFailure::WrongPassword => "wrong_password",
            AuthFailure::Malformed => "malformed",
            AuthFailure::ClientCredentials => "client_credentials",
        }
    }
}

/// A credential of `service` refused, for `reason`.
pub(crate) fn authentication_failed(service: &'static str, reason: AuthFailure) {
    counter!(AUTHENTICATION_FAILURES, "service" => service, "reason" => reason.reason())
        .increment(1);
}

/// A password check waiting for a hashing thread (+1) or taken by one (-1).
pub(crate) fn password_hash_queued(change: f64) {
    gauge!(PASSWORD_HASH_QUEUE).increment(change);
}

/// A password check refused: every hashing thread busy, the queue full.
pub(crate) fn password_hash_refused() {
    counter!(PASSWORD_HASH_REFUSED).increment(1);
}

/// An email handed to the SMTP server (or written to its file).
pub(crate) fn email_delivered() {
    counter!(EMAILS_DELIVERED).increment(1);
}

/// An email given up on (a permanent refusal, or its lifetime over).
pub(crate) fn email_failed() {
    counter!(EMAILS_FAILED).increment(1);
}

/// The outbox as the database holds it: emails waiting, and how long the
/// oldest due one has waited (seconds).
pub(crate) fn outbox_backlog(pending: i64, oldest_due_secs: i64) {
    #[allow(clippy::cast_precision_loss)]
    {
        gauge!(OUTBOX_PENDING).set(pending as f64);
        gauge!(OUTBOX_OLDEST_PENDING_AGE).set(oldest_due_secs as f64);
    }
}

/// The database pool's connections: `open`, of which `idle` are idle and
/// the others in use.
pub(crate) fn db_pool(open: u32, idle: usize) {
    #[allow(clippy::cast_precision_loss)]
    let idle = idle as f64;
    gauge!(DB_POOL_CONNECTIONS, "state" => "in_use").set((f64::from(open) - idle).max(0.0));
    gauge!(DB_POOL_CONNECTIONS, "state" => "idle").set(idle);
}

/// A statement that found every connection of the pool taken, and waited.
pub(crate) fn db_pool_waited() {
    counter!(DB_POOL_WAITS).increment(1);
}

/// The hits and misses of the read cache `cache`: the handles, kept by
/// the cache (a lookup by labels on every read would cost the fast reads;
/// see [`HttpSeries`]), and its series at zero from the start.
pub(crate) fn read_cache_counters(cache: &'static str) -> (metrics::Counter, metrics::Counter) {
    (
        counter!(READ_CACHE_HITS, "cache" => cache),
        counter!(READ_CACHE_MISSES, "cache" => cache),
    )
}

/// A connection accepted (+1) or closed (-1).
pub(crate) fn connection_open(change: f64) {
    gauge!(CONNECTIONS_OPEN).increment(change);
}

/// A connection closed to make room for a newcomer.
pub(crate) fn connection_evicted() {
    counter!(CONNECTIONS_EVICTED).increment(1);
}

/// Whether the rate limits count in the process because Redis does not
/// answer (1) or in Redis as configured, or without Redis (0).
pub(crate) fn redis_fallback(falling_back: bool) {
    gauge!(REDIS_FALLBACK).set(if falling_back { 1.0 } else { 0.0 });
}

/// What sets the gauges that are read when scraped (the outbox, the pool).
pub(crate) type Sampler =
    Arc<dyn Fn() -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync + 'static>;

/// The process's recorder, installed once (tests start many servers in one
/// process; they share it).
static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

/// Installs the Prometheus recorder (once per process) and returns its
/// handle.
pub(crate) fn install() -> anyhow::Result<PrometheusHandle> {
    if let Some(handle) = HANDLE.get() {
        return Ok(handle.clone());
    }
    let recorder = PrometheusBuilder::new()
        .set_buckets_for_metric(
            Matcher::Full(HTTP_REQUEST_DURATION.into()),
            &DURATION_BUCKETS,
        )
        .and_then(|b| {
            b.set_buckets_for_metric(Matcher::Full(HTTP_REQUEST_BODY_SIZE.into()), &SIZE_BUCKETS)
        })
        .and_then(|b| {
            b.set_buckets_for_metric(Matcher::Full(HTTP_RESPONSE_BODY_SIZE.into()), &SIZE_BUCKETS)
        })
        .context("cannot set the histograms' buckets")?
        .build_recorder();
    let handle = recorder.handle();
    if metrics::set_global_recorder(recorder).is_err() {
        // Another thread won the race: use its recorder.
        return HANDLE
            .get()
            .cloned()
            .context("a metrics recorder of another kind is installed");
    }
    let handle = HANDLE.get_or_init(|| handle).clone();
    describe();
    start_at_zero();
    gauge!(
        BUILD_INFO,
        "version" => build_info::VERSION,
        "commit" => build_info::COMMIT,
        "built_on" => build_info::BUILT_ON,
    )
    .set(1.0);
    process_collector().describe();
    Ok(handle)
}

/// The `process_*` series (CPU seconds, memory, open files, threads,
/// start time), read from the operating system at each scrape.
fn process_collector() -> &'static metrics_process::Collector {
    static COLLECTOR: OnceLock<metrics_process::Collector> = OnceLock::new();
    COLLECTOR.get_or_init(metrics_process::Collector::default)
}

/// The help text (and unit) of each metric.
fn describe() {
    for (name, kind, unit, help) in METRICS {
        match (kind, unit) {
            (Kind::Counter, Some(unit)) => describe_counter!(name, unit, help),
            (Kind::Counter, None) => describe_counter!(name, help),
            (Kind::Gauge, Some(unit)) => describe_gauge!(name, unit, help),
            (Kind::Gauge, None) => describe_gauge!(name, help),
            (Kind::Histogram, Some(unit)) => describe_histogram!(name, unit, help),
            (Kind::Histogram, None) => describe_histogram!(name, help),
        }
    }
}

/// Every series of our own exists from the start, at zero: a counter that
/// appears only at its first event hides that event from `rate()`, and a
/// dashboard would show nothing rather than zero.
fn start_at_zero() {
    for limit in Limit::ALL {
        counter!(RATE_LIMITED, &limit.labels()).absolute(0);
    }
    for (service, reason) in AuthFailure::ALL {
        counter!(AUTHENTICATION_FAILURES, "service" => service, "reason" => reason.reason())
            .absolute(0);
    }
    for name in [
        PASSWORD_HASH_REFUSED,
        EMAILS_DELIVERED,
        EMAILS_FAILED,
        DB_POOL_WAITS,
        CONNECTIONS_EVICTED,
    ] {
        counter!(name).absolute(0);
    }
    for name in [
        PASSWORD_HASH_QUEUE,
        OUTBOX_PENDING,
        OUTBOX_OLDEST_PENDING_AGE,
        CONNECTIONS_OPEN,
        REDIS_FALLBACK,
    ] {
        gauge!(name).increment(0.0);
    }
    db_pool(0, 0);
}

/// How often histograms' samples are folded into their buckets when nobody
/// scrapes (they are held until then).
const UPKEEP_EVERY: Duration = Duration::from_secs(5);

/// Serves `GET /metrics` on `listener` until `shutdown`; `sample` sets the
/// gauges read at scrape time first.
pub(crate) async fn serve(
    listener: tokio::net::TcpListener,
    handle: PrometheusHandle,
    sample: Sampler,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    let upkeep = {
        let handle = handle.clone();
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(UPKEEP_EVERY);
            loop {
                ticks.tick().await;
                handle.run_upkeep();
            }
        })
    };
    let router = axum::Router::new().route(
        "/metrics",
        axum::routing::get(move || {
            let handle = handle.clone();
            let sample = sample.clone();
            async move {
                sample().await;
                process_collector().collect();
                (
                    [(
                        http::header::CONTENT_TYPE,
                        "text/plain; version=0.0.4; charset=utf-8",
                    )],
                    handle.render(),
                )
            }
        }),
    );
    if let Err(e) = axum::serve(listener, router)
        .with_graceful_shutdown(shutdown)
        .await
    {
        tracing::warn!(error = %e, "the metrics listener stopped");
    }
    upkeep.abort();
}

/// Binds the metrics listener.
pub(crate) fn listen(address: SocketAddr) -> anyhow::Result<tokio::net::TcpListener> {
    let socket = std::net::TcpListener::bind(address)
        .with_context(|| format!("cannot listen for metrics on {address}"))?;
    socket.set_nonblocking(true)?;
    Ok(tokio::net::TcpListener::from_std(socket)?)
}
