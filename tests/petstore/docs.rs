//! The served documents, their client profiles, and Swagger UI.

use end_to_end_tests::{Db, TestServer, http, send};
use xtask::codegen;

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

#[tokio::test]
async fn each_document_is_served_with_its_client_profile() {
    let server = TestServer::start(Db::Sqlite).await;
    for (document, profile, written) in [
        (
            "/openapi/petstore.json",
            "/openapi/petstore.client.json",
            include_str!("../../openapi/profiles/petstore.client.json"),
        ),
        (
            "/openapi/portfolio.json",
            "/openapi/portfolio.client.json",
            include_str!("../../openapi/profiles/portfolio.client.json"),
        ),
    ] {
        let (status, content_type, served) = send(http().get(server.at(profile))).await;
        assert_eq!(status, 200, "{profile}");
        assert!(
            content_type.starts_with("application/json"),
            "{content_type}"
        );
        assert!(served == written, "{profile} is served as checked in");
        // ... and it is the profile of the document served beside it.
        let (_, _, document_text) = send(http().get(server.at(document))).await;
        let parsed = codegen::parse_document(&document_text, document).expect("the document");
        let expected = codegen::client_profile(&parsed)
            .and_then(|p| codegen::profile_text(&p))
            .expect("the document's client profile");
        assert!(
            served == expected,
            "{profile} is not the client profile of {document}: run `cargo xtask codegen`"
        );
    }
    server.stop().await;
}

#[tokio::test]
async fn swagger_ui_links_the_documents_and_their_client_profiles() {
    let server = TestServer::start(Db::Sqlite).await;
    for page in ["/docs/", "/docs/index.html"] {
        let (status, content_type, html) = send(http().get(server.at(page))).await;
        assert_eq!(status, 200, "{page}");
        assert!(content_type.starts_with("text/html"), "{content_type}");
        for link in [
            "/openapi/petstore.json",
            "/openapi/portfolio.json",
            "/openapi/petstore.client.json",
            "/openapi/portfolio.client.json",
        ] {
            assert!(html.contains(&format!("href=\"{link}\"")), "{page}: {html}");
        }
        assert!(
            html.contains(r#"<div id="swagger-ui"></div>"#),
            "Swagger UI is still there: {html}"
        );
    }
    server.stop().await;
}
