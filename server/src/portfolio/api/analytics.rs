//! Analytics: request counts and latencies per route, status and day, and
//! per API key; page views from a public beacon; a summary for a date range.
//!
//! Recording stays off the request path: the middleware hands each event to
//! a bounded channel (never waiting; when the channel is full the event is
//! dropped and counted in the log) and a background task adds them up and
//! writes them in batches. No client address is stored.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use axum::extract::{MatchedPath, Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::Response;
use chrono::{NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;
use utoipa::{IntoParams, ToSchema};

use crate::http::error::Error;
use crate::http::extract::{JsonBody, Query, keep_empty};
use crate::http::idempotency::Idempotent;
use crate::portfolio::PortfolioState;
use crate::portfolio::api::auth::KeyName;
use crate::portfolio::api::auth::{AnalyticsRead, Protected};
use crate::portfolio::db;
use crate::portfolio::model::fields::Fields;
use crate::portfolio::model::{KeyStats, PageViewStats, RequestKey, RequestStats, RequestTotals};
use crate::storage::Database;

/// Events waiting to be written, at most.
const CHANNEL_CAPACITY: usize = 10_000;
/// The longest date range a summary covers.
const MAX_RANGE_DAYS: i64 = 366;
/// The name requests without a known key are counted under.
pub(crate) const ANONYMOUS: &str = "anonymous";

#[derive(Debug)]
enum Event {
    Request {
        route: String,
        method: String,
        status: u16,
        api_key: String,
        millis: u64,
    },
    PageView {
        path: String,
    },
}

/// Where the middleware and the beacon send events.
#[derive(Clone)]
pub(crate) struct Recorder {
    events: mpsc::Sender<Event>,
    dropped: Arc<AtomicU64>,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder").finish_non_exhaustive()
    }
}

impl Recorder {
    /// The recorder and its writer task, which flushes every `flush_every`.
    pub(crate) fn start(
        db: Database,
        flush_every: Duration,
    ) -> (Recorder, tokio::task::JoinHandle<()>) {
        let (events, receiver) = mpsc::channel(CHANNEL_CAPACITY);
        let recorder = Recorder {
            events,
            dropped: Arc::new(AtomicU64::new(0)),
        };
        let task = tokio::spawn(write_batches(
            db,
            receiver,
            flush_every,
            recorder.dropped.clone(),
        ));
        (recorder, task)
    }

    fn record(&self, event: Event) {
        if self.events.try_send(event).is_err() {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }
}

async fn write_batches(
    db: Database,
    mut receiver: mpsc::Receiver<Event>,
    flush_every: Duration,
    dropped: Arc<AtomicU64>,
) {
    let mut requests: HashMap<RequestKey, RequestTotals> = HashMap::new();
    let mut views: HashMap<(NaiveDate, String), i64> = HashMap::new();
    let mut ticker = tokio::time::interval(flush_every);
    loop {
        tokio::select! {
            event = receiver.recv() => {
                let day = Utc::now().date_naive();
                match event {
                    Some(Event::Request { route, method, status, api_key, millis }) => {
                        let key = RequestKey { day, route, method, status, api_key };
                        requests.entry(key).or_default().add(i64::try_from(millis).unwrap_or(i64::MAX));
                    }
                    Some(Event::PageView { path }) => *views.entry((day, path)).or_default() += 1,
                    None => {
                        flush(&db, &mut requests, &mut views).await;
                        return;
                    }
                }
            }
            _ = ticker.tick() => {
                flush(&db, &mut requests, &mut views).await;
                let lost = dropped.swap(0, Ordering::Relaxed);
                if lost > 0 {
                    tracing::warn!(lost, "analytics events dropped: the writer fell behind");
                }
            }
        }
    }
}

async fn flush(
    db: &Database,
    requests: &mut HashMap<RequestKey, RequestTotals>,
    views: &mut HashMap<(NaiveDate, String), i64>,
) {
    if requests.is_empty() && views.is_empty() {
        return;
    }
    match db::analytics::add(db, requests, views).await {
        Ok(()) => {
            requests.clear();
            views.clear();
        }
        // Kept for the next flush: nothing is lost to a passing fault.
        Err(e) => tracing::error!(error = %e, "cannot write analytics; will retry"),
    }
}

/// Middleware over the portfolio's routes: counts each request.
pub(crate) async fn record_requests(
    State(recorder): State<Recorder>,
    request: Request,
    next: Next,
) -> Response {
    let started = Instant::now();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_owned())
        .unwrap_or_else(|| "(no route)".to_owned());
    let method = request.method().as_str().to_owned();
    let api_key = request
        .extensions()
        .get::<KeyName>()
        .and_then(|KeyName(name)| name.clone())
        .unwrap_or_else(|| ANONYMOUS.to_owned());
    let response = next.run(request).await;
    recorder.record(Event::Request {
        route,
        method,
        status: response.status().as_u16(),
        api_key,
        millis: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    });
    response
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub(crate) struct PageView {
    /// The page's path on the site, e.g. `/posts/why-contract-first`.
    #[schema(pattern = "^/", max_length = 512)]
    pub(crate) path: String,
}

/// Counts a page view (the site's pages call this beacon); 422 for a path
/// that is not a site path.
#[utoipa::path(
    post, path = "/api/analytics/pageview",
    tag = "analytics",
    params(crate::http::idempotency::IdempotencyKeyHeader),
    request_body(content((PageView = "application/json"))),
    responses(
        (status = 202, description = "Counted"),
    ),
)]
pub(crate) async fn record_page_view(
    State(state): State<PortfolioState>,
    Idempotent(JsonBody(view)): Idempotent<JsonBody<PageView>>,
) -> Result<StatusCode, Error> {
    let mut fields = Fields::default();
    let path = fields.text("path", Some(&view.path), true, 512);
    if path.as_ref().is_some_and(|p| !p.starts_with('/')) {
        fields.problem("path", "must start with /");
    }
    fields.check()?;
    state.analytics.record(Event::PageView {
        path: path.unwrap_or_default(),
    });
    Ok(StatusCode::ACCEPTED)
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct SummaryQuery {
    /// First day (UTC), inclusive; default: 30 days before `to`.
    #[serde(default, deserialize_with = "keep_empty")]
    from: Option<NaiveDate>,
    /// Last day (UTC), inclusive; default: today.
    #[serde(default, deserialize_with = "keep_empty")]
    to: Option<NaiveDate>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub(crate) struct AnalyticsSummary {
    pub(crate) from: NaiveDate,
    pub(crate) to: NaiveDate,
    #[schema(minimum = 0)]
    pub(crate) total_requests: i64,
    pub(crate) requests: Vec<RequestStats>,
    pub(crate) by_api_key: Vec<KeyStats>,
    pub(crate) page_views: Vec<PageViewStats>,
}

/// Analytics for a date range.
#[utoipa::path(
    get, path = "/api/analytics/summary",
    tag = "analytics",
    params(SummaryQuery),
    responses(
        (status = 200, description = "The summary", body = AnalyticsSummary),
        (status = 403, description = "The key lacks analytics:read"),
        (status = 400, description = "A date is malformed, or the range is reversed or over 366 days"),
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn get_analytics_summary(
    State(state): State<PortfolioState>,
    _caller: Protected<AnalyticsRead>,
    Query(query): Query<SummaryQuery>,
) -> Result<axum::Json<AnalyticsSummary>, Error> {
    let to = query.to.unwrap_or_else(|| Utc::now().date_naive());
    let from = query.from.unwrap_or(to - chrono::Duration::days(30));
    if from > to {
        return Err(Error::bad_request("from is after to"));
    }
    if (to - from).num_days() > MAX_RANGE_DAYS {
        return Err(Error::bad_request(format!(
            "a summary covers at most {MAX_RANGE_DAYS} days"
        )));
    }
    let summary = db::analytics::summary(&state.db, from, to).await?;
    Ok(axum::Json(AnalyticsSummary {
        from,
        to,
        total_requests: summary.requests.iter().map(|r| r.count).sum(),
        requests: summary.requests,
        by_api_key: summary.by_api_key,
        page_views: summary.page_views,
    }))
}
