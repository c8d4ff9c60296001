//! Pet images: uploadFile stores an image and appends its URL to the pet's
//! `photoUrls`; getPetImage serves it back from that URL.

use axum::body::Bytes;
use axum::extract::{FromRequest, Multipart, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use utoipa::ToSchema;

use crate::http::error::Error;
use crate::http::extract::{Path, Query, media_type};
use crate::http::idempotency::Idempotent;
use crate::petstore::api::auth::{Authorized, PetImages, Pets};
use crate::petstore::model::PetImage;
use crate::petstore::ops;
use crate::petstore::reads;
use crate::petstore::state::PetstoreState;
use crate::petstore::wire::{ApiResponse, Format, Reply, positive_id};

/// The image types accepted, as sniffed from the bytes.
const IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// A raw image body.
#[derive(ToSchema)]
#[schema(value_type = String, format = Binary)]
pub(crate) struct ImageBytes(#[allow(dead_code)] Vec<u8>);

/// The multipart form of uploadFile.
#[derive(ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[allow(dead_code)]
pub(crate) struct ImageUploadForm {
    #[schema(value_type = String, format = Binary)]
    file: Vec<u8>,
    #[schema(max_length = 1024)]
    additional_metadata: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct UploadQuery {
    additional_metadata: Option<String>,
}

/// The image and metadata of an upload, from either body form.
struct Upload {
    bytes: Bytes,
    metadata: Option<String>,
}

async fn read_upload(request: Request, state: &PetstoreState) -> Result<Upload, Error> {
    let essence = media_type(request.headers()).map(|m| m.essence_str().to_owned());
    match essence.as_deref() {
        Some("application/octet-stream") => {
            let bytes = Bytes::from_request(request, state).await?;
            Ok(Upload {
                bytes,
                metadata: None,
            })
        }
        Some("multipart/form-data") => {
            let mut multipart = Multipart::from_request(request, state).await.map_err(|e| {
                Error::bad_request(format!("invalid multipart body: {}", e.body_text()))
            })?;
            let mut upload = Upload {
                bytes: Bytes::new(),
                metadata: None,
            };
            let mut saw_file = false;
            while let Some(field) = multipart.next_field().await.map_err(multipart_error)? {
                match field.name() {
                    Some("file") => {
                        upload.bytes = field.bytes().await.map_err(multipart_error)?;
                        saw_file = true;
                    }
                    Some("additionalMetadata") => {
                        upload.metadata = Some(field.text().await.map_err(multipart_error)?);
                    }
                    other => {
                        return Err(Error::bad_request(format!(
                            "unexpected form part {:?}: the form has file and additionalMetadata",
                            other.unwrap_or("")
                        )));
                    }
                }
            }
            if !saw_file {
                return Err(Error::bad_request(
                    "No file uploaded: the form has no part named file",
                ));
            }
            Ok(upload)
        }
        _ => Err(Error::unsupported_media_type(
            "upload the image as application/octet-stream or as multipart/form-data with a file part",
        )),
    }
}

fn multipart_error(err: axum::extract::multipart::MultipartError) -> Error {
    if err.status() == StatusCode::PAYLOAD_TOO_LARGE {
        Error::payload_too_large("the upload is too large")
    } else if crate::http::error::body_timed_out(&err) {
        crate::http::error::body_timeout()
    } else {
        Error::bad_request(format!("invalid multipart body: {}", err.body_text()))
    }
}

/// Uploads an image. Besides the answers of any request with a body: 400
/// without a file, 413 for an image larger than the server accepts, 415 for one
/// not PNG, JPEG, GIF or WebP, 422 for a too long `additionalMetadata`.
#[utoipa::path(
    post, path = "/pet/{petId}/uploadImage",
    tag = "pet",
    params(
        crate::http::idempotency::IdempotencyKeyHeader,
        ("petId" = i64, Path, minimum = 1, description = "ID of pet to update"),
        ("additionalMetadata" = Option<String>, Query, max_length = 1024, description = "Additional Metadata"),
    ),
    request_body(content(
        (inline(ImageBytes) = "application/octet-stream"),
        (ImageUploadForm = "multipart/form-data"),
    )),
    responses(
        (status = 200, description = "successful operation; `message` names the URL of the stored image",
            headers(("Location" = String, description = "URL of the stored image")),
            content((ApiResponse = "application/json"))),
    ),
    security(("petstore_auth" = ["write:pets", "read:pets"])),
)]
pub(crate) async fn upload_file(
    State(state): State<PetstoreState>,
    _auth: Authorized<Pets>,
    format: Format,
    Path(pet_id): Path<i64>,
    Query(query): Query<UploadQuery>,
    Idempotent(request): Idempotent<Request>,
) -> Result<Reply<ApiResponse>, Error> {
    let id = positive_id("petId", pet_id)?;
    let upload = read_upload(request, &state).await?;
    let metadata = upload.metadata.or(query.additional_metadata);
    if metadata.as_ref().is_some_and(|m| m.contains('\0')) {
        return Err(Error::bad_request(crate::http::strict_json::NUL_MESSAGE));
    }
    if upload.bytes.is_empty() {
        return Err(Error::bad_request("No file uploaded: the body is empty"));
    }
    if upload.bytes.len() > state.config.max_upload_bytes {
        return Err(Error::payload_too_large(format!(
            "images may be at most {} bytes",
            state.config.max_upload_bytes
        )));
    }
    let content_type = infer::get(&upload.bytes)
        .map(|kind| kind.mime_type())
        .filter(|mime| IMAGE_TYPES.contains(mime))
        .ok_or_else(|| {
            Error::unsupported_media_type("the upload is not a PNG, JPEG, GIF or WebP image")
        })?;
    let image = PetImage {
        content_type: content_type.to_owned(),
        data: upload.bytes.to_vec(),
    };
    let public_url = &state.public_url;
    let url = ops::pets::add_image(state.ops(), id, &image, metadata.as_deref(), |image_id| {
        format!("{public_url}/v2/pet/{id}/images/{image_id}")
    })
    .await?;

    let location = HeaderValue::from_str(&url).map_err(|e| Error::internal("bad image URL", e))?;
    let mut message = format!(
        "image stored at {url} ({} bytes, {content_type})",
        upload.bytes.len()
    );
    if let Some(metadata) = metadata {
        message.push_str("; additionalMetadata: ");
        message.push_str(&metadata);
    }
    let body = ApiResponse {
        code: Some(200),
        kind: Some("OK".to_owned()),
        message: Some(message),
    };
    Ok(Reply::new(format, body).with_header(header::LOCATION, location))
}

/// Returns an uploaded image.
#[utoipa::path(
    get, path = "/pet/{petId}/images/{imageId}",
    tag = "pet",
    params(
        ("petId" = i64, Path, minimum = 1, description = "ID of the pet the image belongs to"),
        ("imageId" = i64, Path, minimum = 1, description = "ID of the image"),
    ),
    responses(
        (status = 200, description = "the image", content((inline(ImageBytes) = "image/*"))),
        (status = 400, description = "Invalid ID supplied"),
    ),
    security(("api_key" = []), ("petstore_auth" = ["read:pets"])),
)]
pub(crate) async fn get_pet_image(
    State(state): State<PetstoreState>,
    _auth: Authorized<PetImages>,
    Path((pet_id, image_id)): Path<(i64, i64)>,
) -> Result<Response, Error> {
    let pet_id = positive_id("petId", pet_id)?;
    let image_id = positive_id("imageId", image_id)?;
    let PetImage { content_type, data } = reads::images::image(&state.db, pet_id, image_id)
        .await?
        .ok_or_else(|| Error::not_found(format!("pet {pet_id} has no image {image_id}")))?;
    // The image is served whatever `Accept` says: it has one form, and RFC
    // 9110 (section 12.5.1) lets a server disregard the header rather than
    // answer 406. Generated clients send `Accept: application/json` here.
    Ok((
        [
            (header::CONTENT_TYPE, content_type),
            // Image ids are never reused, so an image never changes.
            (
                header::CACHE_CONTROL,
                "public, max-age=31536000, immutable".to_owned(),
            ),
        ],
        data,
    )
        .into_response())
}
