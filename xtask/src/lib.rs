//! Project automation, as a library so that `cargo test` runs the same checks.

pub mod codegen;
pub mod contract;
pub mod docs_map;
pub mod evolution;
pub mod layers;
pub mod promises;
pub mod rust_text;
pub mod semver;

use std::path::Path;

use anyhow::Context as _;
use serde_json::Value;

/// The HTTP methods an OpenAPI path item may hold operations for.
pub const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// A service whose hand-written document and code are compared.
#[derive(Debug, Clone, Copy)]
pub struct Service {
    pub name: &'static str,
    pub document: &'static str,
    /// The document the handlers' annotations produce.
    pub code_document: fn() -> utoipa::openapi::OpenApi,
}

pub const SERVICES: [Service; 2] = [
    Service {
        name: "pet store",
        document: "openapi/petstore.yaml",
        code_document: petstore_portfolio_server::petstore_openapi,
    },
    Service {
        name: "portfolio",
        document: "openapi/portfolio.yaml",
        code_document: petstore_portfolio_server::portfolio_openapi,
    },
];

/// The drift between one service's document and its code.
pub fn check_service(root: &Path, service: Service) -> anyhow::Result<Vec<contract::Drift>> {
    let document = codegen::read_document(root, service.document)?;
    let code: Value = serde_json::to_value((service.code_document)())
        .context("cannot serialise the code's document")?;
    Ok(contract::compare(&document, &code))
}
