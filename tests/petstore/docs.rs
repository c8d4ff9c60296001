//! The served document and Swagger UI.

use end_to_end_tests::{Db, TestServer, http, send};

#[tokio::test]
async fn the_served_document_is_the_hand_written_one() {
    let server = TestServer::start(Db::Sqlite).await;
    let (status, content_type, text) = send(http().get(server.at("/openapi/petstore.json"))).await;
    assert_eq!(status, 200);
    assert!(
        content_type.starts_with("application/json"),
        "{content_type}"
    );
    let served: serde_json::Value = serde_json::from_str(&text).expect("the document is JSON");
    // The YAML parsed the way the server parses it.
    let written =
        petstore_portfolio_server::docs::yaml_to_json(include_str!("../../openapi/petstore.yaml"))
            .expect("the YAML document parses");
    assert_eq!(served, written, "the document is served as written");
    assert_eq!(served["openapi"], "3.0.3");
    assert_eq!(served["info"]["version"], "1.0.27");
    server.stop().await;
}

#[tokio::test]
async fn swagger_ui_offers_the_pet_store_document() {
    let server = TestServer::start(Db::Sqlite).await;
    let (status, content_type, text) = send(http().get(server.at("/docs/"))).await;
    assert_eq!(status, 200);
    assert!(content_type.starts_with("text/html"), "{content_type}");
    assert!(text.contains("swagger-ui"), "{text}");
    let (status, _, initializer) =
        send(http().get(server.at("/docs/swagger-initializer.js"))).await;
    assert_eq!(status, 200);
    assert!(
        initializer.contains("/openapi/petstore.json"),
        "{initializer}"
    );
    server.stop().await;
}
