//! The analytics of a date range: requests per day, route, method and
//! status, per API key, and page views.

use chrono::{Duration, NaiveDate, Utc};

use crate::core::failure::Failure;
use crate::portfolio::db;
use crate::portfolio::model::AnalyticsSummary;
use crate::storage::Database;

/// The longest date range a summary covers.
pub(crate) const MAX_RANGE_DAYS: i64 = 366;

/// The summary of the days from `from` (default: 30 days before `to`) to
/// `to` (default: today, UTC), inclusive; a reversed range, or one of more
/// than [`MAX_RANGE_DAYS`], is refused.
pub(crate) async fn summary(
    db: &Database,
    from: Option<NaiveDate>,
    to: Option<NaiveDate>,
) -> Result<AnalyticsSummary, Failure> {
    let to = to.unwrap_or_else(|| Utc::now().date_naive());
    let from = from.unwrap_or(to - Duration::days(30));
    if from > to {
        return Err(Failure::malformed("from is after to"));
    }
    if (to - from).num_days() > MAX_RANGE_DAYS {
        return Err(Failure::malformed(format!(
            "a summary covers at most {MAX_RANGE_DAYS} days"
        )));
    }
    let summary = db::analytics::summary(db, from, to).await?;
    Ok(AnalyticsSummary {
        from,
        to,
        total_requests: summary.requests.iter().map(|r| r.count).sum(),
        requests: summary.requests,
        by_api_key: summary.by_api_key,
        page_views: summary.page_views,
    })
}
