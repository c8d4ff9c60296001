//! Analytics: requests counted off the request path, page views, the summary.

use std::time::{Duration, Instant};

use end_to_end_tests::{Db, TestServer, keys, on_every_database};
use petstore_portfolio_client::portfolio::types;
use serde_json::json;

use crate::support::{api_error, assert_envelope, send_json};

on_every_database!(
    requests_are_counted_per_route_status_and_key,
    page_views_are_counted,
    the_summary_needs_its_scope_and_a_sane_range,
    a_graceful_stop_writes_what_is_not_written_yet,
);

/// Polls the summary (bounded) until `done` holds: the writer works in batches.
async fn summary_when(
    server: &TestServer,
    done: impl Fn(&types::AnalyticsSummary) -> bool,
) -> types::AnalyticsSummary {
    let client = server.portfolio_with_key(Some(keys::ADMIN));
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let summary = client
            .get_analytics_summary()
            .send()
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .into_inner();
        if done(&summary) {
            return summary;
        }
        assert!(
            Instant::now() < deadline,
            "analytics did not arrive: {summary:#?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn count(summary: &types::AnalyticsSummary, route: &str, status: i32) -> i64 {
    summary
        .requests
        .iter()
        .filter(|r| r.route == route && r.status == status)
        .map(|r| r.count)
        .sum()
}

async fn requests_are_counted_per_route_status_and_key(db: Db) {
    let server = TestServer::start(db).await;
    let anonymous = server.portfolio();
    for _ in 0..2 {
        anonymous
            .list_projects()
            .send()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    }
    let _ = anonymous.get_post().slug("no-such-post").send().await;
    server
        .portfolio_with_key(Some(keys::CONTEXT_READER))
        .get_llm_context()
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));

    let summary = summary_when(&server, |s| {
        count(s, "/api/projects", 200) == 2
            && count(s, "/api/posts/{slug}", 404) == 1
            && count(s, "/api/llm-context", 200) == 1
    })
    .await;
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
    let today = chrono::Utc::now().date_naive();
    assert!(
        summary
            .requests
            .iter()
            .all(|r| r.day == today && r.max_ms >= r.average_ms)
    );
    // No client address is kept anywhere.
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

async fn page_views_are_counted(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.portfolio();
    for path in [
        "/posts/why-contract-first",
        "/posts/why-contract-first",
        "/",
    ] {
        let view = types::PageView {
            path: path.parse().unwrap_or_else(|e| panic!("{e}")),
        };
        let answer = client
            .record_page_view()
            .body(view)
            .send()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(answer.status().as_u16(), 202);
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

    let (status, _, body) = send_json(
        reqwest::Client::new()
            .post(server.at("/api/analytics/pageview"))
            .header("content-type", "application/json")
            .body(json!({"path": "no-slash"}).to_string()),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    assert_envelope(&body, "VALIDATION_FAILED");
    server.stop().await;
}

async fn the_summary_needs_its_scope_and_a_sane_range(db: Db) {
    let server = TestServer::start(db).await;
    let (status, error) = api_error(server.portfolio().get_analytics_summary().send().await);
    assert_eq!((status, error.code.as_str()), (401, "UNAUTHORIZED"));
    let (status, error) = api_error(
        server
            .portfolio_with_key(Some(keys::CONTEXT_READER))
            .get_analytics_summary()
            .send()
            .await,
    );
    assert_eq!((status, error.code.as_str()), (403, "FORBIDDEN"));
    assert_eq!(
        error.details.get("required_scope"),
        Some(&json!("analytics:read"))
    );

    let http = reqwest::Client::new();
    for query in [
        "from=2026-02-01&to=2026-01-01",
        "from=2020-01-01&to=2026-01-01",
        "from=yesterday",
        "to=2026-13-01",
    ] {
        let (status, _, body) = send_json(
            http.get(server.at(&format!("/api/analytics/summary?{query}")))
                .header("x-api-key", keys::ADMIN),
        )
        .await;
        assert_eq!(status, 400, "{query}: {body}");
        assert_envelope(&body, "BAD_REQUEST");
    }
    server.stop().await;
}

async fn a_graceful_stop_writes_what_is_not_written_yet(db: Db) {
    // A flush interval far longer than the test: only the stop can write.
    let server =
        TestServer::start_with(db, |c| c.portfolio.analytics_flush_interval_ms = 3_600_000).await;
    let client = server.portfolio();
    for _ in 0..3 {
        let view = types::PageView {
            path: "/stop".parse().unwrap_or_else(|e| panic!("{e}")),
        };
        client
            .record_page_view()
            .body(view)
            .send()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
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
