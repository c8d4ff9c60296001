//! Input no backend can store and requests a hostile client sends: refused
//! in the pet store's format, changing nothing.

use end_to_end_tests::{Db, TINY_PNG, TestServer, http, on_every_database, send};
use reqwest::multipart::{Form, Part};
use serde_json::json;

use crate::support::assert_refused;

on_every_database!(
    a_nul_byte_in_a_path_is_400,
    a_nul_byte_in_a_query_is_400,
    a_nul_byte_in_a_json_body_is_400_and_changes_nothing,
    a_nul_byte_in_an_xml_body_is_400_and_changes_nothing,
    a_nul_byte_in_a_form_body_is_400_and_changes_nothing,
    a_nul_byte_in_upload_metadata_is_400_and_stores_nothing,
    a_pet_form_without_photo_urls_is_400,
    a_pet_form_with_an_empty_photo_url_has_no_photos,
    find_by_an_empty_tag_finds_nothing,
);

async fn a_nul_byte_in_a_path_is_400(db: Db) {
    let server = TestServer::start(db).await;
    for path in ["/v2/user/%00admin", "/v2/user/ad%00min"] {
        assert_refused(http().get(server.at(path)), 400, "BAD_REQUEST").await;
    }
    server.stop().await;
}

async fn a_nul_byte_in_a_query_is_400(db: Db) {
    let server = TestServer::start(db).await;
    for path in [
        "/v2/pet/findByTags?tags=a%00b",
        "/v2/user/login?username=%00&password=secret",
    ] {
        assert_refused(http().get(server.at(path)), 400, "BAD_REQUEST").await;
    }
    server.stop().await;
}

/// Posts a pet in some media type and checks that it is refused with 400 and
/// that no pet was stored.
async fn refused_pet(server: &TestServer, content_type: &str, body: String) {
    let request = http()
        .post(server.at("/v2/pet"))
        .header("content-type", content_type)
        .body(body);
    assert_refused(request, 400, "BAD_REQUEST").await;
    assert_eq!(server.count("pets").await, 0, "nothing is stored");
}

async fn a_nul_byte_in_a_json_body_is_400_and_changes_nothing(db: Db) {
    let server = TestServer::start(db).await;
    let body = json!({"name": "Re\u{0}x", "photoUrls": []}).to_string();
    refused_pet(&server, "application/json", body).await;
    let tag = json!({"name": "Rex", "photoUrls": [], "tags": [{"name": "\u{0}"}]}).to_string();
    refused_pet(&server, "application/json", tag).await;
    server.stop().await;
}

async fn a_nul_byte_in_an_xml_body_is_400_and_changes_nothing(db: Db) {
    let server = TestServer::start(db).await;
    let body = "<pet><name>Re&#0;x</name><photoUrls></photoUrls></pet>".to_owned();
    refused_pet(&server, "application/xml", body).await;
    server.stop().await;
}

async fn a_nul_byte_in_a_form_body_is_400_and_changes_nothing(db: Db) {
    let server = TestServer::start(db).await;
    refused_pet(
        &server,
        "application/x-www-form-urlencoded",
        "name=Re%00x&photoUrls=a".to_owned(),
    )
    .await;
    server.stop().await;
}

async fn a_nul_byte_in_upload_metadata_is_400_and_stores_nothing(db: Db) {
    let server = TestServer::start(db).await;
    let body = json!({"id": 7, "name": "Rex", "photoUrls": []}).to_string();
    let (status, _, text) = send(
        http()
            .post(server.at("/v2/pet"))
            .header("content-type", "application/json")
            .body(body),
    )
    .await;
    assert_eq!(status, 200, "{text}");
    let form = Form::new()
        .part("file", Part::bytes(TINY_PNG.to_vec()).file_name("a.png"))
        .text("additionalMetadata", "a\u{0}b");
    assert_refused(
        http()
            .post(server.at("/v2/pet/7/uploadImage"))
            .multipart(form),
        400,
        "BAD_REQUEST",
    )
    .await;
    assert_eq!(server.count("pet_images").await, 0);
    server.stop().await;
}

async fn a_pet_form_without_photo_urls_is_400(db: Db) {
    let server = TestServer::start(db).await;
    refused_pet(
        &server,
        "application/x-www-form-urlencoded",
        "name=Rex&status=available".to_owned(),
    )
    .await;
    server.stop().await;
}

async fn a_pet_form_with_an_empty_photo_url_has_no_photos(db: Db) {
    let server = TestServer::start(db).await;
    let (status, _, text) = send(
        http()
            .post(server.at("/v2/pet"))
            .header("content-type", "application/x-www-form-urlencoded")
            .body("name=Rex&photoUrls="),
    )
    .await;
    assert_eq!(status, 200, "{text}");
    let pet: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(pet["photoUrls"], json!([]), "{text}");
    server.stop().await;
}

async fn find_by_an_empty_tag_finds_nothing(db: Db) {
    let server = TestServer::start(db).await;
    let (status, _, text) = send(http().get(server.at("/v2/pet/findByTags?tags="))).await;
    assert_eq!((status, text.as_str()), (200, "[]"));
    server.stop().await;
}
