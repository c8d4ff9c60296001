//! The pet store's general limit per client address: off by default (as
//! upstream); when on, its headers on every answer, errors included, and
//! 429 (`ApiResponse`, `Retry-After`) past it.

use end_to_end_tests::{Db, TestServer, header, http, inside_a_fresh_minute};

#[tokio::test]
async fn there_is_no_limit_unless_the_operator_sets_one() {
    let server = TestServer::start(Db::Sqlite).await;
    for _ in 0..20 {
        let response = http().get(server.at("/v2/pet/1")).send().await.unwrap();
        assert_eq!(response.status().as_u16(), 404);
        assert!(header(response.headers(), "x-ratelimit-limit").is_none());
    }
    server.stop().await;
}

#[tokio::test]
async fn a_limit_counts_every_answer_and_refuses_past_it() {
    let server =
        TestServer::start_with(Db::Sqlite, |c| c.petstore.requests_per_minute = Some(3)).await;
    inside_a_fresh_minute().await;
    for (remaining, path) in [
        ("2", "/v2/pet/1"),
        ("1", "/v2/store/inventory"),
        ("0", "/v2/nowhere"),
    ] {
        let response = http().get(server.at(path)).send().await.unwrap();
        let headers = response.headers();
        assert_eq!(header(headers, "x-ratelimit-limit"), Some("3"), "{path}");
        assert_eq!(
            header(headers, "x-ratelimit-remaining"),
            Some(remaining),
            "{path}"
        );
        assert_eq!(
            header(headers, "ratelimit-policy"),
            Some("\"default\";q=3;w=60")
        );
    }
    let response = http()
        .get(server.at("/v2/pet/1"))
        .header("accept", "application/xml")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 429);
    let headers = response.headers().clone();
    let retry_after: u64 = header(&headers, "retry-after").unwrap().parse().unwrap();
    assert!((1..=61).contains(&retry_after));
    assert_eq!(header(&headers, "x-ratelimit-remaining"), Some("0"));
    let body = response.text().await.unwrap();
    assert!(body.contains("<type>RATE_LIMITED</type>"), "{body}");
    // The portfolio counts on its own.
    let response = http()
        .get(server.at("/api/site-info"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    server.stop().await;
}
