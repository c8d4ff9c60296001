//! Client of the portfolio service (`/api`).
//!
//! Everything progenitor generates is re-exported here: [`Client`] with one
//! method per operation (`get_site_info`, `list_projects`, ...) and [`types`].
//! Operations answer `Result<ResponseValue<T>, Error<types::ErrorBody>>`; on an
//! error status the server's envelope is in [`Error::ErrorResponse`] (see
//! [`error_body`]).

#[rustfmt::skip]
#[allow(clippy::all, clippy::pedantic, clippy::unwrap_used, clippy::expect_used, missing_docs, unused)]
#[path = "generated/portfolio.rs"]
mod generated;

pub use generated::*;
pub use progenitor_client::{Error, ResponseValue};

use reqwest::header::HeaderName;

pub use crate::builder::BuildError;

/// The header that carries an API key.
pub const API_KEY_HEADER: &str = "X-API-Key";

/// The portfolio, as a service the SDK builds clients for.
#[derive(Debug, Clone, Copy)]
pub struct Portfolio;

impl crate::builder::Service for Portfolio {
    type Client = Client;
    // The document's paths start with /api.
    const BASE_PATH: &'static str = "";

    fn client(base_url: &str, http: reqwest::Client) -> Client {
        Client::new_with_client(base_url, http)
    }
}

/// Builds a [`Client`] for a server, with an optional API key.
///
/// Public operations need no key; protected ones need a key with the scope the
/// operation names (401 without a valid key, 403 without the scope).
pub type ClientBuilder = crate::builder::ClientBuilder<Portfolio>;

impl ClientBuilder {
    /// Sends `X-API-Key: <key>` with every request. Keep keys in the
    /// environment, not in code.
    pub fn api_key(self, key: impl Into<String>) -> Self {
        self.credential(HeaderName::from_static("x-api-key"), key.into())
    }
}

pub use crate::error_body;
