//! Failures a test asks for: the next few requests of one operation are
//! answered with a chosen error before the service sees them, so that a
//! client's retries can be exercised against the real server. Reachable only
//! through [`Server::bind_with_failures`](crate::Server::bind_with_failures)
//! (the test kit's); a server started otherwise has no such layer at all.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::extract::{MatchedPath, Request, State};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::Response;

use crate::http::error::{Error, ErrorCode, render_now_as};
use crate::petstore::wire::PetstoreErrors;
use crate::portfolio::wire::PortfolioErrors;

/// The failures planned for a server, shared with whoever plans them.
/// Clones share the plan.
#[derive(Debug, Clone, Default)]
pub struct InjectedFailures {
    planned: Arc<Mutex<Vec<Planned>>>,
}

#[derive(Debug)]
struct Planned {
    method: Method,
    route: String,
    remaining: u32,
    status: StatusCode,
    retry_after: Option<Duration>,
}

/// A failure that cannot be planned.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum InvalidFailure {
    #[error("{0} is not an error status: a failure is a 4xx or 5xx")]
    NotAnErrorStatus(u16),
}

impl InjectedFailures {
    /// No failures planned yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The next `times` requests of `method` on `route` (a route template as
    /// the documents write it, e.g. `/v2/pet/{petId}`) are answered with
    /// `status`, in the error format of the service the route belongs to,
    /// with `Retry-After` when `retry_after` is given. Planned again for the
    /// same operation, the new plan replaces what was left of the old.
    pub fn fail_next(
        &self,
        method: Method,
        route: &str,
        times: u32,
        status: StatusCode,
        retry_after: Option<Duration>,
    ) -> Result<(), InvalidFailure> {
        if !(status.is_client_error() || status.is_server_error()) {
            return Err(InvalidFailure::NotAnErrorStatus(status.as_u16()));
        }
        let mut planned = self.lock();
        planned.retain(|p| !(p.method == method && p.route == route));
        planned.push(Planned {
            method,
            route: route.to_owned(),
            remaining: times,
            status,
            retry_after,
        });
        Ok(())
    }

    /// How many of the planned failures of `method route` are still to come.
    pub fn remaining(&self, method: &Method, route: &str) -> u32 {
        self.lock()
            .iter()
            .find(|p| p.method == method && p.route == route)
            .map_or(0, |p| p.remaining)
    }

    /// Forgets every plan.
    pub fn clear(&self) {
        self.lock().clear();
    }

    /// Takes one failure planned for this request, if any is left.
    fn take(&self, method: &Method, route: &str) -> Option<(StatusCode, Option<Duration>)> {
        let mut planned = self.lock();
        let plan = planned
            .iter_mut()
            .find(|p| p.method == method && p.route == route && p.remaining > 0)?;
        plan.remaining -= 1;
        Some((plan.status, plan.retry_after))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Planned>> {
        // A plan is a list of counters: one left half-written by a panic
        // is still a list of counters.
        self.planned.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Answers a request with its planned failure, if one is left; otherwise
/// passes it on.
pub(super) async fn answer_planned_failure(
    State(failures): State<InjectedFailures>,
    route: Option<MatchedPath>,
    request: Request,
    next: Next,
) -> Response {
    let planned = route.and_then(|route| failures.take(request.method(), route.as_str()));
    let Some((status, retry_after)) = planned else {
        return next.run(request).await;
    };
    let (code, _) = ErrorCode::for_status(status);
    let mut error = Error::new(code, format!("injected failure: {status}"));
    if let Some(after) = retry_after {
        error = error.with_retry_after(after.as_secs());
    }
    if request.uri().path().starts_with("/v2/") {
        render_now_as::<PetstoreErrors>(error, status, request.headers())
    } else {
        render_now_as::<PortfolioErrors>(error, status, request.headers())
    }
}
