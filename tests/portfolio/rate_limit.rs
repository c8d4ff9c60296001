//! Rate limits: headers on every answer, 429 with Retry-After over the limit.

use end_to_end_tests::{Db, TestServer, header, http, inside_a_fresh_minute, keys};

use crate::support::assert_refused;

/// A server that lets an address make 2 requests a minute without a key,
/// and a key 3. The window slides, so where the test starts in a minute
/// does not matter; it starts well inside one all the same, for the tests
/// written when windows were calendar minutes.
async fn start_with_small_limits() -> TestServer {
    let server = TestServer::start_with(Db::Sqlite, |c| {
        c.portfolio.rate_limit.per_key_per_minute = 3;
        c.portfolio.rate_limit.anonymous_per_minute = 2;
    })
    .await;
    inside_a_fresh_minute().await;
    server
}

async fn get(server: &TestServer, path: &str) -> reqwest::Response {
    http()
        .get(server.at(path))
        .send()
        .await
        .unwrap_or_else(|e| panic!("GET {path}: {e}"))
}

/// Uses up the anonymous budget of 2.
async fn exhaust_the_anonymous_budget(server: &TestServer) {
    for _ in 0..2 {
        get(server, "/api/site-info").await;
    }
}

/// Errors carry the headers too.
#[tokio::test]
async fn every_answer_carries_the_rate_limit_headers() {
    let server = start_with_small_limits().await;
    let first = get(&server, "/api/posts/no-such-post").await;
    let headers = first.headers();
    assert_eq!(first.status().as_u16(), 404);
    assert_eq!(header(headers, "x-ratelimit-limit"), Some("2"));
    assert_eq!(header(headers, "x-ratelimit-remaining"), Some("1"));
    assert!(
        header(headers, "x-ratelimit-reset")
            .and_then(|v| v.parse::<i64>().ok())
            .is_some()
    );
    assert_eq!(
        header(headers, "ratelimit-policy"),
        Some("\"default\";q=2;w=60")
    );
    assert!(header(headers, "ratelimit").is_some_and(|v| v.starts_with("\"default\";r=1;t=")));

    let second = get(&server, "/api/site-info").await;
    assert_eq!(header(second.headers(), "x-ratelimit-remaining"), Some("0"));
    server.stop().await;
}

#[tokio::test]
async fn over_the_limit_is_429_with_retry_after() {
    let server = start_with_small_limits().await;
    exhaust_the_anonymous_budget(&server).await;
    let over = get(&server, "/api/site-info").await;
    assert_eq!(over.status().as_u16(), 429);
    let retry_after = header(over.headers(), "retry-after")
        .and_then(|v| v.parse::<i64>().ok())
        .unwrap_or_default();
    assert!((1..=61).contains(&retry_after), "{retry_after}");
    assert_eq!(header(over.headers(), "x-ratelimit-remaining"), Some("0"));
    assert_refused(http().get(server.at("/api/projects")), 429, "RATE_LIMITED").await;
    server.stop().await;
}

/// Over the anonymous limit, a key still has its own, larger budget.
#[tokio::test]
async fn a_key_has_a_budget_of_its_own() {
    let server = start_with_small_limits().await;
    exhaust_the_anonymous_budget(&server).await;
    let with_key = || {
        http()
            .get(server.at("/api/llm-context"))
            .header("x-api-key", keys::ADMIN)
    };
    for expected in ["2", "1", "0"] {
        let response = with_key().send().await.expect("GET /api/llm-context");
        assert_eq!(response.status().as_u16(), 200);
        assert_eq!(header(response.headers(), "x-ratelimit-limit"), Some("3"));
        assert_eq!(
            header(response.headers(), "x-ratelimit-remaining"),
            Some(expected)
        );
    }
    assert_refused(with_key(), 429, "RATE_LIMITED").await;
    server.stop().await;
}

/// The pet store is not limited by the portfolio's limits.
#[tokio::test]
async fn the_pet_store_is_not_rate_limited() {
    let server = start_with_small_limits().await;
    exhaust_the_anonymous_budget(&server).await;
    let pets = get(&server, "/v2/store/inventory").await;
    assert_eq!(pets.status().as_u16(), 200);
    assert!(header(pets.headers(), "x-ratelimit-limit").is_none());
    server.stop().await;
}

/// Behind a trusted proxy (here the test's own loopback address), each
/// client the proxy forwards has a budget of its own; what a client writes at
/// the start of `X-Forwarded-For` itself counts for nothing.
#[tokio::test]
async fn behind_a_trusted_proxy_each_forwarded_client_counts_apart() {
    let server = TestServer::start_with(Db::Sqlite, |c| {
        c.portfolio.rate_limit.anonymous_per_minute = 2;
        c.http.trusted_proxies = vec!["127.0.0.0/8".to_owned()];
    })
    .await;
    inside_a_fresh_minute().await;
    let from = async |forwarded: &str| {
        http()
            .get(server.at("/api/site-info"))
            .header("X-Forwarded-For", forwarded)
            .send()
            .await
            .unwrap()
            .status()
            .as_u16()
    };
    assert_eq!(from("203.0.113.7").await, 200);
    assert_eq!(from("203.0.113.7").await, 200);
    assert_eq!(from("203.0.113.7").await, 429);
    // A claim to be another client, before the address the proxy saw.
    assert_eq!(from("198.51.100.9, 203.0.113.7").await, 429);
    assert_eq!(from("203.0.113.8").await, 200);
    server.stop().await;
}

/// With no trusted proxy (the default), `X-Forwarded-For` is the client's
/// own word and changes nothing: its address's budget is spent.
#[tokio::test]
async fn without_a_trusted_proxy_the_forwarded_header_is_ignored() {
    let server = start_with_small_limits().await;
    for client in ["203.0.113.1", "203.0.113.2"] {
        let answer = http()
            .get(server.at("/api/site-info"))
            .header("X-Forwarded-For", client)
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status().as_u16(), 200);
    }
    let third = http()
        .get(server.at("/api/site-info"))
        .header("X-Forwarded-For", "203.0.113.3")
        .send()
        .await
        .unwrap();
    assert_eq!(third.status().as_u16(), 429);
    server.stop().await;
}

/// Health checks count, but are never refused: a load balancer's checks
/// over the limit would otherwise take the server out of service.
#[tokio::test]
async fn health_checks_are_never_refused() {
    let server = start_with_small_limits().await;
    for path in ["/api/health/ready", "/api/health", "/api/health/ready"] {
        let answer = get(&server, path).await;
        assert_eq!(answer.status().as_u16(), 200, "{path}");
        assert!(header(answer.headers(), "x-ratelimit-remaining").is_some());
    }
    assert_eq!(get(&server, "/api/site-info").await.status().as_u16(), 429);
    server.stop().await;
}

end_to_end_tests::on_every_database!(
    a_burst_across_a_minute_boundary_passes_no_more_than_the_limit
);

/// A burst that crosses a calendar minute's boundary: with fixed windows
/// the limit came twice within two seconds (5 before, 5 after); with the
/// sliding window the limit holds across it. Waits for second 58 of a
/// minute (at most a minute), then sends 10 calls over about three seconds.
async fn a_burst_across_a_minute_boundary_passes_no_more_than_the_limit(db: Db) {
    let server = TestServer::start_with(db, |c| {
        c.portfolio.rate_limit.per_key_per_minute = 5;
    })
    .await;
    let now = chrono::Utc::now();
    let second = chrono::Timelike::second(&now);
    let to_58 = (58 + 60 - i64::from(second)) % 60;
    let wait_ms = to_58 * 1000 - i64::from(chrono::Timelike::nanosecond(&now) / 1_000_000);
    tokio::time::sleep(std::time::Duration::from_millis(
        u64::try_from(wait_ms.rem_euclid(60_000)).unwrap(),
    ))
    .await;
    let mut statuses = Vec::new();
    for _ in 0..10 {
        let answer = http()
            .get(server.at("/api/llm-context"))
            .header("x-api-key", keys::ADMIN)
            .send()
            .await
            .unwrap();
        statuses.push(answer.status().as_u16());
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    }
    assert_eq!(
        statuses.iter().filter(|s| **s == 200).count(),
        5,
        "{statuses:?}"
    );
    assert_eq!(
        statuses.iter().filter(|s| **s == 429).count(),
        5,
        "{statuses:?}"
    );
    server.stop().await;
}
