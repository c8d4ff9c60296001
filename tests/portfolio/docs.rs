//! The served portfolio document.

use end_to_end_tests::{Db, TestServer, http, send, send_json};

#[tokio::test]
async fn the_served_document_is_the_hand_written_one() {
    let server = TestServer::start(Db::Sqlite).await;
    let (status, _, served) = send_json(http().get(server.at("/openapi/portfolio.json"))).await;
    assert_eq!(status, 200);
    let written =
        petstore_portfolio_server::docs::yaml_to_json(include_str!("../../openapi/portfolio.yaml"))
            .expect("the YAML document parses");
    assert_eq!(served, written);
    assert_eq!(served["info"]["version"], "2.1");
    server.stop().await;
}

#[tokio::test]
async fn swagger_ui_offers_the_portfolio_document() {
    let server = TestServer::start(Db::Sqlite).await;
    let (_, _, initializer) = send(http().get(server.at("/docs/swagger-initializer.js"))).await;
    assert!(
        initializer.contains("/openapi/portfolio.json"),
        "Swagger UI offers both documents"
    );
    server.stop().await;
}
