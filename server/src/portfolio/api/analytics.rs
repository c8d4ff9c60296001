//! Analytics: request counts and latencies per route, status and day, and
//! per API key (`edge::count_requests`); page views from a public beacon; a
//! summary for a date range.

use axum::extract::State;
use axum::http::StatusCode;
use chrono::NaiveDate;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::http::error::Error;
use crate::http::extract::{JsonBody, Query, keep_empty};
use crate::http::idempotency::Idempotent;
use crate::portfolio::api::auth::{AnalyticsRead, Protected};
use crate::portfolio::model::AnalyticsSummary;
use crate::portfolio::reads;
use crate::portfolio::state::PortfolioState;

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
    state.analytics.count_page_view(&view.path)?;
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
    let summary = reads::analytics::summary(&state.db, query.from, query.to).await?;
    Ok(axum::Json(summary))
}
