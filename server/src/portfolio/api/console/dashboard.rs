//! The dashboard: requests and page views per day, the top pages and the
//! subscribers over time as charts (SVG, drawn here from the analytics
//! `getAnalytics` reads and the subscribers' dates), and what waits for the
//! owner (failed emails, pending key requests) as counts that link to their
//! pages.

use std::collections::BTreeMap;

use axum::extract::State;
use axum::response::Response;
use chrono::{Duration, NaiveDate, Utc};
use minijinja::context;
use serde::Serialize;

use super::{Signed, page_of};
use crate::core::failure::Failure;
use crate::portfolio::model::KeyRequestStatus;
use crate::portfolio::reads;
use crate::portfolio::state::PortfolioState;

/// How many days the charts cover.
const DAYS: i64 = 30;

/// How many pages the top list shows.
const TOP_PAGES: usize = 5;

pub(crate) async fn show_dashboard(
    Signed(session): Signed,
    State(state): State<PortfolioState>,
) -> Response {
    let read = dashboard(&state).await;
    page_of(&state, &session, "pages/console/dashboard.html", read).await
}

async fn dashboard(state: &PortfolioState) -> Result<minijinja::Value, Failure> {
    let to = Utc::now().date_naive();
    let from = to - Duration::days(DAYS - 1);
    let summary = reads::analytics::summary(&state.db, Some(from), Some(to)).await?;
    let mut requests = per_day(from, to);
    for stats in &summary.requests {
        *requests.entry(stats.day).or_default() += stats.count;
    }
    let mut views = per_day(from, to);
    let mut by_page: BTreeMap<&str, i64> = BTreeMap::new();
    for stats in &summary.page_views {
        *views.entry(stats.day).or_default() += stats.count;
        *by_page.entry(&stats.path).or_default() += stats.count;
    }
    let mut top_pages: Vec<(&str, i64)> = by_page.into_iter().collect();
    top_pages.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    top_pages.truncate(TOP_PAGES);

    let subscribed_on = reads::newsletter::subscribed_per_day(&state.db).await?;
    let mut subscribers = per_day(from, to);
    let mut total = subscribed_on
        .iter()
        .filter(|(day, _)| **day < from)
        .map(|(_, count)| count)
        .sum::<i64>();
    for (day, count) in subscribers.iter_mut() {
        total += subscribed_on.get(day).copied().unwrap_or(0);
        *count = total;
    }

    let failed_emails = reads::lists::failed_emails(&state.db, WAITING_LIMIT)
        .await?
        .len();
    let window = reads::lists::Window {
        after: None,
        offset: 0,
        limit: 1,
    };
    let pending = reads::lists::key_requests(&state.db, Some(KeyRequestStatus::Pending), &window)
        .await?
        .total;
    Ok(context! {
        from,
        to,
        total_requests => summary.total_requests,
        requests => BarChart::of(&requests),
        views => BarChart::of(&views),
        subscribers => BarChart::of(&subscribers),
        top_pages => top_pages.iter().map(|(path, count)| context! { path, count }).collect::<Vec<_>>(),
        failed_emails,
        pending_key_requests => pending,
    })
}

/// The most failed emails counted.
const WAITING_LIMIT: i64 = 1000;

/// Every day from `from` to `to`, at 0.
fn per_day(from: NaiveDate, to: NaiveDate) -> BTreeMap<NaiveDate, i64> {
    from.iter_days()
        .take_while(|day| *day <= to)
        .map(|day| (day, 0))
        .collect()
}

/// A bar chart's geometry, for the template to draw (`viewBox` units).
#[derive(Debug, Serialize)]
struct BarChart {
    width: u32,
    height: u32,
    /// The highest day's value.
    highest: i64,
    bars: Vec<Bar>,
    first: String,
    last: String,
}

#[derive(Debug, Serialize)]
struct Bar {
    x: u32,
    y: u32,
    width: u32,
    height: u32,
    day: String,
    value: i64,
}

impl BarChart {
    const WIDTH: u32 = 600;
    const HEIGHT: u32 = 140;

    fn of(values: &BTreeMap<NaiveDate, i64>) -> BarChart {
        let highest = values.values().copied().max().unwrap_or(0);
        // The scale: a chart of zeros has bars of height 0.
        let max = highest.max(1);
        let count = u32::try_from(values.len().max(1)).unwrap_or(u32::MAX);
        let slot = Self::WIDTH / count;
        let bars = values
            .iter()
            .zip(0_u32..)
            .map(|((day, value), i)| {
                let scaled = i64::from(Self::HEIGHT) * value.max(&0) / max;
                let height = u32::try_from(scaled).unwrap_or(Self::HEIGHT);
                Bar {
                    x: i * slot + 1,
                    y: Self::HEIGHT - height,
                    width: slot.saturating_sub(2).max(1),
                    height,
                    day: day.to_string(),
                    value: *value,
                }
            })
            .collect();
        BarChart {
            width: Self::WIDTH,
            height: Self::HEIGHT,
            highest,
            bars,
            first: values
                .keys()
                .next()
                .map(ToString::to_string)
                .unwrap_or_default(),
            last: values
                .keys()
                .last()
                .map(ToString::to_string)
                .unwrap_or_default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_scale_to_the_highest_day() {
        let day = |d| NaiveDate::from_ymd_opt(2026, 11, d).unwrap_or_default();
        let values = BTreeMap::from([(day(1), 0), (day(2), 5), (day(3), 10)]);
        let chart = BarChart::of(&values);
        let heights: Vec<u32> = chart.bars.iter().map(|b| b.height).collect();
        assert_eq!(heights, [0, BarChart::HEIGHT / 2, BarChart::HEIGHT]);
        assert_eq!(chart.bars[2].y, 0);
        assert_eq!(
            (chart.first.as_str(), chart.last.as_str()),
            ("2026-11-01", "2026-11-03")
        );
    }
}
