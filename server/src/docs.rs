//! The hand-written OpenAPI documents, served as JSON, and Swagger UI.
//!
//! What is served is `openapi/*.yaml` itself (converted to JSON once, at
//! start-up), not a document re-derived from the code: the files are the
//! contract.

use axum::Router;
use axum::http::{HeaderValue, header};
use tower_http::set_header::SetResponseHeaderLayer;
use utoipa_swagger_ui::{SwaggerUi, Url};

/// `openapi/petstore.yaml`, as written.
pub const PETSTORE_YAML: &str = include_str!("../../openapi/petstore.yaml");

/// Where the pet store document is served.
pub const PETSTORE_JSON_PATH: &str = "/openapi/petstore.json";

/// `openapi/portfolio.yaml`, as written.
pub const PORTFOLIO_YAML: &str = include_str!("../../openapi/portfolio.yaml");

/// Where the portfolio document is served.
pub const PORTFOLIO_JSON_PATH: &str = "/openapi/portfolio.json";

/// Where Swagger UI is served.
pub const SWAGGER_UI_PATH: &str = "/docs";

/// Parses one of the embedded documents into JSON.
pub fn yaml_to_json(yaml: &str) -> anyhow::Result<serde_json::Value> {
    Ok(serde_norway::from_str(yaml)?)
}

/// Swagger UI at `/docs`, offering both documents, and a route for each
/// document's JSON.
/// Swagger UI's pages may not be framed by another site (clickjacking of
/// the Authorize dialog and "Try it out").
pub fn router(petstore: serde_json::Value, portfolio: serde_json::Value) -> Router {
    Router::new()
        .merge(
            SwaggerUi::new(SWAGGER_UI_PATH)
                .external_url_unchecked(
                    Url::with_primary("Pet Store (/v2)", PETSTORE_JSON_PATH, true),
                    petstore,
                )
                .external_url_unchecked(
                    Url::new("Portfolio (/api)", PORTFOLIO_JSON_PATH),
                    portfolio,
                ),
        )
        .layer(SetResponseHeaderLayer::overriding(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static("frame-ancestors 'none'"),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            header::X_FRAME_OPTIONS,
            HeaderValue::from_static("DENY"),
        ))
}
