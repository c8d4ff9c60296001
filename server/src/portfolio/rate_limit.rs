//! Rate limits: so many requests per minute per API key, and
//! per client address for requests without a known key. Every response
//! carries the limit's headers; a request over the limit is `429
//! RATE_LIMITED` with `Retry-After`.
//!
//! The counters are [`crate::limits::Limiter`]'s fixed one-minute windows,
//! kept in memory: each server process counts on its own.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::auth::Presented;
use crate::access::Access;
use crate::config::RateLimitConfig;
use crate::error::{Error, ErrorCode};
use crate::limits::{Limiter, Quota, WINDOW_SECS};
use crate::storage::Database;

/// The name of the known API key a request carries (`None`: no known key),
/// left in the request's extensions by [`limit_requests`].
#[derive(Debug, Clone)]
pub struct KeyName(pub Option<String>);

/// What the middleware needs.
#[derive(Debug, Clone)]
pub struct RateLimits {
    pub limiter: Arc<Limiter>,
    pub access: Arc<Access>,
    pub db: Database,
    pub config: RateLimitConfig,
}

fn set(headers: &mut HeaderMap, name: &'static str, value: String) {
    if let Ok(value) = HeaderValue::from_str(&value) {
        headers.insert(HeaderName::from_static(name), value);
    }
}

/// The limit's headers: the `X-RateLimit-*` trio and the IETF draft's fields.
fn add_headers(headers: &mut HeaderMap, quota: Quota, now: i64) {
    let seconds_left = (quota.reset_at - now).max(0);
    set(headers, "x-ratelimit-limit", quota.limit.to_string());
    set(
        headers,
        "x-ratelimit-remaining",
        quota.remaining.to_string(),
    );
    set(headers, "x-ratelimit-reset", quota.reset_at.to_string());
    set(
        headers,
        "ratelimit-policy",
        format!("\"default\";q={};w={WINDOW_SECS}", quota.limit),
    );
    set(
        headers,
        "ratelimit",
        format!("\"default\";r={};t={seconds_left}", quota.remaining),
    );
}

/// Middleware over the portfolio's routes.
pub async fn limit_requests(
    State(limits): State<RateLimits>,
    mut request: Request,
    next: Next,
) -> Response {
    let now = chrono::Utc::now().timestamp();
    // Checked once per request; the access checks and analytics read it
    // from the extensions.
    let presented =
        Presented::check(&limits.access, &limits.db, request.headers(), request.uri()).await;
    let key_name = presented.identity();
    request.extensions_mut().insert(presented);
    request.extensions_mut().insert(KeyName(key_name.clone()));
    let (caller, limit) = match key_name {
        Some(name) => (format!("key:{name}"), limits.config.per_key_per_minute),
        None => {
            let address = crate::extract::client_address(request.extensions())
                .map_or_else(|| "unknown".to_owned(), |ip| ip.to_string());
            (
                format!("address:{address}"),
                limits.config.anonymous_per_minute,
            )
        }
    };
    let quota = limits.limiter.hit(&caller, limit, now);
    let mut response = if quota.allowed {
        next.run(request).await
    } else {
        let retry_after = (quota.reset_at - now).max(1);
        let mut response = Error::new(
            ErrorCode::RateLimited,
            format!("over the limit of {limit} requests per minute; retry in {retry_after} s"),
        )
        .with_detail("limit", quota.limit)
        .with_detail("retry_after_seconds", retry_after)
        .into_response();
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(retry_after));
        response
    };
    add_headers(response.headers_mut(), quota, now);
    response
}

/// Documents what [`limit_requests`] does: every answer carries the limit's
/// headers, any operation can answer 429, and a 429 also has `Retry-After`.
pub fn document(openapi: &mut utoipa::openapi::OpenApi) {
    use utoipa::openapi::header::HeaderBuilder;
    use utoipa::openapi::schema::{ObjectBuilder, Type};
    let header = |ty: Type, format: Option<utoipa::openapi::KnownFormat>, description: &str| {
        let mut schema = ObjectBuilder::new().schema_type(ty);
        if let Some(format) = format {
            schema = schema.format(Some(utoipa::openapi::SchemaFormat::KnownFormat(format)));
        }
        utoipa::openapi::RefOr::T(
            HeaderBuilder::new()
                .schema(Some(schema))
                .description(Some(description))
                .build(),
        )
    };
    use utoipa::openapi::KnownFormat::{Int32, Int64};
    let common = [
        (
            "X-RateLimit-Limit",
            header(Type::Integer, Some(Int32), "Requests allowed per window."),
        ),
        (
            "X-RateLimit-Remaining",
            header(Type::Integer, Some(Int32), "Requests left in this window."),
        ),
        (
            "X-RateLimit-Reset",
            header(
                Type::Integer,
                Some(Int64),
                "When the window ends (Unix seconds).",
            ),
        ),
        (
            "RateLimit-Policy",
            header(
                Type::String,
                None,
                "The policy, e.g. `\"default\";q=100;w=60`.",
            ),
        ),
        (
            "RateLimit",
            header(
                Type::String,
                None,
                "Where the caller stands, e.g. `\"default\";r=99;t=42`.",
            ),
        ),
    ];
    for operation in crate::openapi_errors::operations_mut(openapi) {
        let responses = &mut operation.responses.responses;
        responses.entry("429".to_owned()).or_insert_with(|| {
            let schema =
                utoipa::openapi::RefOr::Ref(utoipa::openapi::Ref::from_schema_name("ErrorBody"));
            utoipa::openapi::RefOr::T(
                utoipa::openapi::response::ResponseBuilder::new()
                    .description("Over the rate limit; retry after `Retry-After` seconds.")
                    .content(
                        "application/json",
                        utoipa::openapi::Content::new(Some(schema)),
                    )
                    .build(),
            )
        });
        for (status, response) in responses.iter_mut() {
            if let utoipa::openapi::RefOr::T(response) = response {
                for (name, header) in &common {
                    response
                        .headers
                        .entry((*name).to_owned())
                        .or_insert_with(|| header.clone());
                }
                if status == "429" {
                    response
                        .headers
                        .entry("Retry-After".to_owned())
                        .or_insert_with(|| {
                            header(Type::Integer, Some(Int32), "Seconds until the window ends.")
                        });
                }
            }
        }
    }
}
