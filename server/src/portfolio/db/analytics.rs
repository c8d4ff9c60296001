//! Analytics: request counts per day, route, method, status and key, and
//! page views per day and path, added up by upserts.

use std::collections::HashMap;

use chrono::NaiveDate;

use crate::portfolio::model::{KeyStats, PageViewStats, RequestKey, RequestStats, RequestTotals};
use crate::storage::{Database, StoreError};

/// Adds a batch of counts, in one transaction.
pub(crate) async fn add(
    db: &Database,
    requests: &HashMap<RequestKey, RequestTotals>,
    views: &HashMap<(NaiveDate, String), i64>,
) -> Result<(), StoreError> {
    let mut tx = db.begin_write().await?;
    tx.changes_nothing_cached();
    for (key, totals) in requests {
        sqlx::query(
            "INSERT INTO analytics_requests (day, route, method, status, api_key, count, total_ms, max_ms) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
             ON CONFLICT (day, route, method, status, api_key) DO UPDATE SET \
             count = analytics_requests.count + excluded.count, \
             total_ms = analytics_requests.total_ms + excluded.total_ms, \
             max_ms = CASE WHEN excluded.max_ms > analytics_requests.max_ms \
                      THEN excluded.max_ms ELSE analytics_requests.max_ms END",
        )
        .bind(key.day.to_string())
        .bind(&key.route)
        .bind(&key.method)
        .bind(i32::from(key.status))
        .bind(&key.api_key)
        .bind(totals.count)
        .bind(totals.total_ms)
        .bind(totals.max_ms)
        .execute(tx.conn())
        .await?;
    }
    for ((day, path), count) in views {
        sqlx::query(
            "INSERT INTO analytics_page_views (day, path, count) VALUES ($1, $2, $3) \
             ON CONFLICT (day, path) DO UPDATE SET count = analytics_page_views.count + excluded.count",
        )
        .bind(day.to_string())
        .bind(path)
        .bind(count)
        .execute(tx.conn())
        .await?;
    }
    tx.commit().await
}

/// What the days from `from` to `to` (inclusive) add up to.
#[derive(Debug)]
pub(crate) struct Summary {
    pub(crate) requests: Vec<RequestStats>,
    pub(crate) by_api_key: Vec<KeyStats>,
    pub(crate) page_views: Vec<PageViewStats>,
}

fn day(text: &str) -> Result<NaiveDate, StoreError> {
    text.parse()
        .map_err(|e| StoreError::corrupt(format!("analytics day {text:?}: {e}")))
}

/// The counts of the days from `from` to `to`, inclusive.
pub(crate) async fn summary(
    db: &Database,
    from: NaiveDate,
    to: NaiveDate,
) -> Result<Summary, StoreError> {
    let (from, to) = (from.to_string(), to.to_string());
    let mut conn = db.conn().await?;
    let rows: Vec<(String, String, String, i32, i64, i64, i64)> = sqlx::query_as(
        "SELECT day, route, method, status, CAST(SUM(count) AS BIGINT), CAST(SUM(total_ms) AS BIGINT), \
         CAST(MAX(max_ms) AS BIGINT) FROM analytics_requests \
         WHERE day >= $1 AND day <= $2 GROUP BY day, route, method, status ORDER BY day, route, method, status",
    )
    .bind(&from)
    .bind(&to)
    .fetch_all(&mut *conn)
    .await?;
    let by_key: Vec<(String, i64)> = sqlx::query_as(
        "SELECT api_key, CAST(SUM(count) AS BIGINT) FROM analytics_requests WHERE day >= $1 AND day <= $2 \
         GROUP BY api_key ORDER BY api_key",
    )
    .bind(&from)
    .bind(&to)
    .fetch_all(&mut *conn)
    .await?;
    let views: Vec<(String, String, i64)> = sqlx::query_as(
        "SELECT day, path, count FROM analytics_page_views WHERE day >= $1 AND day <= $2 ORDER BY day, path",
    )
    .bind(&from)
    .bind(&to)
    .fetch_all(&mut *conn)
    .await?;
    let requests = rows
        .into_iter()
        .map(|(d, route, method, status, count, total_ms, max_ms)| {
            Ok(RequestStats {
                day: day(&d)?,
                route,
                method,
                status,
                count,
                average_ms: if count > 0 { total_ms / count } else { 0 },
                max_ms,
            })
        })
        .collect::<Result<_, StoreError>>()?;
    let page_views = views
        .into_iter()
        .map(|(d, path, count)| {
            Ok(PageViewStats {
                day: day(&d)?,
                path,
                count,
            })
        })
        .collect::<Result<_, StoreError>>()?;
    Ok(Summary {
        requests,
        by_api_key: by_key
            .into_iter()
            .map(|(api_key, count)| KeyStats { api_key, count })
            .collect(),
        page_views,
    })
}
