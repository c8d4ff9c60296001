//! The portfolio's checks at its edge (`http::edge`): what a request
//! presents (its credentials, checked once), then the rate limits: so many
//! requests per minute per API key, and per client address for requests
//! without a known key. Every response carries the limit's headers; a
//! request over the limit is `429 RATE_LIMITED` with `Retry-After`. And
//! each request is counted in the analytics ([`count_requests`]).
//!
//! The counters are [`crate::limits::Limiter`]'s sliding one-minute windows,
//! in Redis with `--redis-url` (shared by every replica), else in memory
//! (each server process counts on its own). A client's address is the TCP
//! peer's, or behind a trusted proxy the one it forwards
//! ([`crate::http::extract::client_address`]).

use std::sync::Arc;

use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;

use crate::config::RateLimitConfig;
use crate::http::edge::{Check, Checked, EdgeChecks};
use crate::http::limit_headers;
use crate::limits::Limiter;
use crate::portfolio::api::auth::{self, Authentication, KeyName};
use crate::portfolio::ops::analytics::{ANONYMOUS, Recorder};
use crate::portfolio::wire::PortfolioErrors;
use crate::telemetry::metrics::Limit;

/// What the portfolio's edge checks with: the authentication step's, and
/// its rate limit.
#[derive(Debug, Clone)]
pub(crate) struct PortfolioEdge {
    pub(crate) authentication: Authentication,
    pub(crate) limit: RateLimits,
}

/// The authentication step, whose finding the rate limit counts by.
impl EdgeChecks for PortfolioEdge {
    type Errors = PortfolioErrors;

    fn check(&self, request: Request) -> Check {
        let edge = self.clone();
        Check::Waiting(Box::pin(async move {
            let request = auth::authenticate(&edge.authentication, request).await;
            limit_requests(&edge.limit, request).await
        }))
    }
}

/// What the rate limit needs.
#[derive(Debug, Clone)]
pub(crate) struct RateLimits {
    pub(crate) limiter: Arc<Limiter>,
    pub(crate) config: RateLimitConfig,
}

/// Counts `request` against its caller's quota (its API key's or token's,
/// as [`crate::portfolio::api::auth::authenticate`] found it before, or its address's):
/// over it, a 429 (the edge, `edge.rs`, puts the limit's headers on every
/// answer). The health checks count but are never refused: a load
/// balancer checking N replicas spends its address's budget N times as fast
/// (the counters are shared), and a 429 there would take every replica out
/// of service at once.
pub(crate) async fn limit_requests(limits: &RateLimits, request: Request) -> Checked {
    let now = chrono::Utc::now().timestamp();
    let key_name = request
        .extensions()
        .get::<KeyName>()
        .and_then(|KeyName(name)| name.clone());
    let (caller, limit, counted_as) = match key_name {
        Some(name) => (
            format!("key:{name}"),
            limits.config.per_key_per_minute,
            Limit::PortfolioRequestsPerKey,
        ),
        None => {
            let address = crate::http::extract::client_address(request.extensions())
                .map_or_else(|| "unknown".to_owned(), |ip| ip.to_string());
            (
                format!("address:{address}"),
                limits.config.anonymous_per_minute,
                Limit::PortfolioRequestsPerAddress,
            )
        }
    };
    let quota = limits.limiter.hit(&caller, limit, now).await;
    let health_check = matches!(request.uri().path(), "/api/health" | "/api/health/ready");
    let verdict = if quota.allowed || health_check {
        Ok(request)
    } else {
        crate::telemetry::metrics::rate_limited(counted_as);
        Err(limit_headers::over_limit(quota, now))
    };
    Checked {
        verdict,
        quota: Some((quota, now)),
    }
}

/// Middleware over the portfolio's routes: counts each request, by route
/// template, method, status and caller, in the analytics.
pub(crate) async fn count_requests(
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
    recorder.count_request(
        route,
        method,
        response.status().as_u16(),
        api_key,
        u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    );
    response
}
