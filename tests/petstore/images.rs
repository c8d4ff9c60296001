//! uploadFile (octet-stream and multipart) and the image read-back.

use end_to_end_tests::{Db, TINY_PNG, TestServer, on_every_database};
use futures::TryStreamExt as _;
use petstore_portfolio_client::petstore::Client;

use crate::support::{api_error, assert_error, http, json_error, pet, send};

on_every_database!(
    upload_raw_image_then_read_it_back,
    upload_multipart_image_with_metadata,
    bad_uploads_are_refused_and_change_nothing,
);

async fn add_pet(client: &Client) -> u64 {
    let added = client
        .add_pet()
        .body(pet("Rex", &[]))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    added.id.unwrap_or_default() as u64
}

async fn photo_urls(client: &Client, id: u64) -> Vec<String> {
    let fetched = client
        .get_pet_by_id()
        .pet_id(id)
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    fetched.into_inner().photo_urls
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

async fn upload_raw_image_then_read_it_back(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    let id = add_pet(&client).await;

    let uploaded = client
        .upload_file()
        .pet_id(id)
        .body(TINY_PNG.to_vec())
        .send()
        .await;
    let uploaded = uploaded.unwrap_or_else(|e| panic!("uploadFile: {e}"));
    let location = uploaded
        .headers()
        .get("location")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .unwrap_or_else(|| panic!("no Location header"));
    let body = uploaded.into_inner();
    assert_eq!(body.code, Some(200));
    assert!(body.message.unwrap_or_default().contains(&location));

    let urls = photo_urls(&client, id).await;
    assert_eq!(
        urls.last(),
        Some(&location),
        "the image's URL is appended to photoUrls"
    );
    assert!(location.starts_with(&server.url));

    let (pet_id, image_id) = image_ids(&location);
    let image = client
        .get_pet_image()
        .pet_id(pet_id)
        .image_id(image_id)
        .send()
        .await;
    let image = image.unwrap_or_else(|e| panic!("getPetImage: {e}"));
    assert_eq!(
        image
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some("image/png")
    );
    let chunks: Vec<bytes::Bytes> = image
        .into_inner()
        .into_inner()
        .try_collect()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(chunks.concat(), TINY_PNG, "the same bytes come back");

    // The URL itself serves the image, as photoUrls promise.
    let (status, content_type, _) = send(http().get(&location)).await;
    assert_eq!((status, content_type.as_str()), (200, "image/png"));
    let (status, content_type, text) =
        send(http().get(&location).header("accept", "image/jpeg")).await;
    assert_eq!(status, 406);
    json_error(status, &content_type, &text, "NOT_ACCEPTABLE");

    let (status, body) = api_error(
        client
            .get_pet_image()
            .pet_id(pet_id)
            .image_id(image_id + 1)
            .send()
            .await,
    );
    assert_eq!(status, 404);
    assert_error(&body, 404, "NOT_FOUND");
    let (status, _) = api_error(
        client
            .get_pet_image()
            .pet_id(pet_id + 1)
            .image_id(image_id)
            .send()
            .await,
    );
    assert_eq!(status, 404, "an image is found only under its own pet");

    // Deleting the pet deletes its images.
    client
        .delete_pet()
        .pet_id(id)
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let (status, _, _) = send(http().get(&location)).await;
    assert_eq!(status, 404);
    server.stop().await;
}

async fn upload_multipart_image_with_metadata(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    let id = add_pet(&client).await;
    let form = reqwest::multipart::Form::new()
        .text("additionalMetadata", "front view")
        .part(
            "file",
            reqwest::multipart::Part::bytes(TINY_PNG.to_vec()).file_name("rex.png"),
        );
    let (status, content_type, text) = send(
        http()
            .post(server.at(&format!("/v2/pet/{id}/uploadImage")))
            .multipart(form),
    )
    .await;
    assert_eq!(status, 200, "{text}");
    assert!(content_type.starts_with("application/json"));
    assert!(text.contains("front view"), "{text}");
    assert_eq!(photo_urls(&client, id).await.len(), 2);

    // XML answer when asked for.
    let form = reqwest::multipart::Form::new()
        .part("file", reqwest::multipart::Part::bytes(TINY_PNG.to_vec()));
    let (status, content_type, text) = send(
        http()
            .post(server.at(&format!("/v2/pet/{id}/uploadImage?additionalMetadata=side")))
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

async fn bad_uploads_are_refused_and_change_nothing(db: Db) {
    let server = TestServer::start_with(db, |c| c.petstore.max_upload_bytes = 4096).await;
    let client = server.petstore();
    let id = add_pet(&client).await;
    let before = photo_urls(&client, id).await;

    let (status, body) = api_error(
        client
            .upload_file()
            .pet_id(id)
            .body(b"just some text".to_vec())
            .send()
            .await,
    );
    assert_eq!(status, 415, "not an image");
    assert_error(&body, 415, "UNSUPPORTED_MEDIA_TYPE");

    let mut too_large = TINY_PNG.to_vec();
    too_large.resize(5000, 0);
    let (status, body) = api_error(
        client
            .upload_file()
            .pet_id(id)
            .body(too_large.clone())
            .send()
            .await,
    );
    assert_eq!(status, 413);
    assert_error(&body, 413, "PAYLOAD_TOO_LARGE");
    let form =
        reqwest::multipart::Form::new().part("file", reqwest::multipart::Part::bytes(too_large));
    let (status, content_type, text) = send(
        http()
            .post(server.at(&format!("/v2/pet/{id}/uploadImage")))
            .multipart(form),
    )
    .await;
    assert_eq!(status, 413, "{text}");
    json_error(status, &content_type, &text, "PAYLOAD_TOO_LARGE");

    let (status, body) = api_error(
        client
            .upload_file()
            .pet_id(id)
            .body(Vec::<u8>::new())
            .send()
            .await,
    );
    assert_eq!(status, 400, "no file");
    assert_error(&body, 400, "BAD_REQUEST");

    let (status, body) = api_error(
        client
            .upload_file()
            .pet_id(id + 50)
            .body(TINY_PNG.to_vec())
            .send()
            .await,
    );
    assert_eq!(status, 404);
    assert_error(&body, 404, "NOT_FOUND");

    let upload_url = server.at(&format!("/v2/pet/{id}/uploadImage"));
    for (request, expected, kind) in [
        (
            http()
                .post(&upload_url)
                .header("content-type", "application/json")
                .body("{}"),
            415,
            "UNSUPPORTED_MEDIA_TYPE",
        ),
        (
            http()
                .post(&upload_url)
                .header("content-type", "multipart/form-data")
                .body("x"),
            400,
            "BAD_REQUEST",
        ),
        (
            http()
                .post(&upload_url)
                .multipart(reqwest::multipart::Form::new().text("additionalMetadata", "no file")),
            400,
            "BAD_REQUEST",
        ),
        (
            http()
                .post(format!(
                    "{upload_url}?additionalMetadata={}",
                    "m".repeat(1025)
                ))
                .header("content-type", "application/octet-stream")
                .body(TINY_PNG.to_vec()),
            422,
            "VALIDATION_FAILED",
        ),
    ] {
        let (status, content_type, text) = send(request).await;
        assert_eq!(status, expected, "{text}");
        json_error(status, &content_type, &text, kind);
    }
    assert_eq!(photo_urls(&client, id).await, before, "nothing was stored");
    assert_eq!(server.count("pet_images").await, 0);
    server.stop().await;
}
