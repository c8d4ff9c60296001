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

pub use crate::auth::Credentials;
use crate::transport::Transport;
pub use crate::{ApiError, BuildError, Error};

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
    const DOCUMENT_VERSION: &'static str = DOCUMENT_VERSION;

    fn client(root_url: &str, http: reqwest::Client, transport: Transport) -> Client {
        Client::new_with_client(&format!("{root_url}{BASE_PATH}"), http, transport)
    }
}

petstore_portfolio_runtime::service_client!();

/// Builds a [`Client`] for a server, with optional credentials.
///
/// The pet store accepts requests without credentials unless the server runs
/// with auth mode `enforce`; then its pet operations need an `api_key`, a
/// bearer token (from `/oauth/authorize`, or a `login_user` session), or a
/// user's name and password (HTTP Basic), as each operation says.
pub type ClientBuilder = crate::builder::ClientBuilder<Petstore>;

impl crate::builder::ApiKeyHeader for Petstore {
    /// `api_key: <key>`
    const API_KEY_HEADER: &'static str = "api_key";
}

/// `basic_auth` (a pet store user's name and password) and `session` (the
/// token `login_user` answers with; `logout_user` with it ends it).
impl crate::builder::UserSignIn for Petstore {}

/// `ClientBuilder::from_env()`: the server from `PETSTORE_PORTFOLIO_URL`
/// (required; the root or the pet store's URL), and whichever credentials
/// are set: `PETSTORE_API_KEY`, `PETSTORE_BEARER_TOKEN`, `PETSTORE_USERNAME`
/// with `PETSTORE_PASSWORD` (HTTP Basic). A missing variable is an error
/// that names it.
///
/// ```no_run
/// # fn demo() -> Result<(), petstore_portfolio_client::petstore::BuildError> {
/// let client = petstore_portfolio_client::petstore::ClientBuilder::from_env()?.build()?;
/// # let _ = client; Ok(()) }
/// ```
impl crate::builder::FromEnvironment for Petstore {
    fn credentials_from_env(mut builder: ClientBuilder) -> Result<ClientBuilder, BuildError> {
        use crate::builder::variable;
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

petstore_portfolio_runtime::stream_by_link!(
    FindPetsByStatus,
    types::Pet,
    |pets| pets,
    "pet with the statuses asked for (`limit` a page, 100 if not set)"
);
petstore_portfolio_runtime::stream_by_link!(
    FindPetsByTags,
    types::Pet,
    |pets| pets,
    "pet with any of the tags asked for (`limit` a page, 100 if not set)"
);
