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

use reqwest::header::{AUTHORIZATION, HeaderName};

pub use crate::auth::Credentials;
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
/// Public operations need none; protected ones an API key with the scope the
/// operation names, authenticated ones (social-publish, notify-subscribers)
/// an API key or a bearer token, private ones (`/api/admin/...`) a bearer
/// token: 401 without a valid credential, 403 without the scope.
pub type ClientBuilder = crate::builder::ClientBuilder<Portfolio>;

impl ClientBuilder {
    /// Sends `X-API-Key: <key>` with every request. Keep keys in the
    /// environment, not in code.
    pub fn api_key(self, key: impl Into<String>) -> Self {
        self.credential(HeaderName::from_static("x-api-key"), key.into())
    }

    /// Sends `Authorization: Bearer <token>` with every request: a token from
    /// `POST /api/oauth/token` that the program got itself. To have the SDK
    /// get tokens, use [`client_credentials`](Self::client_credentials).
    pub fn bearer_token(self, token: impl Into<String>) -> Self {
        self.credential(AUTHORIZATION, format!("Bearer {}", token.into()))
    }

    /// Gets a bearer token with an OAuth client's id and secret (the client
    /// credentials grant, at the same server), sends it with every request,
    /// and gets a new one before it expires, or when the server refuses it.
    /// The token carries every scope the client has.
    pub fn client_credentials(
        self,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> Self {
        self.token_from_client_credentials(client_id.into(), client_secret.into(), None)
    }

    /// Like [`client_credentials`](Self::client_credentials), asking only for
    /// `scope` (space-separated scopes).
    pub fn client_credentials_with_scope(
        self,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
        scope: impl Into<String>,
    ) -> Self {
        self.token_from_client_credentials(
            client_id.into(),
            client_secret.into(),
            Some(scope.into()),
        )
    }
}

pub use crate::auth::{Refusal, TokenError, retry_after_of as retry_after};
pub use crate::error_body;

/// Why the server refused a request (401, 403, 429), with what its
/// envelope says: the header or scope it wants, how long to wait.
pub fn refusal(error: &Error<types::ErrorBody>) -> Option<Refusal> {
    let Error::ErrorResponse(response) = error else {
        return None;
    };
    let detail = |name: &str| {
        response
            .error
            .details
            .get(name)
            .and_then(|v| v.as_str())
            .map(str::to_owned)
    };
    Refusal::from_parts(
        response.status(),
        response.headers(),
        response.error.message.clone(),
        detail,
    )
}
