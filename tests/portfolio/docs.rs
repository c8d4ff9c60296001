//! The served portfolio document.

use end_to_end_tests::{Db, TestServer};

#[tokio::test]
async fn the_served_document_is_the_hand_written_one() {
    let server = TestServer::start(Db::Sqlite).await;
    let response = reqwest::get(server.at("/openapi/portfolio.json"))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(response.status().as_u16(), 200);
    let served: serde_json::Value = response.json().await.unwrap_or_else(|e| panic!("{e}"));
    let written =
        petstore_portfolio_server::docs::yaml_to_json(include_str!("../../openapi/portfolio.yaml"))
            .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(served, written);
    assert_eq!(served["info"]["version"], "2.0");
    insta::assert_json_snapshot!("served_portfolio_document", served);
    let initializer = reqwest::get(server.at("/docs/swagger-initializer.js"))
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .text()
        .await
        .unwrap_or_default();
    assert!(
        initializer.contains("/openapi/portfolio.json"),
        "Swagger UI offers both documents"
    );
    server.stop().await;
}
