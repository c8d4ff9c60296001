//! Analytics, recorded off the request path: each event goes to a bounded
//! channel (never waiting; when the channel is full the event is dropped
//! and counted in the log) and a background task adds them up and writes
//! them in batches. No client address is stored.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use chrono::{NaiveDate, Utc};
use tokio::sync::mpsc;

use crate::core::failure::Failure;
use crate::portfolio::db;
use crate::portfolio::model::fields::Fields;
use crate::portfolio::model::{RequestKey, RequestTotals};
use crate::storage::Database;

/// Events waiting to be written, at most.
const CHANNEL_CAPACITY: usize = 10_000;
/// The name requests without a known key are counted under.
pub(crate) const ANONYMOUS: &str = "anonymous";

/// What is counted.
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

    /// Counts a request of `api_key` (its name, or [`ANONYMOUS`]) to
    /// `route` that was answered `status` after `millis`.
    pub(crate) fn count_request(
        &self,
        route: String,
        method: String,
        status: u16,
        api_key: String,
        millis: u64,
    ) {
        self.record(Event::Request {
            route,
            method,
            status,
            api_key,
            millis,
        });
    }

    /// Counts a view of the site's page `path`; refused (422) unless it is
    /// a site path of at most 512 characters.
    pub(crate) fn count_page_view(&self, path: &str) -> Result<(), Failure> {
        let mut fields = Fields::default();
        let path = fields.text("path", Some(path), true, 512);
        if path.as_ref().is_some_and(|p| !p.starts_with('/')) {
            fields.problem("path", "must start with /");
        }
        fields.check()?;
        self.record(Event::PageView {
            path: path.unwrap_or_default(),
        });
        Ok(())
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
