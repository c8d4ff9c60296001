//! The served document and Swagger UI.

use end_to_end_tests::{Db, TestServer};

use crate::support::{http, send};

#[tokio::test]
async fn the_served_document_is_the_hand_written_one() {
    let server = TestServer::start(Db::Sqlite).await;
    let (status, content_type, text) = send(http().get(server.at("/openapi/petstore.json"))).await;
    assert_eq!(status, 200);
    assert!(
        content_type.starts_with("application/json"),
        "{content_type}"
    );
    let served: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
    let written: serde_json::Value =
        serde_norway_free_parse(include_str!("../../openapi/petstore.yaml"));
    assert_eq!(served, written, "the document is served as written");
    assert_eq!(served["openapi"], "3.0.3");
    assert_eq!(served["info"]["version"], "1.0.27");
    insta::assert_json_snapshot!("served_petstore_document", served);
    server.stop().await;
}

/// The YAML parsed the way the server parses it.
fn serde_norway_free_parse(yaml: &str) -> serde_json::Value {
    petstore_portfolio_server::docs::yaml_to_json(yaml).unwrap_or_else(|e| panic!("{e}"))
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
