//! HTTPS: the server with a certificate made in the test, the SDK trusting
//! it (or not).

use end_to_end_tests::{Db, TestServer, header};
use petstore_portfolio_client::petstore;

/// A server on HTTPS with a self-signed certificate for 127.0.0.1; its
/// certificate (PEM) for clients to trust. The folder holds the files.
async fn start_on_https() -> (TestServer, String, tempfile::TempDir) {
    let folder = tempfile::tempdir().expect("a folder");
    let certified =
        rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).expect("a certificate");
    let (cert, key) = (
        folder.path().join("cert.pem"),
        folder.path().join("key.pem"),
    );
    std::fs::write(&cert, certified.cert.pem()).expect("cert.pem");
    std::fs::write(&key, certified.signing_key.serialize_pem()).expect("key.pem");
    let server = TestServer::start_with(Db::Sqlite, move |c| {
        c.tls_cert = Some(cert);
        c.tls_key = Some(key);
    })
    .await;
    (server, certified.cert.pem(), folder)
}

#[tokio::test]
async fn the_sdk_speaks_https_to_a_server_it_trusts() {
    let (server, certificate, _folder) = start_on_https().await;
    assert!(server.url.starts_with("https://"), "{}", server.url);
    let client = petstore::ClientBuilder::new(&server.url)
        .add_root_certificate(certificate)
        .build()
        .expect("a client");
    let inventory = client.get_inventory().send().await.expect("getInventory");
    assert_eq!(inventory.len(), 3);
    server.stop().await;
}

#[tokio::test]
async fn https_answers_negotiate_http2_and_carry_hsts() {
    let (server, certificate, _folder) = start_on_https().await;
    let _ = end_to_end_tests::http();
    let client = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(certificate.as_bytes()).unwrap())
        .build()
        .unwrap();
    let answer = client
        .get(server.at("/api/health"))
        .send()
        .await
        .expect("GET /api/health");
    assert_eq!(answer.version(), reqwest::Version::HTTP_2, "ALPN chose h2");
    assert_eq!(
        header(answer.headers(), "strict-transport-security"),
        Some("max-age=31536000")
    );
    server.stop().await;
}

#[tokio::test]
async fn an_untrusted_certificate_is_refused_and_the_error_says_why() {
    let (server, _, _folder) = start_on_https().await;
    let client = petstore::ClientBuilder::new(&server.url)
        .build()
        .expect("a client");
    let error = client.get_inventory().send().await.expect_err("refused");
    let explained = format!("{error:#}");
    assert!(
        explained.to_lowercase().contains("certificate"),
        "the error names the certificate: {explained}"
    );
    server.stop().await;
}
