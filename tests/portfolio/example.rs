//! The portfolio example program works against a real server.

use end_to_end_tests::{Db, TestServer, inside_a_fresh_minute, keys};
use petstore_portfolio_server::config::Scope;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_portfolio_tour_runs() {
    let server = TestServer::start(Db::Sqlite).await;
    let mut out = Vec::new();
    petstore_portfolio_examples::portfolio_tour(&server.url, keys::ADMIN, &mut out)
        .await
        .expect("the tour runs");
    let text = String::from_utf8_lossy(&out);
    for step in [
        "site: Ada Example",
        "project petstore-portfolio",
        "newsletter:",
        "contact form sent",
    ] {
        assert!(
            text.contains(step),
            "the tour did not report {step:?}:\n{text}"
        );
    }
    assert_eq!(server.count("contact_submissions").await, 1);
    assert_eq!(server.count("subscribers").await, 1);
    server.stop().await;
}

/// The server-to-server example makes 150 calls against a limit of 100 a
/// minute: the SDK waits out each 429 as `Retry-After` says, and the caller
/// sees no error. (It waits up to a minute: the window's end.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_to_server_example_waits_out_the_limit() {
    let server = TestServer::start_with(Db::Sqlite, |c| {
        c.portfolio.rate_limit.per_key_per_minute = 100;
    })
    .await;
    let (id, secret) = server.oauth_client(&[Scope::SubscribersRead]).await;
    // All the calls of the first window fall inside one minute.
    inside_a_fresh_minute().await;
    let started = std::time::Instant::now();
    let mut out = Vec::new();
    petstore_portfolio_examples::server_to_server(&server.url, &id, &secret, 150, &mut out)
        .await
        .expect("every call succeeds: the SDK waits out the limit");
    let text = String::from_utf8_lossy(&out);
    assert_eq!(text.lines().count(), 150, "{text}");
    assert!(text.contains("call 150: 0 subscribers"), "{text}");
    // The 101st call could only be answered in the next window.
    assert!(started.elapsed() >= std::time::Duration::from_secs(1));
    server.stop().await;
}
