//! Client of the pet store (`/v2`).
//!
//! Everything progenitor generates is re-exported here: [`Client`] with one
//! method per operation (named like the operation: `get_pet_by_id`, ...),
//! [`types`] with the document's schemas. Operations answer
//! `Result<ResponseValue<T>, Error>`; an error the server answered is
//! [`Error::Api`], with its status, code and message (the `ApiResponse`).
//!
//! This client speaks the JSON face of the contract: XML and form bodies,
//! which the server also accepts, are left to raw HTTP.

#[rustfmt::skip]
#[allow(clippy::all, clippy::pedantic, clippy::unwrap_used, clippy::expect_used, missing_docs, unused)]
#[path = "generated/petstore.rs"]
mod generated;

pub use generated::*;
pub use progenitor_client::ResponseValue;

use reqwest::header::{AUTHORIZATION, HeaderName};

pub use crate::auth::Credentials;
pub use crate::error::BuildError;
pub use crate::error::{ApiError, Error};
use crate::transport::Transport;

/// The path under which the server mounts the pet store.
pub const BASE_PATH: &str = "/v2";

/// The pet store, as a service the SDK builds clients for.
#[derive(Debug, Clone, Copy)]
pub struct Petstore;

impl crate::builder::Service for Petstore {
    type Client = Client;
    const BASE_PATH: &'static str = BASE_PATH;
    const IDEMPOTENT_OPERATIONS: &'static [&'static str] = IDEMPOTENT_OPERATIONS;
    const OPERATION_ROUTES: &'static [crate::OperationRoute] = OPERATION_ROUTES;

    fn client(root_url: &str, http: reqwest::Client, transport: Transport) -> Client {
        Client::new_with_client(&format!("{root_url}{BASE_PATH}"), http, transport)
    }
}

crate::transport::service_client!();

/// Builds a [`Client`] for a server, with optional credentials.
///
/// The pet store accepts requests without credentials unless the server runs
/// with auth mode `enforce`; then its pet operations need an `api_key`, a
/// bearer token (from `/oauth/authorize`, or a `login_user` session), or a
/// user's name and password (HTTP Basic), as each operation says.
pub type ClientBuilder = crate::builder::ClientBuilder<Petstore>;

impl ClientBuilder {
    /// A builder from the environment: the server from
    /// `PETSTORE_PORTFOLIO_URL` (required; the root or the pet store's URL),
    /// and whichever credentials are set: `PETSTORE_API_KEY`,
    /// `PETSTORE_BEARER_TOKEN`, `PETSTORE_USERNAME` with
    /// `PETSTORE_PASSWORD` (HTTP Basic). A missing variable is an error
    /// that names it.
    ///
    /// ```no_run
    /// # fn demo() -> Result<(), petstore_portfolio_client::petstore::BuildError> {
    /// let client = petstore_portfolio_client::petstore::ClientBuilder::from_env()?.build()?;
    /// # let _ = client; Ok(()) }
    /// ```
    pub fn from_env() -> Result<Self, BuildError> {
        use crate::builder::variable;
        let mut builder = ClientBuilder::new(crate::builder::url_from_env()?);
        if let Some(key) = variable("PETSTORE_API_KEY") {
            builder = builder.api_key(key);
        }
        if let Some(token) = variable("PETSTORE_BEARER_TOKEN") {
            builder = builder.bearer_token(token);
        }
        if let Some(username) = variable("PETSTORE_USERNAME") {
            let password = variable("PETSTORE_PASSWORD")
                .ok_or(BuildError::MissingVariable("PETSTORE_PASSWORD"))?;
            builder = builder.basic_auth(&username, &password);
        }
        Ok(builder)
    }

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

pub use crate::auth::Refusal;

/// Why the server refused a request (401, 403, 429), with what its
/// `ApiResponse` says and how long to wait.
pub fn refusal(error: &Error) -> Option<Refusal> {
    let answer = error.api()?;
    Refusal::from_parts(
        answer.status(),
        answer.headers(),
        answer.message().to_owned(),
        |_| None,
    )
}

crate::paging::stream_by_link!(
    FindPetsByStatus,
    types::Pet,
    |pets| pets,
    "pet with the statuses asked for (`limit` a page, 100 if not set)"
);
crate::paging::stream_by_link!(
    FindPetsByTags,
    types::Pet,
    |pets| pets,
    "pet with any of the tags asked for (`limit` a page, 100 if not set)"
);
