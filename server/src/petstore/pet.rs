//! The `pet` group: pets, their categories and tags, and the finders.
//! Image upload and read-back live in `pet_image.rs`.

use std::collections::BTreeSet;

use axum::extract::State;
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use sqlx::{AnyConnection, FromRow};
use utoipa::ToSchema;

use super::PetstoreState;
use super::wire::{
    ApiError, Body, BodyFormat, Format, PathParams, Reply, ToXml, WireBody, check_client_id,
    parse_form, parse_json, parse_xml, positive_id, query_values, xml_document,
};
use crate::storage::{IdTable, is_unique_violation, placeholders};

/// Longest pet, category and tag name accepted.
const MAX_NAME_CHARS: usize = 255;

/// A pet in the store.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(xml(name = "pet"))]
pub struct Pet {
    /// Assigned by the server when absent or 0. Ids stay within the integers
    /// that JavaScript represents exactly (at most 2^53 - 1).
    #[schema(minimum = 0, maximum = 9007199254740991_i64, nullable = false)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<i64>,
    #[schema(min_length = 1, max_length = 255)]
    pub name: String,
    #[schema(nullable = false)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<Category>,
    #[schema(xml(name = "photoUrl", wrapped))]
    pub photo_urls: Vec<String>,
    #[schema(xml(wrapped))]
    #[serde(default)]
    pub tags: Vec<Tag>,
    #[schema(nullable = false)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<PetStatus>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[schema(xml(name = "category"))]
pub struct Category {
    #[schema(nullable = false)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<i64>,
    #[schema(max_length = 255, nullable = false)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[schema(xml(name = "tag"))]
pub struct Tag {
    #[schema(nullable = false)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<i64>,
    #[schema(max_length = 255, nullable = false)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// pet status in the store
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, ToSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum PetStatus {
    Available,
    Pending,
    Sold,
}

impl PetStatus {
    pub const ALL: [PetStatus; 3] = [PetStatus::Available, PetStatus::Pending, PetStatus::Sold];

    pub fn as_str(self) -> &'static str {
        match self {
            PetStatus::Available => "available",
            PetStatus::Pending => "pending",
            PetStatus::Sold => "sold",
        }
    }

    pub fn parse(value: &str) -> Option<PetStatus> {
        PetStatus::ALL.into_iter().find(|s| s.as_str() == value)
    }
}

impl Pet {
    fn check_rules(&self) -> Result<(), ApiError> {
        check_client_id(self.id)?;
        check_name("name", &self.name)?;
        if let Some(Category {
            name: Some(name), ..
        }) = &self.category
        {
            check_length("category.name", name)?;
        }
        for tag in &self.tags {
            if let Some(name) = &tag.name {
                check_length("tags[].name", name)?;
            }
        }
        Ok(())
    }
}

fn check_name(field: &str, name: &str) -> Result<(), ApiError> {
    if name.is_empty() {
        return Err(ApiError::validation(format!("{field} must not be empty")));
    }
    check_length(field, name)
}

fn check_length(field: &str, value: &str) -> Result<(), ApiError> {
    if value.chars().count() > MAX_NAME_CHARS {
        return Err(ApiError::validation(format!(
            "{field} must be at most {MAX_NAME_CHARS} characters"
        )));
    }
    Ok(())
}

// ---- XML and form shapes -------------------------------------------------

/// The XML shape of a pet: lists are wrapped (`<photoUrls><photoUrl>`).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename = "pet")]
struct PetXml {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    id: Option<i64>,
    name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    category: Option<Category>,
    #[serde(rename = "photoUrls")]
    photo_urls: PhotoUrlsXml,
    #[serde(default)]
    tags: TagsXml,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    status: Option<PetStatus>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct PhotoUrlsXml {
    #[serde(rename = "photoUrl", default)]
    items: Vec<String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct TagsXml {
    #[serde(rename = "tag", default)]
    items: Vec<Tag>,
}

impl From<&Pet> for PetXml {
    fn from(pet: &Pet) -> Self {
        PetXml {
            id: pet.id,
            name: pet.name.clone(),
            category: pet.category.clone(),
            photo_urls: PhotoUrlsXml {
                items: pet.photo_urls.clone(),
            },
            tags: TagsXml {
                items: pet.tags.clone(),
            },
            status: pet.status,
        }
    }
}

impl TryFrom<PetXml> for Pet {
    type Error = ApiError;

    fn try_from(xml: PetXml) -> Result<Self, ApiError> {
        Ok(Pet {
            id: xml.id,
            name: xml.name,
            category: xml.category,
            photo_urls: xml.photo_urls.items,
            tags: xml.tags.items,
            status: xml.status,
        })
    }
}

impl ToXml for Pet {
    fn to_xml(&self) -> Result<String, quick_xml::SeError> {
        xml_document(&PetXml::from(self))
    }
}

/// A list of pets in XML: `<pets><pet>...</pet></pets>`.
#[derive(Debug, Serialize)]
#[serde(rename = "pets")]
struct PetsXml {
    #[serde(rename = "pet")]
    items: Vec<PetXml>,
}

impl ToXml for Vec<Pet> {
    fn to_xml(&self) -> Result<String, quick_xml::SeError> {
        xml_document(&PetsXml {
            items: self.iter().map(PetXml::from).collect(),
        })
    }
}

/// A pet as an HTML form: `photoUrls` and `tags` (tag names) may repeat;
/// `category` is the category's name.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PetForm {
    #[schema(minimum = 0, maximum = 9007199254740991_i64, nullable = false)]
    id: Option<i64>,
    #[schema(min_length = 1, max_length = 255)]
    name: String,
    #[schema(max_length = 255, nullable = false)]
    category: Option<String>,
    #[serde(default)]
    photo_urls: Vec<String>,
    #[serde(default)]
    tags: Vec<String>,
    #[schema(nullable = false)]
    status: Option<PetStatus>,
}

impl TryFrom<PetForm> for Pet {
    type Error = ApiError;

    fn try_from(form: PetForm) -> Result<Self, ApiError> {
        Ok(Pet {
            id: form.id,
            name: form.name,
            category: form.category.map(|name| Category {
                id: None,
                name: Some(name),
            }),
            photo_urls: form.photo_urls,
            tags: form
                .tags
                .into_iter()
                .map(|name| Tag {
                    id: None,
                    name: Some(name),
                })
                .collect(),
            status: form.status,
        })
    }
}

impl WireBody for Pet {
    const FORMATS: &'static [BodyFormat] = &[BodyFormat::Json, BodyFormat::Xml, BodyFormat::Form];

    fn from_json(bytes: &[u8]) -> Result<Self, ApiError> {
        parse_json(bytes)
    }

    fn from_xml(text: &str) -> Result<Self, ApiError> {
        parse_xml::<PetXml, Pet>(text)
    }

    fn from_form(bytes: &[u8]) -> Result<Self, ApiError> {
        parse_form::<PetForm, Pet>(bytes)
    }

    fn validate(&self) -> Result<(), ApiError> {
        self.check_rules()
    }
}

// ---- storage ------------------------------------------------------------

#[derive(Debug, FromRow)]
struct PetRow {
    id: i64,
    name: String,
    category_id: Option<i64>,
    category_name: Option<String>,
    photo_urls: String,
    tags: String,
    status: String,
}

const PET_COLUMNS: &str = "id, name, category_id, category_name, photo_urls, tags, status";

impl TryFrom<PetRow> for Pet {
    type Error = ApiError;

    fn try_from(row: PetRow) -> Result<Self, ApiError> {
        let corrupt =
            |what: &str| ApiError::internal("corrupt pet row", format!("pet {}: {what}", row.id));
        let category = match (row.category_id, row.category_name.clone()) {
            (None, None) => None,
            (id, name) => Some(Category { id, name }),
        };
        Ok(Pet {
            id: Some(row.id),
            name: row.name.clone(),
            category,
            photo_urls: serde_json::from_str(&row.photo_urls).map_err(|_| corrupt("photo_urls"))?,
            tags: serde_json::from_str(&row.tags).map_err(|_| corrupt("tags"))?,
            status: Some(PetStatus::parse(&row.status).ok_or_else(|| corrupt("status"))?),
        })
    }
}

/// Loads one pet.
pub async fn load_pet(conn: &mut AnyConnection, id: i64) -> Result<Option<Pet>, ApiError> {
    let row: Option<PetRow> =
        sqlx::query_as(&format!("SELECT {PET_COLUMNS} FROM pets WHERE id = $1"))
            .bind(id)
            .fetch_optional(conn)
            .await?;
    row.map(Pet::try_from).transpose()
}

/// The status of one pet, if it exists.
pub async fn pet_status(conn: &mut AnyConnection, id: i64) -> Result<Option<PetStatus>, ApiError> {
    let status: Option<String> = sqlx::query_scalar("SELECT status FROM pets WHERE id = $1")
        .bind(id)
        .fetch_optional(conn)
        .await?;
    status
        .map(|s| PetStatus::parse(&s).ok_or_else(|| ApiError::internal("corrupt pet row", s)))
        .transpose()
}

pub async fn set_pet_status(
    conn: &mut AnyConnection,
    id: i64,
    status: PetStatus,
) -> Result<(), ApiError> {
    sqlx::query("UPDATE pets SET status = $1 WHERE id = $2")
        .bind(status.as_str())
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}

fn not_found(id: i64) -> ApiError {
    ApiError::not_found(format!("pet {id} not found"))
}

/// Writes the columns of `pet` into the row `id` (which must exist) and
/// re-indexes its tags.
pub(super) async fn write_pet(
    conn: &mut AnyConnection,
    id: i64,
    pet: &Pet,
) -> Result<(), ApiError> {
    let photo_urls = serde_json::to_string(&pet.photo_urls)
        .map_err(|e| ApiError::internal("cannot encode photo URLs", e))?;
    let tags = serde_json::to_string(&pet.tags)
        .map_err(|e| ApiError::internal("cannot encode tags", e))?;
    sqlx::query(
        "UPDATE pets SET name = $1, category_id = $2, category_name = $3, photo_urls = $4, \
         tags = $5, status = $6 WHERE id = $7",
    )
    .bind(&pet.name)
    .bind(pet.category.as_ref().and_then(|c| c.id))
    .bind(pet.category.as_ref().and_then(|c| c.name.clone()))
    .bind(photo_urls)
    .bind(tags)
    .bind(pet.status.unwrap_or(PetStatus::Available).as_str())
    .bind(id)
    .execute(&mut *conn)
    .await?;
    sqlx::query("DELETE FROM pet_tags WHERE pet_id = $1")
        .bind(id)
        .execute(&mut *conn)
        .await?;
    let names: BTreeSet<&str> = pet.tags.iter().filter_map(|t| t.name.as_deref()).collect();
    for name in names {
        sqlx::query("INSERT INTO pet_tags (pet_id, name) VALUES ($1, $2)")
            .bind(id)
            .bind(name)
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

/// Inserts an empty row for a new pet and returns its id: `requested`
/// (which must be free), or the server's choice.
async fn insert_pet_row(
    state: &PetstoreState,
    conn: &mut AnyConnection,
    requested: Option<i64>,
) -> Result<i64, sqlx::Error> {
    let id = match requested {
        Some(id) => id,
        None => state.db.next_id(conn, IdTable::Pets).await?,
    };
    sqlx::query("INSERT INTO pets (id, name, photo_urls, tags, status) VALUES ($1, '', '[]', '[]', 'available')")
        .bind(id)
        .execute(&mut *conn)
        .await?;
    Ok(id)
}

/// Stores a new pet, or replaces the one with the same id (upstream
/// behaviour that generated clients rely on).
pub async fn save_pet(state: &PetstoreState, mut pet: Pet) -> Result<Pet, ApiError> {
    let mut tx = state.db.begin_write().await?;
    let requested = pet.id.filter(|id| *id > 0);
    let exists = match requested {
        Some(id) => pet_status(tx.conn(), id).await?.is_some(),
        None => false,
    };
    let id = if exists {
        requested.unwrap_or_default()
    } else {
        insert_pet_row(state, tx.conn(), requested)
            .await
            .map_err(|e| {
                if is_unique_violation(&e) {
                    ApiError::conflict("a pet with this id was created at the same time; try again")
                } else {
                    ApiError::from(e)
                }
            })?
    };
    pet.id = Some(id);
    pet.status = Some(pet.status.unwrap_or(PetStatus::Available));
    write_pet(tx.conn(), id, &pet).await?;
    tx.commit().await?;
    Ok(pet)
}

// ---- handlers ------------------------------------------------------------

/// Add a new pet to the store.
#[utoipa::path(
    post,
    path = "/pet",
    operation_id = "addPet",
    tag = "pet",
    request_body(
        description = "Create a new pet in the store",
        content(
            (Pet = "application/json"),
            (Pet = "application/xml"),
            (PetForm = "application/x-www-form-urlencoded"),
        ),
    ),
    responses(
        (status = 200, description = "Successful operation",
            content((Pet = "application/json"), (Pet = "application/xml"))),
        (status = 400, description = "Invalid input"),
        (status = 422, description = "Validation exception"),
    ),
    security(("petstore_auth" = ["write:pets", "read:pets"])),
)]
pub async fn add_pet(
    State(state): State<PetstoreState>,
    format: Format,
    Body(pet): Body<Pet>,
) -> Result<Reply<Pet>, ApiError> {
    let pet = save_pet(&state, pet).await?;
    Ok(Reply::new(format, pet))
}

/// Update an existing pet.
#[utoipa::path(
    put,
    path = "/pet",
    operation_id = "updatePet",
    tag = "pet",
    request_body(
        description = "Update an existent pet in the store",
        content(
            (Pet = "application/json"),
            (Pet = "application/xml"),
            (PetForm = "application/x-www-form-urlencoded"),
        ),
    ),
    responses(
        (status = 200, description = "Successful operation",
            content((Pet = "application/json"), (Pet = "application/xml"))),
        (status = 400, description = "Invalid ID supplied"),
        (status = 404, description = "Pet not found"),
        (status = 422, description = "Validation exception"),
    ),
    security(("petstore_auth" = ["write:pets", "read:pets"])),
)]
pub async fn update_pet(
    State(state): State<PetstoreState>,
    format: Format,
    Body(mut pet): Body<Pet>,
) -> Result<Reply<Pet>, ApiError> {
    let id = match pet.id {
        Some(id) if id > 0 => id,
        _ => {
            return Err(ApiError::not_found(
                "updatePet replaces an existing pet: give its id (no pet has id 0 or none)",
            ));
        }
    };
    let mut tx = state.db.begin_write().await?;
    if pet_status(tx.conn(), id).await?.is_none() {
        return Err(not_found(id));
    }
    pet.status = Some(pet.status.unwrap_or(PetStatus::Available));
    write_pet(tx.conn(), id, &pet).await?;
    tx.commit().await?;
    Ok(Reply::new(format, pet))
}

/// Splits repeated and comma-joined values into one list.
fn split_values(values: &[String]) -> impl Iterator<Item = &str> {
    values.iter().flat_map(|v| v.split(',')).map(str::trim)
}

/// Finds Pets by status.
#[utoipa::path(
    get,
    path = "/pet/findByStatus",
    operation_id = "findPetsByStatus",
    tag = "pet",
    params(
        ("status" = Option<Vec<PetStatus>>, Query, style = Form, explode,
            description = "Status values that need to be considered for filter"),
    ),
    responses(
        (status = 200, description = "successful operation",
            content((Vec<Pet> = "application/json"), (Vec<Pet> = "application/xml"))),
        (status = 400, description = "Invalid status value"),
    ),
    security(("petstore_auth" = ["write:pets", "read:pets"])),
)]
pub async fn find_pets_by_status(
    State(state): State<PetstoreState>,
    format: Format,
    uri: axum::http::Uri,
) -> Result<Reply<Vec<Pet>>, ApiError> {
    let values = query_values(uri.query(), "status").unwrap_or_default();
    let mut statuses = BTreeSet::new();
    for value in split_values(&values) {
        let status = PetStatus::parse(value).ok_or_else(|| {
            ApiError::bad_request(format!(
                "unknown status {value:?}; use available, pending or sold"
            ))
        })?;
        statuses.insert(status);
    }
    if statuses.is_empty() {
        statuses.insert(PetStatus::Available);
    }
    let sql = format!(
        "SELECT {PET_COLUMNS} FROM pets WHERE status IN ({}) ORDER BY id",
        placeholders(statuses.len())
    );
    let mut query = sqlx::query_as::<_, PetRow>(&sql);
    for status in &statuses {
        query = query.bind(status.as_str());
    }
    let rows = query.fetch_all(state.db.pool()).await?;
    let pets = rows
        .into_iter()
        .map(Pet::try_from)
        .collect::<Result<_, _>>()?;
    Ok(Reply::new(format, pets))
}

/// Finds Pets by tags.
#[utoipa::path(
    get,
    path = "/pet/findByTags",
    operation_id = "findPetsByTags",
    tag = "pet",
    params(
        ("tags" = Vec<String>, Query, style = Form, explode, description = "Tags to filter by"),
    ),
    responses(
        (status = 200, description = "successful operation",
            content((Vec<Pet> = "application/json"), (Vec<Pet> = "application/xml"))),
        (status = 400, description = "Invalid tag value"),
    ),
    security(("petstore_auth" = ["write:pets", "read:pets"])),
)]
pub async fn find_pets_by_tags(
    State(state): State<PetstoreState>,
    format: Format,
    uri: axum::http::Uri,
) -> Result<Reply<Vec<Pet>>, ApiError> {
    let Some(tags) = query_values(uri.query(), "tags") else {
        return Err(ApiError::bad_request(
            "the query parameter tags is required",
        ));
    };
    let names: BTreeSet<&str> = split_values(&tags).collect();
    if names.is_empty() {
        return Ok(Reply::new(format, Vec::new()));
    }
    let sql = format!(
        "SELECT {PET_COLUMNS} FROM pets WHERE id IN \
         (SELECT pet_id FROM pet_tags WHERE name IN ({})) ORDER BY id",
        placeholders(names.len())
    );
    let mut query = sqlx::query_as::<_, PetRow>(&sql);
    for name in &names {
        query = query.bind(*name);
    }
    let rows = query.fetch_all(state.db.pool()).await?;
    let pets = rows
        .into_iter()
        .map(Pet::try_from)
        .collect::<Result<_, _>>()?;
    Ok(Reply::new(format, pets))
}

/// Find pet by ID.
#[utoipa::path(
    get,
    path = "/pet/{petId}",
    operation_id = "getPetById",
    tag = "pet",
    params(("petId" = i64, Path, minimum = 1, description = "ID of pet to return")),
    responses(
        (status = 200, description = "successful operation",
            content((Pet = "application/json"), (Pet = "application/xml"))),
        (status = 400, description = "Invalid ID supplied"),
        (status = 404, description = "Pet not found"),
    ),
    security(("api_key" = []), ("petstore_auth" = ["write:pets", "read:pets"])),
)]
pub async fn get_pet_by_id(
    State(state): State<PetstoreState>,
    format: Format,
    PathParams(pet_id): PathParams<i64>,
) -> Result<Reply<Pet>, ApiError> {
    let id = positive_id("petId", pet_id)?;
    let mut conn = state.db.pool().acquire().await?;
    let pet = load_pet(&mut conn, id)
        .await?
        .ok_or_else(|| not_found(id))?;
    Ok(Reply::new(format, pet))
}

/// Query (and form body) of updatePetWithForm.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct PetUpdateForm {
    #[schema(min_length = 1, max_length = 255, nullable = false)]
    name: Option<String>,
    #[schema(nullable = false)]
    status: Option<PetStatus>,
}

/// Updates a pet in the store with form data.
#[utoipa::path(
    post,
    path = "/pet/{petId}",
    operation_id = "updatePetWithForm",
    tag = "pet",
    params(
        ("petId" = i64, Path, minimum = 1, description = "ID of pet that needs to be updated"),
        ("name" = Option<String>, Query, min_length = 1, max_length = 255,
            description = "Name of pet that needs to be updated"),
        ("status" = Option<PetStatus>, Query, description = "Status of pet that needs to be updated"),
    ),
    request_body(content((Option<PetUpdateForm> = "application/x-www-form-urlencoded"))),
    responses(
        (status = 200, description = "successful operation",
            content((Pet = "application/json"), (Pet = "application/xml"))),
        (status = 400, description = "Invalid input"),
        (status = 404, description = "Pet not found"),
        (status = 422, description = "Validation exception"),
    ),
    security(("petstore_auth" = ["write:pets", "read:pets"])),
)]
pub async fn update_pet_with_form(
    State(state): State<PetstoreState>,
    format: Format,
    PathParams(pet_id): PathParams<i64>,
    uri: axum::http::Uri,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Result<Reply<Pet>, ApiError> {
    let id = positive_id("petId", pet_id)?;
    // serde_urlencoded, not serde_html_form: `name=` must read as an empty
    // name (refused), not as no name.
    let query: PetUpdateForm = serde_urlencoded::from_str(uri.query().unwrap_or(""))
        .map_err(|e| ApiError::bad_request(format!("invalid query string: {e}")))?;
    let form = if body.is_empty() {
        PetUpdateForm::default()
    } else {
        let is_form = headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<mime::Mime>().ok())
            .is_some_and(|m| m.essence_str() == "application/x-www-form-urlencoded");
        if !is_form {
            return Err(ApiError::new(
                crate::error::ErrorCode::UnsupportedMediaType,
                "the request body must be application/x-www-form-urlencoded",
            ));
        }
        serde_urlencoded::from_bytes::<PetUpdateForm>(&body)
            .map_err(|e| ApiError::bad_request(format!("invalid form body: {e}")))?
    };
    for name in [&query.name, &form.name].into_iter().flatten() {
        check_name("name", name)?;
    }
    // The body wins where both give a field.
    let name = form.name.or(query.name);
    let status = form.status.or(query.status);
    let mut tx = state.db.begin_write().await?;
    let mut pet = load_pet(tx.conn(), id)
        .await?
        .ok_or_else(|| not_found(id))?;
    if let Some(name) = name {
        pet.name = name;
    }
    if let Some(status) = status {
        pet.status = Some(status);
    }
    write_pet(tx.conn(), id, &pet).await?;
    tx.commit().await?;
    Ok(Reply::new(format, pet))
}

/// Deletes a pet.
#[utoipa::path(
    delete,
    path = "/pet/{petId}",
    operation_id = "deletePet",
    tag = "pet",
    params(
        ("api_key" = Option<String>, Header, nullable = false,
            description = "Accepted for compatibility with the official document."),
        ("petId" = i64, Path, minimum = 1, description = "Pet id to delete"),
    ),
    responses(
        (status = 200, description = "Pet deleted"),
        (status = 400, description = "Invalid pet value"),
        (status = 404, description = "Pet not found"),
    ),
    security(("petstore_auth" = ["write:pets", "read:pets"])),
)]
pub async fn delete_pet(
    State(state): State<PetstoreState>,
    _format: Format,
    PathParams(pet_id): PathParams<i64>,
) -> Result<Response, ApiError> {
    let id = positive_id("petId", pet_id)?;
    let mut tx = state.db.begin_write().await?;
    let deleted = sqlx::query("DELETE FROM pets WHERE id = $1")
        .bind(id)
        .execute(tx.conn())
        .await?;
    if deleted.rows_affected() == 0 {
        return Err(not_found(id));
    }
    tx.commit().await?;
    Ok(axum::http::StatusCode::OK.into_response())
}
