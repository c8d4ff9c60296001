//! The hand-written OpenAPI documents, served as JSON, and Swagger UI.
//!
//! What is served is `openapi/*.yaml` itself (converted to JSON once, at
//! start-up), not a document re-derived from the code: the files are the
//! contract.

use axum::Router;
use utoipa_swagger_ui::{SwaggerUi, Url};

/// `openapi/petstore.yaml`, as written.
pub const PETSTORE_YAML: &str = include_str!("../../openapi/petstore.yaml");

/// Where the pet store document is served.
pub const PETSTORE_JSON_PATH: &str = "/openapi/petstore.json";

/// Where Swagger UI is served.
pub const SWAGGER_UI_PATH: &str = "/docs";

/// Parses one of the embedded documents into JSON.
pub fn yaml_to_json(yaml: &str) -> anyhow::Result<serde_json::Value> {
    Ok(serde_norway::from_str(yaml)?)
}

/// Swagger UI at `/docs`, offering the documents it is given, and a route
/// for each document's JSON.
pub fn router(petstore: serde_json::Value) -> Router {
    Router::new().merge(SwaggerUi::new(SWAGGER_UI_PATH).external_url_unchecked(
        Url::with_primary("Pet Store (/v2)", PETSTORE_JSON_PATH, true),
        petstore,
    ))
}
