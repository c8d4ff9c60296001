//! Client of the pet store (`/v2`).
//!
//! Everything progenitor generates is re-exported here: [`Client`] with one
//! method per operation (named like the operation: `get_pet_by_id`, ...),
//! [`types`] with the document's schemas. Operations answer
//! `Result<ResponseValue<T>, Error<types::ApiResponse>>`; on an error status the
//! server's `ApiResponse` is in [`Error::ErrorResponse`] (see [`error_body`]).
//!
//! This client speaks the JSON face of the contract: XML and form bodies,
//! which the server also accepts, are left to raw HTTP.

#[rustfmt::skip]
#[allow(clippy::all, clippy::pedantic, clippy::unwrap_used, clippy::expect_used, missing_docs, unused)]
#[path = "generated/petstore.rs"]
mod generated;

pub use generated::*;
pub use progenitor_client::{Error, ResponseValue};

use reqwest::header::{AUTHORIZATION, HeaderName};

pub use crate::builder::BuildError;

/// The path under which the server mounts the pet store.
pub const BASE_PATH: &str = "/v2";

/// The pet store, as a service the SDK builds clients for.
#[derive(Debug, Clone, Copy)]
pub struct Petstore;

impl crate::builder::Service for Petstore {
    type Client = Client;
    const BASE_PATH: &'static str = BASE_PATH;

    fn client(base_url: &str, http: reqwest::Client) -> Client {
        Client::new_with_client(base_url, http)
    }
}

/// Builds a [`Client`] for a server, with optional credentials.
///
/// The pet store accepts requests without credentials unless the server runs
/// with auth mode `enforce`; then it needs an `api_key` header or a bearer token.
pub type ClientBuilder = crate::builder::ClientBuilder<Petstore>;

impl ClientBuilder {
    /// Sends `api_key: <key>` with every request.
    pub fn api_key(self, key: impl Into<String>) -> Self {
        self.credential(HeaderName::from_static("api_key"), key.into())
    }

    /// Sends `Authorization: Bearer <token>` with every request (an OAuth token,
    /// or the session token `login_user` returns).
    pub fn bearer_token(self, token: impl Into<String>) -> Self {
        self.credential(AUTHORIZATION, format!("Bearer {}", token.into()))
    }
}

pub use crate::error_body;

/// The HTTP status of an error, if the server answered.
pub fn error_status(error: &Error<types::ApiResponse>) -> Option<reqwest::StatusCode> {
    error.status()
}
