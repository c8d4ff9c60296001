//! Rate limits: headers on every answer, 429 with Retry-After over the limit.

use end_to_end_tests::{Db, TestServer, keys};

use crate::support::{assert_envelope, send_json};

#[tokio::test]
async fn limits_per_key_and_per_address_with_headers_on_every_answer() {
    let server = TestServer::start_with(Db::Sqlite, |c| {
        c.portfolio.rate_limit.per_key_per_minute = 3;
        c.portfolio.rate_limit.anonymous_per_minute = 2;
    })
    .await;
    // Windows are whole UTC minutes: start well inside one, so that the counts
    // below cannot straddle two (waits at most a few seconds).
    while chrono::Utc::now().timestamp().rem_euclid(60) > 50 {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    let http = reqwest::Client::new();
    let header = |response: &reqwest::Response, name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };

    // Anonymous: two, then 429 - errors carry the headers too.
    let first = http
        .get(server.at("/api/posts/no-such-post"))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(first.status().as_u16(), 404);
    assert_eq!(header(&first, "x-ratelimit-limit").as_deref(), Some("2"));
    assert_eq!(
        header(&first, "x-ratelimit-remaining").as_deref(),
        Some("1")
    );
    assert!(
        header(&first, "x-ratelimit-reset")
            .and_then(|v| v.parse::<i64>().ok())
            .is_some()
    );
    assert_eq!(
        header(&first, "ratelimit-policy").as_deref(),
        Some("\"default\";q=2;w=60")
    );
    assert!(header(&first, "ratelimit").is_some_and(|v| v.starts_with("\"default\";r=1;t=")));
    let second = http
        .get(server.at("/api/site-info"))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        header(&second, "x-ratelimit-remaining").as_deref(),
        Some("0")
    );

    let over = http
        .get(server.at("/api/site-info"))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(over.status().as_u16(), 429);
    let retry_after = header(&over, "retry-after")
        .and_then(|v| v.parse::<i64>().ok())
        .unwrap_or_default();
    assert!((1..=60).contains(&retry_after), "{retry_after}");
    assert_eq!(header(&over, "x-ratelimit-remaining").as_deref(), Some("0"));
    let (status, _, body) = send_json(http.get(server.at("/api/projects"))).await;
    assert_eq!(status, 429);
    assert_envelope(&body, "RATE_LIMITED");

    // A key has its own, larger budget.
    for expected in ["2", "1", "0"] {
        let response = http
            .get(server.at("/api/llm-context"))
            .header("x-api-key", keys::ADMIN)
            .send()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(response.status().as_u16(), 200);
        assert_eq!(header(&response, "x-ratelimit-limit").as_deref(), Some("3"));
        assert_eq!(
            header(&response, "x-ratelimit-remaining").as_deref(),
            Some(expected)
        );
    }
    let (status, _, body) = send_json(
        http.get(server.at("/api/llm-context"))
            .header("x-api-key", keys::ADMIN),
    )
    .await;
    assert_eq!(status, 429);
    assert_envelope(&body, "RATE_LIMITED");
    // The pet store is not limited by the portfolio's limits.
    let pets = http
        .get(server.at("/v2/store/inventory"))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(pets.status().as_u16(), 200);
    assert!(header(&pets, "x-ratelimit-limit").is_none());
    server.stop().await;
}
