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

pub use crate::auth::Credentials;
pub use crate::builder::BuildError;

/// The path under which the server mounts the pet store.
pub const BASE_PATH: &str = "/v2";

/// The pet store, as a service the SDK builds clients for.
#[derive(Debug, Clone, Copy)]
pub struct Petstore;

impl crate::builder::Service for Petstore {
    type Client = Client;
    const BASE_PATH: &'static str = BASE_PATH;

    fn client(base_url: &str, http: reqwest::Client, credentials: Credentials) -> Client {
        Client::new_with_client(base_url, http, credentials)
    }
}

/// Puts the builder's credentials on every request (see [`crate::auth`]).
impl progenitor_client::ClientHooks<Credentials> for Client {
    async fn pre<E>(
        &self,
        request: &mut reqwest::Request,
        _info: &progenitor_client::OperationInfo,
    ) -> Result<(), Error<E>> {
        self.inner
            .apply(&self.client, request)
            .await
            .map_err(|e| Error::Custom(e.to_string()))
    }

    async fn exec(
        &self,
        request: reqwest::Request,
        _info: &progenitor_client::OperationInfo,
    ) -> reqwest::Result<reqwest::Response> {
        self.inner.execute(&self.client, request).await
    }
}

/// Builds a [`Client`] for a server, with optional credentials.
///
/// The pet store accepts requests without credentials unless the server runs
/// with auth mode `enforce`; then its pet operations need an `api_key`, a
/// bearer token (from `/oauth/authorize`, or a `login_user` session), or a
/// user's name and password (HTTP Basic), as each operation says.
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

    /// Sends the session token `login_user` returned (as a bearer token);
    /// `logout_user` with it ends the session.
    pub fn session(self, token: impl Into<String>) -> Self {
        self.bearer_token(token)
    }

    /// Sends a pet store user's name and password with every request
    /// (HTTP Basic). Use it over HTTPS only.
    pub fn basic_auth(self, username: &str, password: &str) -> Self {
        use base64::Engine as _;
        let pair =
            base64::engine::general_purpose::STANDARD.encode(format!("{username}:{password}"));
        self.credential(AUTHORIZATION, format!("Basic {pair}"))
    }
}

pub use crate::auth::{Refusal, retry_after_of as retry_after};
pub use crate::error_body;

/// Why the server refused a request (401, 403, 429), with what its
/// `ApiResponse` says and how long to wait.
pub fn refusal(error: &Error<types::ApiResponse>) -> Option<Refusal> {
    let Error::ErrorResponse(response) = error else {
        return None;
    };
    Refusal::from_parts(
        response.status(),
        response.headers(),
        response.message.clone().unwrap_or_default(),
        |_| None,
    )
}

/// The HTTP status of an error, if the server answered.
pub fn error_status(error: &Error<types::ApiResponse>) -> Option<reqwest::StatusCode> {
    error.status()
}
