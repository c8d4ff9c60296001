//! The Pet Store (`/v2`) and Portfolio (`/api`) services in one server.
//!
//! The contract is the pair of hand-written documents in `openapi/`; the
//! handlers here carry `#[utoipa::path]` annotations that `cargo xtask check`
//! compares with them.
//!
//! `docs/architecture.md` shows the layers and how a request flows through them.

// Unit tests may unwrap: a failing unwrap is a failing test.
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

// What the binary, the tests and the tools use: the configuration, the
// server, the operator's subcommands, logging, where the documents are
// served, the documents the code describes, and two fixtures. Everything
// else is the crate's own.
pub mod cli;
pub mod config;
pub mod telemetry;

pub use app::fixtures;
pub use app::injected_failures;
pub use app::{ConfigSource, Server};
pub use config::Config;
pub use http::docs;
pub use petstore::document::openapi as petstore_openapi;
pub use portfolio::document::openapi as portfolio_openapi;

mod access;
mod app;
mod core;
mod http;
mod limits;
mod mail;
mod petstore;
mod portfolio;
mod storage;
