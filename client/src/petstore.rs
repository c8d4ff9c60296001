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

use std::time::Duration;

use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue, InvalidHeaderValue};

/// The path under which the server mounts the pet store.
pub const BASE_PATH: &str = "/v2";

/// Builds a [`Client`] for a server, with optional credentials.
///
/// The pet store accepts requests without credentials unless the server runs
/// with auth mode `enforce`; then it needs an `api_key` header or a bearer token.
#[derive(Debug, Clone)]
pub struct ClientBuilder {
    server_url: String,
    api_key: Option<String>,
    bearer_token: Option<String>,
    timeout: Duration,
}

impl ClientBuilder {
    /// `server_url` is the server's root, e.g. `http://127.0.0.1:8080`; the
    /// pet store's base path (`/v2`) is added.
    pub fn new(server_url: impl Into<String>) -> Self {
        Self {
            server_url: server_url.into(),
            api_key: None,
            bearer_token: None,
            timeout: Duration::from_secs(30),
        }
    }

    /// Sends `api_key: <key>` with every request.
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    /// Sends `Authorization: Bearer <token>` with every request (an OAuth token,
    /// or the session token `login_user` returns).
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        self.bearer_token = Some(token.into());
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
            headers.insert("api_key", value);
        }
        if let Some(token) = &self.bearer_token {
            let mut value =
                HeaderValue::from_str(&format!("Bearer {token}")).map_err(BuildError::Header)?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        let http = reqwest::Client::builder()
            .default_headers(headers)
            .timeout(self.timeout)
            .build()
            .map_err(BuildError::Http)?;
        let base = format!("{}{BASE_PATH}", self.server_url.trim_end_matches('/'));
        Ok(Client::new_with_client(&base, http))
    }
}

/// Why a client could not be built.
#[derive(Debug)]
pub enum BuildError {
    /// A credential is not a valid header value.
    Header(InvalidHeaderValue),
    /// The HTTP client could not be set up.
    Http(reqwest::Error),
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BuildError::Header(_) => f.write_str("a credential is not a valid HTTP header value"),
            BuildError::Http(e) => write!(f, "cannot build the HTTP client: {e}"),
        }
    }
}

impl std::error::Error for BuildError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BuildError::Header(e) => Some(e),
            BuildError::Http(e) => Some(e),
        }
    }
}

/// The server's `ApiResponse` carried by an error, if the server answered with one.
pub fn error_body(error: &Error<types::ApiResponse>) -> Option<&types::ApiResponse> {
    match error {
        Error::ErrorResponse(response) => Some(response.as_ref()),
        _ => None,
    }
}

/// The HTTP status of an error, if the server answered.
pub fn error_status(error: &Error<types::ApiResponse>) -> Option<reqwest::StatusCode> {
    error.status()
}
