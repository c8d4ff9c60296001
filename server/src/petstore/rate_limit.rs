//! The pet store's general limit: so many requests a minute from each
//! client address. Off unless configured (`petstore.requests_per_minute`),
//! as upstream, whose document lists no 429; when on, every pet store answer
//! carries the limit's headers, errors included, and a request over it is
//! 429 (`ApiResponse`, `Retry-After`).

use std::sync::Arc;

use axum::extract::Request;
use axum::response::{IntoResponse, Response};

use crate::limit_headers;
use crate::limits::Limiter;
use crate::telemetry::metrics::Limit;

/// What the middleware needs.
#[derive(Debug, Clone)]
pub(crate) struct RequestLimit {
    pub(crate) limiter: Arc<Limiter>,
    /// Requests a minute per address; none: no limit.
    pub(crate) per_minute: Option<u32>,
}

/// Counts `request` against its client's quota: over it, a 429; within it,
/// `next`'s answer; the limit's headers on both.
pub(crate) async fn limit_requests<Answer: Future<Output = Response>>(
    limit: &RequestLimit,
    request: Request,
    next: impl FnOnce(Request) -> Answer,
) -> Response {
    let Some(per_minute) = limit.per_minute else {
        return next(request).await;
    };
    let now = chrono::Utc::now().timestamp();
    let address = crate::extract::client_address(request.extensions())
        .map_or_else(|| "unknown".to_owned(), |ip| ip.to_string());
    let quota = limit
        .limiter
        .hit(&format!("address:{address}"), per_minute, now)
        .await;
    let mut response = if quota.allowed {
        next(request).await
    } else {
        crate::telemetry::metrics::rate_limited(Limit::PetstoreRequests);
        limit_headers::over_limit(quota, now).into_response()
    };
    limit_headers::add_headers(response.headers_mut(), quota, now);
    response
}
