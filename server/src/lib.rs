//! The Pet Store (`/v2`) and Portfolio (`/api`) services in one server.
//!
//! The contract is the pair of hand-written documents in `openapi/`; the
//! handlers here carry `#[utoipa::path]` annotations that `cargo xtask check`
//! compares with them.

pub mod app;
pub mod config;
pub mod docs;
pub mod error;
pub mod mail;
pub mod openapi_errors;
pub mod petstore;
pub mod portfolio;
pub mod storage;
pub mod strict_json;
pub mod telemetry;

pub use app::Server;
pub use config::Config;
