//! The pet store's checks at its edge (`http::edge`): what a request
//! presents (its credentials, checked once, in `enforce` mode), then the
//! general limit: so many requests a minute from each client address. The
//! limit is off unless configured (`petstore.requests_per_minute`), as
//! upstream, whose document lists no 429; when on, every pet store answer
//! carries the limit's headers, errors included, and a request over it is
//! 429 (`ApiResponse`, `Retry-After`). With neither (the default), nothing
//! waits.

use std::sync::Arc;

use axum::extract::Request;

use crate::http::edge::{Check, Checked, EdgeChecks};
use crate::http::limit_headers;
use crate::limits::Limiter;
use crate::petstore::api::auth;
use crate::petstore::state::PetstoreState;
use crate::petstore::wire::PetstoreErrors;
use crate::telemetry::metrics::Limit;

/// What the pet store's edge checks with: the service (for
/// authentication) and its rate limit.
#[derive(Debug, Clone)]
pub(crate) struct PetstoreEdge {
    pub(crate) state: PetstoreState,
    pub(crate) limit: RequestLimit,
}

impl EdgeChecks for PetstoreEdge {
    type Errors = PetstoreErrors;

    fn check(&self, request: Request) -> Check {
        if !auth::checks_credentials(&self.state) && self.limit.per_minute.is_none() {
            return Check::Done(Checked::passed(request));
        }
        let edge = self.clone();
        Check::Waiting(Box::pin(async move {
            let request = auth::authenticate(&edge.state, request).await;
            limit_requests(&edge.limit, request).await
        }))
    }
}

/// What the middleware needs.
#[derive(Debug, Clone)]
pub(crate) struct RequestLimit {
    pub(crate) limiter: Arc<Limiter>,
    /// Requests a minute per address; none: no limit.
    pub(crate) per_minute: Option<u32>,
}

/// Counts `request` against its client's quota, at the service's edge
/// (`edge.rs`, which puts the limit's headers on the answer): over it, a
/// 429.
pub(crate) async fn limit_requests(limit: &RequestLimit, request: Request) -> Checked {
    let Some(per_minute) = limit.per_minute else {
        return Checked::passed(request);
    };
    let now = chrono::Utc::now().timestamp();
    let address = crate::http::extract::client_address(request.extensions())
        .map_or_else(|| "unknown".to_owned(), |ip| ip.to_string());
    let quota = limit
        .limiter
        .hit(&format!("address:{address}"), per_minute, now)
        .await;
    let verdict = if quota.allowed {
        Ok(request)
    } else {
        crate::telemetry::metrics::rate_limited(Limit::PetstoreRequests);
        Err(limit_headers::over_limit(quota, now))
    };
    Checked {
        verdict,
        quota: Some((quota, now)),
    }
}
