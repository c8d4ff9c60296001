//! A pet's stored image.

use crate::petstore::db;
use crate::petstore::model::PetImage;
use crate::storage::{Database, StoreError};

/// Image `image_id` of pet `pet_id`, if it has one.
pub(crate) async fn image(
    db: &Database,
    pet_id: i64,
    image_id: i64,
) -> Result<Option<PetImage>, StoreError> {
    db::images::get(db, pet_id, image_id).await
}
