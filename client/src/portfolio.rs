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

use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderValue};

pub use crate::petstore::BuildError;

/// The header that carries an API key.
pub const API_KEY_HEADER: &str = "X-API-Key";

/// Builds a [`Client`] for a server, with an optional API key.
///
/// Public operations need no key; protected ones need a key with the scope the
/// operation names (401 without a valid key, 403 without the scope).
#[derive(Clone)]
pub struct ClientBuilder {
    server_url: String,
    api_key: Option<String>,
    timeout: Duration,
}

impl std::fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("server_url", &self.server_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "***"))
            .finish_non_exhaustive()
    }
}

impl ClientBuilder {
    /// `server_url` is the server's root, e.g. `http://127.0.0.1:8080`.
    pub fn new(server_url: impl Into<String>) -> Self {
        Self {
            server_url: server_url.into(),
            api_key: None,
            timeout: Duration::from_secs(30),
        }
    }

    /// Sends `X-API-Key: <key>` with every request. Keep keys in the
    /// environment, not in code.
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    /// Gives up on a request after this long (default 30 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    pub fn build(self) -> Result<Client, BuildError> {
        let mut headers = HeaderMap::new();
        if let Some(key) = &self.api_key {
            let mut value = HeaderValue::from_str(key).map_err(BuildError::Header)?;
            value.set_sensitive(true);
            headers.insert(API_KEY_HEADER, value);
        }
        let http = reqwest::Client::builder()
            .default_headers(headers)
            .timeout(self.timeout)
            .build()
            .map_err(BuildError::Http)?;
        Ok(Client::new_with_client(
            self.server_url.trim_end_matches('/'),
            http,
        ))
    }
}

/// The server's error envelope carried by an error, if the server answered with one.
pub fn error_body(error: &Error<types::ErrorBody>) -> Option<&types::ErrorBody> {
    match error {
        Error::ErrorResponse(response) => Some(response.as_ref()),
        _ => None,
    }
}
