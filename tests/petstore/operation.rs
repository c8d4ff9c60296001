//! The HTTP plumbing around the pet store: request ids, compression, CORS,
//! and settings that are refused.

use end_to_end_tests::{Db, TestServer, header, http};

/// A server with the sample pets; the answer to a cross-origin request for
/// all of them that accepts gzip.
async fn a_cross_origin_request() -> (TestServer, reqwest::Response) {
    let server = TestServer::start_with(Db::Sqlite, |c| c.petstore.demo_data = true).await;
    let response = http()
        .get(server.at("/v2/pet/findByStatus?status=available,pending,sold"))
        .header("accept-encoding", "gzip")
        .header("origin", "https://example.test")
        .send()
        .await
        .expect("findByStatus");
    (server, response)
}

#[tokio::test]
async fn every_response_has_a_request_id() {
    let (server, response) = a_cross_origin_request().await;
    assert!(
        header(response.headers(), "x-request-id").is_some_and(|id| id.len() >= 32),
        "{:?}",
        response.headers()
    );
    server.stop().await;
}

#[tokio::test]
async fn responses_are_compressed_when_the_client_accepts_it() {
    let (server, response) = a_cross_origin_request().await;
    assert_eq!(header(response.headers(), "content-encoding"), Some("gzip"));
    server.stop().await;
}

#[tokio::test]
async fn any_origin_may_call_the_pet_store() {
    let (server, response) = a_cross_origin_request().await;
    assert_eq!(
        header(response.headers(), "access-control-allow-origin"),
        Some("*")
    );
    server.stop().await;
}

#[tokio::test]
async fn a_clients_own_request_id_is_kept() {
    let server = TestServer::start(Db::Sqlite).await;
    let response = http()
        .get(server.at("/v2/pet/404"))
        .header("x-request-id", "trace-me-42")
        .send()
        .await
        .expect("GET /v2/pet/404");
    assert_eq!(
        header(response.headers(), "x-request-id"),
        Some("trace-me-42")
    );
    server.stop().await;
}
