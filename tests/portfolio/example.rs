//! The portfolio example program works against a real server.

use end_to_end_tests::{Db, TestServer, keys};

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
