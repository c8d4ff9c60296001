//! uploadFile (octet-stream and multipart) and the image read-back.

use end_to_end_tests::{Db, TINY_PNG, TestServer, header, http, on_every_database, send};
use futures::TryStreamExt as _;
use petstore_portfolio_client::petstore::{Client, Error, ResponseValue, types};
use reqwest::multipart::{Form, Part};

use crate::support::{add_named_pet, api_error, assert_api_error, assert_refused, get_pet};

on_every_database!(
    an_uploaded_image_is_added_to_the_photo_urls,
    an_uploaded_image_reads_back_the_same,
    an_image_url_serves_the_image,
    an_image_is_served_whatever_the_accept_header,
    a_missing_image_is_404,
    an_image_is_found_only_under_its_own_pet,
    deleting_a_pet_deletes_its_images,
    a_multipart_upload_keeps_its_metadata,
    a_multipart_upload_answers_in_xml_when_asked,
    uploads_that_are_not_images_are_415_and_store_nothing,
    uploads_without_a_file_are_400_and_store_nothing,
    oversized_uploads_are_413_and_store_nothing,
    overlong_upload_metadata_is_422_and_stores_nothing,
    uploading_for_a_missing_pet_is_404,
);

async fn photo_urls(client: &Client, id: u64) -> Vec<String> {
    get_pet(client, id).await.photo_urls
}

/// Uploads `bytes` for pet `id` through the SDK (as an octet stream).
async fn upload(
    client: &Client,
    id: u64,
    bytes: Vec<u8>,
) -> Result<ResponseValue<types::ApiResponse>, Error> {
    client.upload_file().pet_id(id).body(bytes).send().await
}

/// Uploads [`TINY_PNG`] for pet `id`; returns the image's URL (its
/// `Location`) and the answer.
async fn upload_image(client: &Client, id: u64) -> (String, types::ApiResponse) {
    let uploaded = upload(client, id, TINY_PNG.to_vec())
        .await
        .expect("uploadFile");
    let location = header(uploaded.headers(), "location").expect("a Location header");
    (location.to_owned(), uploaded.into_inner())
}

/// Adds a pet with an uploaded image; returns the pet's id and the image's URL.
async fn pet_with_an_image(client: &Client) -> (u64, String) {
    let id = add_named_pet(client, "Rex", &[]).await;
    let (location, _) = upload_image(client, id).await;
    (id, location)
}

/// "http://host/v2/pet/1/images/7" -> (1, 7)
fn image_ids(url: &str) -> (u64, u64) {
    let parts: Vec<&str> = url.rsplit('/').collect();
    match (
        parts.get(2).and_then(|p| p.parse().ok()),
        parts.first().and_then(|p| p.parse().ok()),
    ) {
        (Some(pet), Some(image)) => (pet, image),
        _ => panic!("not an image URL: {url}"),
    }
}

async fn an_uploaded_image_is_added_to_the_photo_urls(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    let id = add_named_pet(&client, "Rex", &[]).await;
    let (location, body) = upload_image(&client, id).await;
    assert_eq!(body.code, Some(200));
    assert!(body.message.unwrap_or_default().contains(&location));

    let urls = photo_urls(&client, id).await;
    assert_eq!(
        urls.last(),
        Some(&location),
        "the image's URL is appended to photoUrls"
    );
    assert!(location.starts_with(&server.url));
    server.stop().await;
}

async fn an_uploaded_image_reads_back_the_same(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    let (_, location) = pet_with_an_image(&client).await;
    let (pet_id, image_id) = image_ids(&location);
    let image = client
        .get_pet_image()
        .pet_id(pet_id)
        .image_id(image_id)
        .send()
        .await
        .expect("getPetImage");
    assert_eq!(header(image.headers(), "content-type"), Some("image/png"));
    let chunks: Vec<bytes::Bytes> = image
        .into_inner()
        .into_inner()
        .try_collect()
        .await
        .expect("the image's bytes");
    assert_eq!(chunks.concat(), TINY_PNG, "the same bytes come back");
    server.stop().await;
}

/// The URL itself serves the image, as photoUrls promise.
async fn an_image_url_serves_the_image(db: Db) {
    let server = TestServer::start(db).await;
    let (_, location) = pet_with_an_image(&server.petstore()).await;
    let (status, content_type, _) = send(http().get(&location)).await;
    assert_eq!((status, content_type.as_str()), (200, "image/png"));
    server.stop().await;
}

/// The image has one form, served whatever `Accept` says (RFC 9110 lets a
/// server disregard it): generated clients ask for `application/json`.
async fn an_image_is_served_whatever_the_accept_header(db: Db) {
    let server = TestServer::start(db).await;
    let (_, location) = pet_with_an_image(&server.petstore()).await;
    for accept in ["image/jpeg", "application/json", "text/html;q=0.5"] {
        let (status, content_type, _) = send(http().get(&location).header("accept", accept)).await;
        assert_eq!(
            (status, content_type.as_str()),
            (200, "image/png"),
            "{accept}"
        );
    }
    server.stop().await;
}

async fn a_missing_image_is_404(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    let (_, location) = pet_with_an_image(&client).await;
    let (pet_id, image_id) = image_ids(&location);
    assert_api_error(
        client
            .get_pet_image()
            .pet_id(pet_id)
            .image_id(image_id + 1)
            .send()
            .await,
        404,
        "NOT_FOUND",
    );
    server.stop().await;
}

async fn an_image_is_found_only_under_its_own_pet(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    let (_, location) = pet_with_an_image(&client).await;
    let (pet_id, image_id) = image_ids(&location);
    let (status, _) = api_error(
        client
            .get_pet_image()
            .pet_id(pet_id + 1)
            .image_id(image_id)
            .send()
            .await,
    );
    assert_eq!(status, 404, "an image is found only under its own pet");
    server.stop().await;
}

async fn deleting_a_pet_deletes_its_images(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    let (id, location) = pet_with_an_image(&client).await;
    client
        .delete_pet()
        .pet_id(id)
        .send()
        .await
        .expect("deletePet");
    let (status, _, _) = send(http().get(&location)).await;
    assert_eq!(status, 404);
    server.stop().await;
}

fn upload_url(server: &TestServer, id: u64) -> String {
    server.at(&format!("/v2/pet/{id}/uploadImage"))
}

async fn a_multipart_upload_keeps_its_metadata(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    let id = add_named_pet(&client, "Rex", &[]).await;
    let form = Form::new()
        .text("additionalMetadata", "front view")
        .part("file", Part::bytes(TINY_PNG.to_vec()).file_name("rex.png"));
    let (status, content_type, text) =
        send(http().post(upload_url(&server, id)).multipart(form)).await;
    assert_eq!(status, 200, "{text}");
    assert!(content_type.starts_with("application/json"));
    assert!(text.contains("front view"), "{text}");
    assert_eq!(photo_urls(&client, id).await.len(), 2);
    server.stop().await;
}

async fn a_multipart_upload_answers_in_xml_when_asked(db: Db) {
    let server = TestServer::start(db).await;
    let id = add_named_pet(&server.petstore(), "Rex", &[]).await;
    let form = Form::new().part("file", Part::bytes(TINY_PNG.to_vec()));
    let (status, content_type, text) = send(
        http()
            .post(format!(
                "{}?additionalMetadata=side",
                upload_url(&server, id)
            ))
            .header("accept", "application/xml")
            .multipart(form),
    )
    .await;
    assert_eq!(status, 200, "{text}");
    assert_eq!(content_type, "application/xml");
    assert!(
        text.contains("<apiResponse><code>200</code>") && text.contains("side"),
        "{text}"
    );
    server.stop().await;
}

/// A server that takes uploads of at most 4096 bytes, with a pet; returns
/// them and the pet's id.
async fn start_with_a_pet(db: Db) -> (TestServer, u64) {
    let server = TestServer::start_with(db, |c| c.petstore.max_upload_bytes = 4096).await;
    let id = add_named_pet(&server.petstore(), "Rex", &[]).await;
    (server, id)
}

/// The refused uploads stored nothing: the pet has its one photo URL.
async fn assert_no_image_stored(server: &TestServer, id: u64) {
    assert_eq!(
        photo_urls(&server.petstore(), id).await,
        ["https://example.test/a.png"],
        "nothing was stored"
    );
    assert_eq!(server.count("pet_images").await, 0);
}

async fn uploads_that_are_not_images_are_415_and_store_nothing(db: Db) {
    let (server, id) = start_with_a_pet(db).await;
    // Not an image.
    assert_api_error(
        upload(&server.petstore(), id, b"just some text".to_vec()).await,
        415,
        "UNSUPPORTED_MEDIA_TYPE",
    );
    let json = http()
        .post(upload_url(&server, id))
        .header("content-type", "application/json")
        .body("{}");
    assert_refused(json, 415, "UNSUPPORTED_MEDIA_TYPE").await;
    assert_no_image_stored(&server, id).await;
    server.stop().await;
}

async fn uploads_without_a_file_are_400_and_store_nothing(db: Db) {
    let (server, id) = start_with_a_pet(db).await;
    assert_api_error(
        upload(&server.petstore(), id, Vec::<u8>::new()).await,
        400,
        "BAD_REQUEST",
    );
    let no_boundary = http()
        .post(upload_url(&server, id))
        .header("content-type", "multipart/form-data")
        .body("x");
    let no_file = http()
        .post(upload_url(&server, id))
        .multipart(Form::new().text("additionalMetadata", "no file"));
    for request in [no_boundary, no_file] {
        assert_refused(request, 400, "BAD_REQUEST").await;
    }
    assert_no_image_stored(&server, id).await;
    server.stop().await;
}

async fn oversized_uploads_are_413_and_store_nothing(db: Db) {
    let (server, id) = start_with_a_pet(db).await;
    let mut too_large = TINY_PNG.to_vec();
    too_large.resize(5000, 0);
    assert_api_error(
        upload(&server.petstore(), id, too_large.clone()).await,
        413,
        "PAYLOAD_TOO_LARGE",
    );
    let form = Form::new().part("file", Part::bytes(too_large));
    let multipart = http().post(upload_url(&server, id)).multipart(form);
    assert_refused(multipart, 413, "PAYLOAD_TOO_LARGE").await;
    assert_no_image_stored(&server, id).await;
    server.stop().await;
}

async fn overlong_upload_metadata_is_422_and_stores_nothing(db: Db) {
    let (server, id) = start_with_a_pet(db).await;
    let request = http()
        .post(format!(
            "{}?additionalMetadata={}",
            upload_url(&server, id),
            "m".repeat(1025)
        ))
        .header("content-type", "application/octet-stream")
        .body(TINY_PNG.to_vec());
    assert_refused(request, 422, "VALIDATION_FAILED").await;
    assert_no_image_stored(&server, id).await;
    server.stop().await;
}

async fn uploading_for_a_missing_pet_is_404(db: Db) {
    let (server, id) = start_with_a_pet(db).await;
    assert_api_error(
        upload(&server.petstore(), id + 50, TINY_PNG.to_vec()).await,
        404,
        "NOT_FOUND",
    );
    assert_no_image_stored(&server, id).await;
    server.stop().await;
}
