//! The `pet` group: pets, their categories and tags, and the finders; the
//! XML and form shapes of a pet. Image upload and read-back live in
//! `pet_image.rs`.

use std::collections::BTreeSet;

use axum::extract::State;
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse as _, Response};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::http::error::Error;
use crate::http::extract::{Path, Query, keep_empty};
use crate::http::idempotency::Idempotent;
use crate::http::next_page::link_next;
use crate::petstore::api::auth::{Authorized, Pets, PetsOrKey};
use crate::petstore::model::{Category, Pet, PetStatus, Tag, check_pet_name};
use crate::petstore::ops;
use crate::petstore::reads::{self, pet_lists};
use crate::petstore::state::PetstoreState;
use crate::petstore::wire::pet_xml::PetXml;
use crate::petstore::wire::{
    ALL_FORMATS, Body, BodyFormat, Format, OptionalBody, Reply, WireBody, bytes_response,
    parse_form, parse_xml, positive_id,
};

// ---- form shapes -----------------------------------------------------------

/// A pet as an HTML form: `photoUrls` and `tags` (tag names) may repeat;
/// `category` is the category's name. `photoUrls` is required, as in a pet in
/// JSON or XML; `photoUrls=` (one empty value) sends none.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PetForm {
    #[schema(minimum = 0, maximum = 9007199254740991_i64)]
    id: Option<i64>,
    #[schema(min_length = 1, max_length = 255)]
    name: String,
    #[schema(max_length = 255)]
    category: Option<String>,
    photo_urls: Vec<String>,
    #[serde(default)]
    tags: Vec<String>,
    status: Option<PetStatus>,
}

impl From<PetForm> for Pet {
    fn from(form: PetForm) -> Self {
        Pet {
            id: form.id,
            name: form.name,
            category: form.category.map(|name| Category {
                id: None,
                name: Some(name),
            }),
            // A form cannot send an empty list: `photoUrls=` stands for one.
            photo_urls: form
                .photo_urls
                .into_iter()
                .filter(|url| !url.is_empty())
                .collect(),
            tags: form
                .tags
                .into_iter()
                .map(|name| Tag {
                    id: None,
                    name: Some(name),
                })
                .collect(),
            status: form.status,
        }
    }
}

impl WireBody for Pet {
    const FORMATS: &'static [BodyFormat] = ALL_FORMATS;

    fn from_xml(text: &str) -> Result<Self, Error> {
        parse_xml::<PetXml, Pet>(text)
    }

    fn from_form(bytes: &[u8]) -> Result<Self, Error> {
        parse_form::<PetForm, Pet>(bytes)
    }

    fn validate(&self) -> Result<(), Error> {
        Ok(self.check_rules()?)
    }
}

fn not_found(id: i64) -> Error {
    Error::not_found(format!("pet {id} not found"))
}

// ---- handlers ------------------------------------------------------------

/// Add a new pet to the store.
#[utoipa::path(
    post, path = "/pet",
    tag = "pet",
    params(crate::http::idempotency::IdempotencyKeyHeader),
    request_body(content = Pet, description = "Create a new pet in the store"),
    responses(
        (status = 200, description = "Successful operation", body = Pet),
    ),
    security(("petstore_auth" = ["write:pets", "read:pets"])),
)]
pub(crate) async fn add_pet(
    State(state): State<PetstoreState>,
    _auth: Authorized<Pets>,
    format: Format,
    Idempotent(Body(pet)): Idempotent<Body<Pet>>,
) -> Result<Reply<Pet>, Error> {
    let pet = ops::pets::add(state.ops(), pet).await?;
    Ok(Reply::new(format, pet))
}

/// Update an existing pet.
#[utoipa::path(
    put, path = "/pet",
    tag = "pet",
    request_body(content = Pet, description = "Update an existent pet in the store"),
    responses(
        (status = 200, description = "Successful operation", body = Pet),
        (status = 404, description = "Pet not found"),
    ),
    security(("petstore_auth" = ["write:pets", "read:pets"])),
)]
pub(crate) async fn update_pet(
    State(state): State<PetstoreState>,
    _auth: Authorized<Pets>,
    format: Format,
    Body(pet): Body<Pet>,
) -> Result<Reply<Pet>, Error> {
    let pet = ops::pets::replace(state.ops(), pet).await?;
    Ok(Reply::new(format, pet))
}

/// The query of findPetsByStatus: `status` repeated or comma-joined.
#[derive(Debug, Deserialize)]
pub(crate) struct StatusQuery {
    #[serde(default)]
    status: Vec<String>,
}

/// The query of findPetsByTags: `tags` repeated or comma-joined; required,
/// but `tags=` is there (an empty tag, which no pet has).
#[derive(Debug, Deserialize)]
pub(crate) struct TagsQuery {
    #[serde(default, deserialize_with = "keep_empty")]
    tags: Option<Vec<String>>,
}

/// The page a finder is asked for (`params(PageQuery)`); neither given asks
/// for the whole list.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct PageQuery {
    /// The most pets on a page
    #[param(value_type = Option<u32>, minimum = 1, maximum = 1000)]
    limit: Option<String>,
    /// Where the page begins
    #[param(pattern = r"^[0-9]{0,18}$")]
    cursor: Option<String>,
}

/// The page `limit` and `cursor` ask for; `None` for the whole list (neither
/// is given). A cursor alone asks for a page of the default size.
fn page_request(page: &PageQuery) -> Result<Option<pet_lists::PageRequest>, Error> {
    let (limit, cursor) = (page.limit.as_deref(), page.cursor.as_deref());
    if limit.is_none() && cursor.is_none() {
        return Ok(None);
    }
    let limit = match limit {
        None => pet_lists::DEFAULT_PAGE,
        Some(text) => text
            .trim()
            .parse::<usize>()
            .ok()
            .filter(|limit| (1..=pet_lists::LARGEST_PAGE).contains(limit))
            .ok_or_else(|| {
                Error::bad_request(format!(
                    "limit must be a whole number from 1 to {}, not {text:?}",
                    pet_lists::LARGEST_PAGE
                ))
            })?,
    };
    let after = match cursor {
        // `cursor=` asks for the first page.
        None | Some("") => None,
        Some(token) => Some(pet_lists::Cursor::parse(token).ok_or_else(|| {
            Error::bad_request(
                "cursor is not a cursor: send back the one in the Link header's \
                 rel=\"next\" of the page before, or cursor= for the first page",
            )
        })?),
    };
    Ok(Some(pet_lists::PageRequest { after, limit }))
}

/// A page answered: its pets, and where the next page is (`Link` with
/// `rel="next"`, this request's own path and query with the next page's
/// cursor) unless it is the last.
fn page_response(format: Format, uri: &Uri, page: pet_lists::Page) -> Response {
    let next = page.next.map(|next| next.token());
    link_next(bytes_response(format, page.body), uri, next.as_deref())
}

/// Splits repeated and comma-joined values into one list.
fn split_values(values: &[String]) -> impl Iterator<Item = &str> {
    values.iter().flat_map(|v| v.split(',')).map(str::trim)
}

/// Finds Pets by status.
#[utoipa::path(
    get, path = "/pet/findByStatus",
    tag = "pet",
    params(
        ("status" = Option<Vec<PetStatus>>, Query, style = Form, explode,
            description = "Status values that need to be considered for filter"),
        PageQuery,
    ),
    responses(
        (status = 200, description = "successful operation", body = Vec<Pet>,
            headers(("Link" = String, description = "Where the next page is"))),
        (status = 400, description = "Invalid status value"),
    ),
    security(("petstore_auth" = ["write:pets", "read:pets"])),
)]
pub(crate) async fn find_pets_by_status(
    State(state): State<PetstoreState>,
    _auth: Authorized<Pets>,
    format: Format,
    uri: Uri,
    Query(query): Query<StatusQuery>,
    Query(page): Query<PageQuery>,
) -> Result<Response, Error> {
    let page = page_request(&page)?;
    let mut statuses = BTreeSet::new();
    for value in split_values(&query.status) {
        let status = PetStatus::parse(value).ok_or_else(|| {
            Error::bad_request(format!(
                "unknown status {value:?}; use available, pending or sold"
            ))
        })?;
        statuses.insert(status);
    }
    if statuses.is_empty() {
        statuses.insert(PetStatus::Available);
    }
    Ok(match page {
        Some(request) => page_response(
            format,
            &uri,
            pet_lists::page_by_statuses(state.reads(), &statuses, request, format).await?,
        ),
        None => pet_lists::by_statuses(state.reads(), statuses, format)
            .await?
            .into_response(format),
    })
}

/// Finds Pets by tags.
#[utoipa::path(
    get, path = "/pet/findByTags",
    tag = "pet",
    params(
        ("tags" = Vec<String>, Query, style = Form, explode, description = "Tags to filter by"),
        PageQuery,
    ),
    responses(
        (status = 200, description = "successful operation", body = Vec<Pet>,
            headers(("Link" = String, description = "Where the next page is"))),
        (status = 400, description = "Invalid tag value"),
    ),
    security(("petstore_auth" = ["write:pets", "read:pets"])),
)]
pub(crate) async fn find_pets_by_tags(
    State(state): State<PetstoreState>,
    _auth: Authorized<Pets>,
    format: Format,
    uri: Uri,
    Query(query): Query<TagsQuery>,
    Query(page): Query<PageQuery>,
) -> Result<Response, Error> {
    let page = page_request(&page)?;
    let Some(tags) = query.tags else {
        return Err(Error::bad_request("the query parameter tags is required"));
    };
    let names: BTreeSet<&str> = split_values(&tags).collect();
    if names.is_empty() {
        return Ok(Reply::new(format, Vec::<Pet>::new()).into_response());
    }
    Ok(match page {
        Some(request) => page_response(
            format,
            &uri,
            pet_lists::page_by_tags(state.reads(), &names, request, format).await?,
        ),
        None => pet_lists::by_tags(state.reads(), &names, format)
            .await?
            .into_response(format),
    })
}

/// Find pet by ID.
#[utoipa::path(
    get, path = "/pet/{petId}",
    tag = "pet",
    params(("petId" = i64, Path, minimum = 1, description = "ID of pet to return")),
    responses(
        (status = 200, description = "successful operation", body = Pet),
        (status = 400, description = "Invalid ID supplied"),
    ),
    security(("api_key" = []), ("petstore_auth" = ["write:pets", "read:pets"])),
)]
pub(crate) async fn get_pet_by_id(
    State(state): State<PetstoreState>,
    _auth: Authorized<PetsOrKey>,
    format: Format,
    Path(pet_id): Path<i64>,
) -> Result<Response, Error> {
    let id = positive_id("petId", pet_id)?;
    // From memory when the pet did not change since it was read.
    let body = reads::pets::pet(state.reads(), id, format)
        .await?
        .ok_or_else(|| not_found(id))?;
    Ok(bytes_response(format, body))
}

/// Query (and form body) of updatePetWithForm. `name=` is an empty name
/// and `status=` no status at all: both refused, not read as missing.
#[derive(Debug, Default, Serialize, Deserialize, ToSchema)]
pub(crate) struct PetUpdateForm {
    #[schema(min_length = 1, max_length = 255)]
    #[serde(default, deserialize_with = "keep_empty")]
    name: Option<String>,
    #[serde(default, deserialize_with = "keep_empty")]
    status: Option<PetStatus>,
}

impl WireBody for PetUpdateForm {
    const FORMATS: &'static [BodyFormat] = &[BodyFormat::Form];
}

/// Updates a pet in the store with form data.
#[utoipa::path(
    post, path = "/pet/{petId}",
    tag = "pet",
    params(
        ("petId" = i64, Path, minimum = 1, description = "ID of pet that needs to be updated"),
        ("name" = Option<String>, Query, min_length = 1, max_length = 255,
            description = "Name of pet that needs to be updated"),
        ("status" = Option<PetStatus>, Query, description = "Status of pet that needs to be updated"),
    ),
    request_body(content((Option<PetUpdateForm> = "application/x-www-form-urlencoded"))),
    responses(
        (status = 200, description = "successful operation", body = Pet),
    ),
    security(("petstore_auth" = ["write:pets", "read:pets"])),
)]
pub(crate) async fn update_pet_with_form(
    State(state): State<PetstoreState>,
    _auth: Authorized<Pets>,
    format: Format,
    Path(pet_id): Path<i64>,
    Query(query): Query<PetUpdateForm>,
    OptionalBody(form): OptionalBody<PetUpdateForm>,
) -> Result<Reply<Pet>, Error> {
    let id = positive_id("petId", pet_id)?;
    let form = form.unwrap_or_default();
    // Both are checked; the body wins where both give a field.
    if let Some(name) = &query.name {
        check_pet_name("name", name)?;
    }
    let name = form.name.or(query.name);
    let status = form.status.or(query.status);
    let pet = ops::pets::update_name_or_status(state.ops(), id, name, status).await?;
    Ok(Reply::new(format, pet))
}

/// Deletes a pet.
#[utoipa::path(
    delete, path = "/pet/{petId}",
    tag = "pet",
    params(
        ("api_key" = Option<String>, Header,
            description = "Accepted for compatibility with the official document."),
        ("petId" = i64, Path, minimum = 1, description = "Pet id to delete"),
    ),
    responses(
        (status = 200, description = "Pet deleted"),
        (status = 400, description = "Invalid pet value"),
    ),
    security(("petstore_auth" = ["write:pets", "read:pets"])),
)]
pub(crate) async fn delete_pet(
    State(state): State<PetstoreState>,
    _auth: Authorized<Pets>,
    _format: Format,
    Path(pet_id): Path<i64>,
) -> Result<StatusCode, Error> {
    let id = positive_id("petId", pet_id)?;
    ops::pets::delete(state.ops(), id).await?;
    Ok(StatusCode::OK)
}
