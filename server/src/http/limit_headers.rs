//! The rate limits as HTTP shows them: the headers every answer carries,
//! the 429 over a limit, and what the documents say of both. The counting
//! is [`crate::limits`]'.

use axum::http::{HeaderMap, HeaderName, HeaderValue};

use crate::http::error::{Error, ErrorCode};
use crate::limits::{Quota, WINDOW_SECS};

fn set(headers: &mut HeaderMap, name: &'static str, value: String) {
    if let Ok(value) = HeaderValue::from_str(&value) {
        headers.insert(HeaderName::from_static(name), value);
    }
}

/// The limit's headers: the `X-RateLimit-*` trio and the IETF draft's fields.
pub(crate) fn add_headers(headers: &mut HeaderMap, quota: Quota, now: i64) {
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

/// The answer over a limit: 429 `RATE_LIMITED` with `Retry-After`, the
/// seconds until the oldest counted hit leaves the window (the caller adds
/// the limit's headers).
pub(crate) fn over_limit(quota: Quota, now: i64) -> Error {
    let retry_after = (quota.reset_at - now).max(1);
    Error::new(
        ErrorCode::RateLimited,
        format!(
            "over the limit of {} requests per minute; retry in {retry_after} s",
            quota.limit
        ),
    )
    .with_detail("limit", quota.limit)
    .with_detail("retry_after_seconds", retry_after)
    .with_retry_after(u64::try_from(retry_after).unwrap_or(1))
}

/// Documents a service's request limit: every answer carries the limit's
/// headers, any operation can answer 429 (with the service's error body,
/// `schema` in `media_types`), and a 429 also has `Retry-After`.
pub(crate) fn document(openapi: &mut utoipa::openapi::OpenApi, schema: &str, media_types: &[&str]) {
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
    for operation in crate::http::openapi_errors::operations_mut(openapi) {
        let responses = &mut operation.responses.responses;
        responses.entry("429".to_owned()).or_insert_with(|| {
            let mut response = utoipa::openapi::response::ResponseBuilder::new()
                .description("Over the rate limit; retry after `Retry-After` seconds.");
            for media_type in media_types {
                let body =
                    utoipa::openapi::RefOr::Ref(utoipa::openapi::Ref::from_schema_name(schema));
                response = response.content(*media_type, utoipa::openapi::Content::new(Some(body)));
            }
            utoipa::openapi::RefOr::T(response.build())
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
