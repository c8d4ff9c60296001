//! Analytics: requests counted off the request path, page views, the summary.

use std::time::Duration;

use end_to_end_tests::{Db, TestServer, eventually, http, keys, on_every_database};
use petstore_portfolio_client::portfolio::{Client, types};
use serde_json::json;

use crate::support::{assert_api_error, assert_refused, parse};

on_every_database!(
    requests_are_counted_per_route_and_status,
    requests_are_counted_per_api_key,
    no_client_address_is_kept,
    page_views_are_counted_per_path,
    a_page_view_path_must_start_with_a_slash,
    the_summary_without_a_key_is_401,
    the_summary_without_its_scope_is_403,
    the_summary_refuses_a_bad_range,
    a_graceful_stop_writes_what_is_not_written_yet,
);

/// Polls the summary (bounded) until `done` holds: the writer works in batches.
async fn summary_when(
    server: &TestServer,
    done: impl Fn(&types::AnalyticsSummary) -> bool,
) -> types::AnalyticsSummary {
    let client = server.portfolio_with_key(Some(keys::ADMIN));
    eventually(Duration::from_secs(20), "analytics arrive", async || {
        let summary = client
            .get_analytics_summary()
            .send()
            .await
            .expect("getAnalyticsSummary")
            .into_inner();
        if done(&summary) {
            Ok(summary)
        } else {
            Err(summary)
        }
    })
    .await
}

fn count(summary: &types::AnalyticsSummary, route: &str, status: i32) -> i64 {
    summary
        .requests
        .iter()
        .filter(|r| r.route == route && r.status == status)
        .map(|r| r.count)
        .sum()
}

/// Lists the projects twice and asks for a missing post, without a key,
/// and reads the LLM context with the context reader's key; returns the
/// summary once all four are counted.
async fn four_requests_counted(server: &TestServer) -> types::AnalyticsSummary {
    let anonymous = server.portfolio();
    for _ in 0..2 {
        anonymous
            .list_projects()
            .send()
            .await
            .expect("listProjects");
    }
    let _ = anonymous.get_post().slug("no-such-post").send().await;
    server
        .portfolio_with_key(Some(keys::CONTEXT_READER))
        .get_llm_context()
        .send()
        .await
        .expect("getLlmContext");
    summary_when(server, |s| {
        count(s, "/api/projects", 200) == 2
            && count(s, "/api/posts/{slug}", 404) == 1
            && count(s, "/api/llm-context", 200) == 1
    })
    .await
}

async fn requests_are_counted_per_route_and_status(db: Db) {
    let server = TestServer::start(db).await;
    let summary = four_requests_counted(&server).await;
    let today = chrono::Utc::now().date_naive();
    assert!(
        summary
            .requests
            .iter()
            .all(|r| r.day == today && r.max_ms >= r.average_ms)
    );
    server.stop().await;
}

async fn requests_are_counted_per_api_key(db: Db) {
    let server = TestServer::start(db).await;
    let summary = four_requests_counted(&server).await;
    let by_key = |name: &str| {
        summary
            .by_api_key
            .iter()
            .find(|k| k.api_key == name)
            .map(|k| k.count)
    };
    assert_eq!(by_key("context-reader"), Some(1));
    assert!(by_key("anonymous").is_some_and(|n| n >= 3));
    assert!(summary.total_requests >= 4);
    server.stop().await;
}

async fn no_client_address_is_kept(db: Db) {
    let server = TestServer::start(db).await;
    four_requests_counted(&server).await;
    assert_eq!(
        server
            .count_where(
                "analytics_requests",
                "route LIKE '%127.0.0.1%' OR api_key LIKE '%127.0.0.1%'"
            )
            .await,
        0
    );
    server.stop().await;
}

async fn record_page_view(client: &Client, path: &str) -> u16 {
    let view = types::PageView { path: parse(path) };
    let answer = client
        .record_page_view()
        .body(view)
        .send()
        .await
        .expect("recordPageView");
    answer.status().as_u16()
}

async fn page_views_are_counted_per_path(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.portfolio();
    for path in [
        "/posts/why-contract-first",
        "/posts/why-contract-first",
        "/",
    ] {
        assert_eq!(record_page_view(&client, path).await, 202);
    }
    let summary = summary_when(&server, |s| {
        s.page_views.iter().map(|v| v.count).sum::<i64>() == 3
    })
    .await;
    let views: Vec<(&str, i64)> = summary
        .page_views
        .iter()
        .map(|v| (v.path.as_str(), v.count))
        .collect();
    assert_eq!(views, [("/", 1), ("/posts/why-contract-first", 2)]);
    server.stop().await;
}

async fn a_page_view_path_must_start_with_a_slash(db: Db) {
    let server = TestServer::start(db).await;
    let request = server.post_json("/api/analytics/pageview", json!({"path": "no-slash"}));
    assert_refused(request, 422, "VALIDATION_FAILED").await;
    server.stop().await;
}

async fn the_summary_without_a_key_is_401(db: Db) {
    let server = TestServer::start(db).await;
    let summary = server.portfolio().get_analytics_summary().send().await;
    assert_api_error(summary, 401, "UNAUTHORIZED");
    server.stop().await;
}

async fn the_summary_without_its_scope_is_403(db: Db) {
    let server = TestServer::start(db).await;
    let summary = server
        .portfolio_with_key(Some(keys::CONTEXT_READER))
        .get_analytics_summary()
        .send()
        .await;
    let error = assert_api_error(summary, 403, "FORBIDDEN");
    assert_eq!(
        error.details.get("required_scope"),
        Some(&json!("analytics:read"))
    );
    server.stop().await;
}

async fn the_summary_refuses_a_bad_range(db: Db) {
    let server = TestServer::start(db).await;
    for query in [
        "from=2026-02-01&to=2026-01-01",
        "from=2020-01-01&to=2026-01-01",
        "from=yesterday",
        "to=2026-13-01",
    ] {
        let request = http()
            .get(server.at(&format!("/api/analytics/summary?{query}")))
            .header("x-api-key", keys::ADMIN);
        assert_refused(request, 400, "BAD_REQUEST").await;
    }
    server.stop().await;
}

async fn a_graceful_stop_writes_what_is_not_written_yet(db: Db) {
    // A flush interval far longer than the test: only the stop can write.
    let server =
        TestServer::start_with(db, |c| c.portfolio.analytics_flush_interval_ms = 3_600_000).await;
    let client = server.portfolio();
    for _ in 0..3 {
        record_page_view(&client, "/stop").await;
    }
    let server = server.restart(|_| {}).await;
    assert_eq!(
        server
            .count_where("analytics_page_views", "path = '/stop' AND count = 3")
            .await,
        1
    );
    server.stop().await;
}
