//! The portfolio service under `/api` (DESIGN 4.2).
//!
//! Like the pet store, [`router`] registers each handler with its
//! `#[utoipa::path]` documentation; `cargo xtask check` compares the result
//! with `openapi/portfolio.yaml`.

pub mod auth;
pub mod content;
pub mod error;
pub mod health;

use std::sync::Arc;
use std::time::Instant;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use serde::de::DeserializeOwned;
use utoipa::openapi::path::Operation;
use utoipa::openapi::response::ResponseBuilder;
use utoipa::openapi::security::{ApiKey, ApiKeyValue, SecurityScheme};
use utoipa::openapi::{Content, OpenApi as OpenApiDoc, Ref, RefOr};
use utoipa::{Modify, OpenApi};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::config::PortfolioConfig;
use crate::storage::Database;
use auth::ApiKeys;
use error::PortfolioError;

/// What every portfolio handler can reach.
#[derive(Debug, Clone)]
pub struct PortfolioState {
    pub db: Database,
    pub keys: Arc<ApiKeys>,
    pub config: Arc<PortfolioConfig>,
    pub started: Instant,
}

/// The parts of the document that are not per operation.
#[derive(OpenApi)]
#[openapi(
    info(title = "Portfolio API", version = "2.0"),
    servers((url = "/")),
    tags(
        (name = "content", description = "Site information, projects, achievements and posts"),
        (name = "health", description = "Liveness"),
    ),
    components(schemas(content::Link, error::ErrorDetail)),
    modifiers(&SecuritySchemes),
)]
pub struct PortfolioDoc;

struct SecuritySchemes;

impl Modify for SecuritySchemes {
    fn modify(&self, openapi: &mut OpenApiDoc) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "api_key",
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
                auth::API_KEY_HEADER,
                "A key from the operator. Scopes: `context:read`, `contact:write`, \
                 `analytics:read`, `social:publish`, `subscribers:notify`, `admin`.",
            ))),
        );
    }
}

/// Every portfolio error is the envelope ([`error::render_errors`] sees to
/// it); any operation can answer 500 and 503 (the request timeout). Handlers
/// list the statuses particular to them; this adds the rest and the bodies.
struct ErrorResponses;

impl Modify for ErrorResponses {
    fn modify(&self, openapi: &mut OpenApiDoc) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components
            .schemas
            .entry("ErrorBody".to_owned())
            .or_insert_with(<error::ErrorBody as utoipa::PartialSchema>::schema);
        for item in openapi.paths.paths.values_mut() {
            let operations: [&mut Option<Operation>; 5] = [
                &mut item.get,
                &mut item.put,
                &mut item.post,
                &mut item.delete,
                &mut item.patch,
            ];
            for operation in operations.into_iter().flatten() {
                let responses = &mut operation.responses.responses;
                for (status, description) in [
                    (
                        "500",
                        "Something went wrong on the server; the message carries no internals.",
                    ),
                    ("503", "The service cannot answer now."),
                ] {
                    responses.entry(status.to_owned()).or_insert_with(|| {
                        RefOr::T(ResponseBuilder::new().description(description).build())
                    });
                }
                for (status, response) in responses.iter_mut() {
                    let is_error = status.starts_with('4') || status.starts_with('5');
                    if let (true, RefOr::T(response)) = (is_error, response)
                        && response.content.is_empty()
                    {
                        let schema = RefOr::Ref(Ref::from_schema_name("ErrorBody"));
                        response.content.insert(
                            "application/json".to_owned(),
                            RefOr::T(Content::new(Some(schema))),
                        );
                    }
                }
            }
        }
    }
}

/// A path parameter, with the portfolio's error on a bad value.
#[derive(Debug)]
pub struct PathParam<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for PathParam<T> {
    type Rejection = PortfolioError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Path(value)| PathParam(value))
            .map_err(|rejection| PortfolioError::bad_request(rejection.body_text()))
    }
}

/// The portfolio's routes and their documentation, before state is given.
pub fn router() -> OpenApiRouter<PortfolioState> {
    OpenApiRouter::with_openapi(PortfolioDoc::openapi())
        .routes(routes!(content::get_site_info))
        .routes(routes!(content::list_projects))
        .routes(routes!(content::get_project))
        .routes(routes!(content::list_achievements))
        .routes(routes!(content::list_posts))
        .routes(routes!(content::get_post))
        .routes(routes!(content::get_llm_context))
        .routes(routes!(health::get_health))
}

/// The portfolio's document as the handlers' annotations describe it.
pub fn openapi() -> OpenApiDoc {
    let mut doc = router().into_openapi();
    ErrorResponses.modify(&mut doc);
    doc
}
