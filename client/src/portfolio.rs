//! Client of the portfolio service (`/api`).
//!
//! Everything progenitor generates is re-exported here: [`Client`] with one
//! method per operation (`get_site_info`, `list_projects`, ...) and [`types`].
//! Operations answer `Result<ResponseValue<T>, Error>`; an error the server
//! answered is [`Error::Api`], with the envelope's code, message and details.

#[rustfmt::skip]
#[allow(clippy::all, clippy::pedantic, clippy::unwrap_used, clippy::expect_used, missing_docs, unused)]
#[path = "generated/portfolio.rs"]
mod generated;

pub use generated::*;
pub use progenitor_client::ResponseValue;

pub use crate::auth::Credentials;
use crate::transport::Transport;
pub use crate::{ApiError, BuildError, Error};

/// The header that carries an API key.
pub const API_KEY_HEADER: &str = "X-API-Key";

/// The path under which the server mounts the portfolio.
pub const BASE_PATH: &str = "/api";

/// The portfolio, as a service the SDK builds clients for.
#[derive(Debug, Clone, Copy)]
pub struct Portfolio;

impl crate::builder::Service for Portfolio {
    type Client = Client;
    const BASE_PATH: &'static str = BASE_PATH;
    const IDEMPOTENT_OPERATIONS: &'static [&'static str] = IDEMPOTENT_OPERATIONS;
    const OPERATION_ROUTES: &'static [crate::OperationRoute] = OPERATION_ROUTES;
    const DOCUMENT_VERSION: &'static str = DOCUMENT_VERSION;

    // The document's paths start with /api: the client's base URL is the
    // server's root.
    fn client(root_url: &str, http: reqwest::Client, transport: Transport) -> Client {
        Client::new_with_client(root_url, http, transport)
    }
}

petstore_portfolio_runtime::service_client!();

/// Builds a [`Client`] for a server, with optional credentials.
///
/// Public operations need none; protected ones an API key with the scope the
/// operation names, authenticated ones (social-publish, notify-subscribers)
/// an API key or a bearer token, private ones (`/api/admin/...`) a bearer
/// token: 401 without a valid credential, 403 without the scope.
pub type ClientBuilder = crate::builder::ClientBuilder<Portfolio>;

impl crate::builder::ApiKeyHeader for Portfolio {
    /// `X-API-Key: <key>`
    const API_KEY_HEADER: &'static str = "x-api-key";
}

/// `client_credentials`: the SDK gets bearer tokens from
/// `POST /api/oauth/token` and renews them.
impl crate::builder::ClientCredentialsGrant for Portfolio {}

/// `ClientBuilder::from_env()`: the server from `PETSTORE_PORTFOLIO_URL`
/// (required; the root or the portfolio's `/api` URL), and whichever
/// credentials are set: `PORTFOLIO_API_KEY`, `PORTFOLIO_BEARER_TOKEN`,
/// `PORTFOLIO_CLIENT_ID` with `PORTFOLIO_CLIENT_SECRET` (and
/// `PORTFOLIO_SCOPE`, to ask for fewer scopes). A missing variable is an
/// error that names it.
///
/// ```no_run
/// # fn demo() -> Result<(), petstore_portfolio_client::portfolio::BuildError> {
/// let client = petstore_portfolio_client::portfolio::ClientBuilder::from_env()?.build()?;
/// # let _ = client; Ok(()) }
/// ```
impl crate::builder::FromEnvironment for Portfolio {
    fn credentials_from_env(mut builder: ClientBuilder) -> Result<ClientBuilder, BuildError> {
        use crate::builder::variable;
        if let Some(key) = variable("PORTFOLIO_API_KEY") {
            builder = builder.api_key(key);
        }
        if let Some(token) = variable("PORTFOLIO_BEARER_TOKEN") {
            builder = builder.bearer_token(token);
        }
        if let Some(id) = variable("PORTFOLIO_CLIENT_ID") {
            let secret = variable("PORTFOLIO_CLIENT_SECRET")
                .ok_or(BuildError::MissingVariable("PORTFOLIO_CLIENT_SECRET"))?;
            builder = match variable("PORTFOLIO_SCOPE") {
                Some(scope) => builder.client_credentials_with_scope(id, secret, scope),
                None => builder.client_credentials(id, secret),
            };
        }
        Ok(builder)
    }
}

pub use crate::auth::{Refusal, TokenError};

/// Why the server refused a request (401, 403, 429), with what its
/// envelope says: the header or scope it wants, how long to wait.
pub fn refusal(error: &Error) -> Option<Refusal> {
    let answer = error.api()?;
    let detail = |name: &str| {
        answer
            .details()
            .get(name)
            .and_then(|v| v.as_str())
            .map(str::to_owned)
    };
    Refusal::from_parts(
        answer.status(),
        answer.headers(),
        answer.message().to_owned(),
        detail,
    )
}

macro_rules! paged {
    ($page:ident, $item:ident, $builder:ident, $what:literal) => {
        impl crate::paging::Page for types::$page {
            type Item = types::$item;

            fn into_items(self) -> (Vec<types::$item>, bool) {
                let more = crate::paging::more_after(self.page, self.per_page, self.total);
                (self.items, more)
            }
        }

        petstore_portfolio_runtime::stream_by_link!(
            $builder,
            types::$item,
            |page| page.items,
            concat!($what, " the query matches (`per_page` a page)")
        );
    };
}

paged!(
    SubscriberPage,
    SubscriberEntry,
    ListSubscribers,
    "subscriber"
);
paged!(KeyRequestPage, KeyRequest, ListKeyRequests, "key request");
paged!(
    ContactSubmissionPage,
    ContactEntry,
    ListContactSubmissions,
    "contact submission"
);
petstore_portfolio_runtime::stream_by_link!(ListProjects, types::Project, |list| list, "project");
petstore_portfolio_runtime::stream_by_link!(
    ListAchievements,
    types::Achievement,
    |list| list,
    "achievement"
);
petstore_portfolio_runtime::stream_by_link!(ListPosts, types::PostSummary, |list| list, "post");
petstore_portfolio_runtime::stream_by_link!(ListApiKeys, types::ApiKey, |list| list, "API key");
petstore_portfolio_runtime::stream_by_link!(
    ListOauthClients,
    types::OAuthClient,
    |list| list,
    "OAuth client"
);
petstore_portfolio_runtime::stream_by_link!(
    ListFailedEmails,
    types::FailedEmail,
    |list| list,
    "failed email"
);
