//! The layer under `petstore-portfolio-client`, for it and for any client
//! generated from the services' documents (`cargo xtask codegen --input
//! <profile> --output <file.rs>`): credentials (API keys, bearer tokens,
//! HTTP Basic, OAuth client credentials with renewed tokens), retries
//! with idempotency keys, per-call timeouts, one-line errors with the
//! services' error codes, a `tracing` span per call, the `before_send`
//! hook, and paging by `Link` header or cursor.
//!
//! A generated client carries a [`transport::Transport`] as progenitor's
//! inner value and runs progenitor's hooks through it
//! ([`service_client!`]); its `send()` returns this crate's [`Error`]. See
//! the SDK's documentation for how to use a client: this crate is what the
//! clients are made of.

// Unit tests may unwrap: a failing unwrap is a failing test.
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

pub mod auth;
pub mod builder;
pub mod contract;
mod error;
mod fields;
mod observe;
pub mod paging;
mod retry;
mod tls;
pub mod trace;
pub mod transport;

pub use error::{ApiError, BuildError, Error, ErrorCode, TransportError};
pub use fields::InvalidFields;
/// The reqwest the clients are built on, for
/// [`builder::ClientBuilder::with_reqwest_client`] and header values without
/// a dependency of your own to keep in step.
pub use reqwest;
pub use retry::RetryPolicy;
pub use transport::OperationRoute;

/// What the macros and the generated code name through this crate.
#[doc(hidden)]
pub use progenitor_client;
