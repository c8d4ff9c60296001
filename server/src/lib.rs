//! The Pet Store (`/v2`) and Portfolio (`/api`) services in one server.
//!
//! The contract is the pair of hand-written documents in `openapi/`; the
//! handlers here carry `#[utoipa::path]` annotations that `cargo xtask check`
//! compares with them.
//!
//! `docs/architecture.md` shows the layers and how a request flows through them.

// Unit tests may unwrap: a failing unwrap is a failing test.
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

pub mod access;
pub mod app;
pub mod cli;
pub mod clock;
pub mod config;
pub mod deadline;
pub mod docs;
pub mod error;
pub mod extract;
pub mod failure;
pub mod idempotency;
pub mod limits;
pub mod mail;
pub mod openapi_errors;
pub mod password;
pub mod petstore;
pub mod portfolio;
pub mod read_cache;
pub mod secret;
pub mod serve;
pub mod shared_counters;
pub mod storage;
pub mod strict_json;
pub mod telemetry;
pub mod text_policy;
pub mod tls;

pub use app::Server;
pub use config::Config;
