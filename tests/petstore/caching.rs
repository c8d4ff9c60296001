//! Caching and browser headers follow access: an answer that needed a
//! credential is `private` (no CDN in front hands a pet's image to someone
//! without one), every answer says `nosniff`, and Swagger UI cannot be
//! framed by another site.

use end_to_end_tests::{Db, TINY_PNG, TestServer, header, http, on_every_database, send};
use petstore_portfolio_server::config::AuthMode;
use serde_json::json;

on_every_database!(
    an_image_that_needs_a_credential_is_private,
    in_open_mode_an_image_stays_public_and_immutable,
    every_answer_says_nosniff_and_the_docs_cannot_be_framed,
);

/// Adds a pet with an image; the image's URL. In `enforce` mode (`key`
/// given) as a user, with Basic, and the pet is read with the key.
async fn pet_with_image(server: &TestServer, key: Option<&str>) -> String {
    let as_user = |request: reqwest::RequestBuilder| match key {
        Some(_) => request.basic_auth("keeper", Some("pw-keeper-1")),
        None => request,
    };
    if key.is_some() {
        let user = json!({"username": "keeper", "password": "pw-keeper-1"});
        assert_eq!(send(server.post_json("/v2/user", user)).await.0, 200);
    }
    let add = server.post_json("/v2/pet", json!({"name": "Rex", "photoUrls": []}));
    let (status, _, pet) = send(as_user(add)).await;
    assert_eq!(status, 200, "{pet}");
    let id = serde_json::from_str::<serde_json::Value>(&pet).unwrap()["id"].clone();
    let upload = http()
        .post(server.at(&format!("/v2/pet/{id}/uploadImage")))
        .header("content-type", "application/octet-stream")
        .body(TINY_PNG.to_vec());
    let (status, _, body) = send(as_user(upload)).await;
    assert_eq!(status, 200, "{body}");
    let mut read = http().get(server.at(&format!("/v2/pet/{id}")));
    if let Some(key) = key {
        read = read.header("api_key", key);
    }
    let (_, _, pet) = send(read).await;
    let pet: serde_json::Value = serde_json::from_str(&pet).unwrap();
    pet["photoUrls"][0].as_str().unwrap().to_owned()
}

async fn an_image_that_needs_a_credential_is_private(db: Db) {
    let server = TestServer::start_with(db, |c| c.petstore.auth_mode = AuthMode::Enforce).await;
    let key = server.petstore_key().await;
    let url = pet_with_image(&server, Some(&key)).await;
    let response = http()
        .get(&url)
        .header("api_key", &key)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(
        header(response.headers(), "cache-control"),
        Some("private, max-age=31536000, immutable")
    );
    let refused = http().get(&url).send().await.unwrap();
    assert_eq!(refused.status().as_u16(), 401);
    server.stop().await;
}

async fn in_open_mode_an_image_stays_public_and_immutable(db: Db) {
    let server = TestServer::start(db).await;
    let url = pet_with_image(&server, None).await;
    let response = http().get(&url).send().await.unwrap();
    assert_eq!(
        header(response.headers(), "cache-control"),
        Some("public, max-age=31536000, immutable")
    );
    server.stop().await;
}

async fn every_answer_says_nosniff_and_the_docs_cannot_be_framed(db: Db) {
    let server = TestServer::start(db).await;
    for path in [
        "/v2/pet/1",
        "/v2/pet/findByStatus",
        "/api/site-info",
        "/api/nothing-here",
        "/docs/",
        "/openapi/petstore.json",
        "/oauth/authorize?client_id=x",
    ] {
        let response = http().get(server.at(path)).send().await.unwrap();
        assert_eq!(
            header(response.headers(), "x-content-type-options"),
            Some("nosniff"),
            "{path}"
        );
    }
    let docs = http().get(server.at("/docs/")).send().await.unwrap();
    assert_eq!(docs.status().as_u16(), 200);
    assert_eq!(
        header(docs.headers(), "content-security-policy"),
        Some("frame-ancestors 'none'")
    );
    assert_eq!(header(docs.headers(), "x-frame-options"), Some("DENY"));
    server.stop().await;
}
