//! Pet images, stored in the database (so that replicas on one PostgreSQL
//! share them). An image's id is never reused, so an image never changes.

use crate::core::clock;
use crate::petstore::model::PetImage;
use crate::storage::{Database, StoreError};
use sqlx::AnyConnection;

/// Stores an image of pet `pet_id` (in the caller's transaction); its id.
pub(crate) async fn insert(
    conn: &mut AnyConnection,
    pet_id: i64,
    image: &PetImage,
    metadata: Option<&str>,
) -> Result<i64, StoreError> {
    let image_id: i64 = sqlx::query_scalar(
        "INSERT INTO pet_images (pet_id, content_type, data, additional_metadata, created_at) \
         VALUES ($1, $2, $3, $4, $5) RETURNING id",
    )
    .bind(pet_id)
    .bind(&image.content_type)
    .bind(&image.data)
    .bind(metadata)
    .bind(clock::now_timestamp())
    .fetch_one(conn)
    .await?;
    Ok(image_id)
}

/// Image `image_id` of pet `pet_id`.
pub(crate) async fn get(
    db: &Database,
    pet_id: i64,
    image_id: i64,
) -> Result<Option<PetImage>, StoreError> {
    let image: Option<(String, Vec<u8>)> =
        sqlx::query_as("SELECT content_type, data FROM pet_images WHERE id = $1 AND pet_id = $2")
            .bind(image_id)
            .bind(pet_id)
            .fetch_optional(db.pool())
            .await?;
    Ok(image.map(|(content_type, data)| PetImage { content_type, data }))
}
