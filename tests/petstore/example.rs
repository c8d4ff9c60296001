//! The example program works against a real server.

use end_to_end_tests::{Db, TestServer};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_petstore_tour_runs() {
    let server = TestServer::start_with(Db::Sqlite, |c| c.petstore.demo_data = true).await;
    let mut out = Vec::new();
    petstore_portfolio_examples::petstore_tour(&server.url, &mut out)
        .await
        .expect("the tour runs");
    let text = String::from_utf8_lossy(&out);
    for step in [
        "added pet",
        "found it",
        "uploaded",
        "placed order",
        "inventory",
    ] {
        assert!(
            text.contains(step),
            "the tour did not report {step:?}:\n{text}"
        );
    }
    server.stop().await;
}
