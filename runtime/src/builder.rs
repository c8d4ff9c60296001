//! The one client builder both services share: the server's root, a
//! timeout, the credentials sent with every request, and the certificates
//! to trust. Each service's module names it `ClientBuilder` and adds the
//! credentials it accepts; [`crate::auth`] applies them to each request.
//!
//! HTTPS works out of the box (rustls, with the system's root
//! certificates); a server with a certificate of its own making is trusted
//! with [`ClientBuilder::add_root_certificate`]. When a request cannot reach
//! the server, print the error with `{:#}` to see why (the certificate, the
//! connection) after what.

use std::fmt;
use std::marker::PhantomData;
use std::time::Duration;

use reqwest::header::{HeaderName, HeaderValue};

use crate::auth::{Credentials, TokenSource};
pub use crate::error::BuildError;
use crate::retry::RetryPolicy;
use crate::transport::{BeforeSend, SDK_USER_AGENT, ServiceInfo, Transport};

/// A service the SDK has a client for.
pub trait Service {
    /// The generated client.
    type Client;
    /// Where the server mounts the service (`/v2`, `/api`).
    const BASE_PATH: &'static str;
    /// The operations that take an `Idempotency-Key`.
    const IDEMPOTENT_OPERATIONS: &'static [&'static str];
    /// Each operation's route template (`/v2/pet/{petId}`), for its span.
    const OPERATION_ROUTES: &'static [crate::OperationRoute];
    /// The version of the document the client was generated from.
    const DOCUMENT_VERSION: &'static str;
    /// The client for the server whose root (without the service's path)
    /// is `root_url`.
    fn client(root_url: &str, http: reqwest::Client, transport: Transport) -> Self::Client;
}

/// A service whose API key goes in a header of its own: the builder has
/// `api_key`.
pub trait ApiKeyHeader: Service {
    /// `api_key`, `x-api-key`.
    const API_KEY_HEADER: &'static str;
}

/// A service whose users sign in (HTTP Basic, or the session a login
/// answers with): the builder has `basic_auth` and `session`.
pub trait UserSignIn: Service {}

/// A service whose OAuth clients get bearer tokens from the server's token
/// endpoint (the client credentials grant): the builder has
/// `client_credentials`.
pub trait ClientCredentialsGrant: Service {}

/// A service whose clients can be set up from the environment: the builder
/// has `from_env`, which reads the server's URL and then calls
/// [`credentials_from_env`](Self::credentials_from_env).
pub trait FromEnvironment: Service + Sized {
    /// `builder` with the credentials the environment gives; a variable
    /// that is needed and missing is [`BuildError::MissingVariable`].
    fn credentials_from_env(
        builder: ClientBuilder<Self>,
    ) -> Result<ClientBuilder<Self>, BuildError>;
}

impl<S: FromEnvironment> ClientBuilder<S> {
    /// A builder from the environment: the server from
    /// `PETSTORE_PORTFOLIO_URL` (required; the server's root or the
    /// service's URL), and whichever credentials the service reads (see
    /// its module). A missing variable is an error that names it.
    pub fn from_env() -> Result<Self, BuildError> {
        S::credentials_from_env(Self::new(url_from_env()?))
    }
}

impl<S: Service> ClientBuilder<S> {
    /// Sends `Authorization: Bearer <token>` with every request: a token
    /// the program got itself (an OAuth token, a session).
    pub fn bearer_token(self, token: impl Into<String>) -> Self {
        self.credential(
            reqwest::header::AUTHORIZATION,
            format!("Bearer {}", token.into()),
        )
    }
}

impl<S: ApiKeyHeader> ClientBuilder<S> {
    /// Sends the API key in the service's header with every request. Keep
    /// keys in the environment, not in code.
    pub fn api_key(self, key: impl Into<String>) -> Self {
        self.credential(HeaderName::from_static(S::API_KEY_HEADER), key.into())
    }
}

impl<S: UserSignIn> ClientBuilder<S> {
    /// Sends the session token a login answered with (as a bearer token).
    pub fn session(self, token: impl Into<String>) -> Self {
        self.bearer_token(token)
    }

    /// Sends a user's name and password with every request (HTTP Basic).
    /// Use it over HTTPS only.
    pub fn basic_auth(self, username: &str, password: &str) -> Self {
        use base64::Engine as _;
        let pair =
            base64::engine::general_purpose::STANDARD.encode(format!("{username}:{password}"));
        self.credential(reqwest::header::AUTHORIZATION, format!("Basic {pair}"))
    }
}

impl<S: ClientCredentialsGrant> ClientBuilder<S> {
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

/// A client id, its secret, and the scopes to ask for.
#[derive(Clone)]
struct ClientCredentials {
    client_id: String,
    client_secret: String,
    scope: Option<String>,
}

/// Builds a client of service `S` for a server, with optional credentials.
pub struct ClientBuilder<S> {
    server_url: String,
    timeout: Duration,
    connect_timeout: Duration,
    retry: RetryPolicy,
    /// Header name and value; the values are secrets.
    credentials: Vec<(HeaderName, String)>,
    /// For bearer tokens fetched from the token endpoint.
    client_credentials: Option<ClientCredentials>,
    /// Extra root certificates (PEM) to trust.
    roots: Vec<Vec<u8>>,
    /// The caller's product, named before the SDK's in `User-Agent`.
    user_agent: Option<String>,
    /// Headers every request carries.
    headers: Vec<(HeaderName, HeaderValue)>,
    /// The caller's own HTTP client, if given.
    http: Option<reqwest::Client>,
    /// The caller's changes to the HTTP client the SDK builds.
    adjust_http: Option<AdjustHttp>,
    /// The caller's hook on each request before it leaves.
    before_send: Option<BeforeSend>,
    service: PhantomData<S>,
}

impl<S> Clone for ClientBuilder<S> {
    fn clone(&self) -> Self {
        Self {
            server_url: self.server_url.clone(),
            timeout: self.timeout,
            connect_timeout: self.connect_timeout,
            retry: self.retry.clone(),
            credentials: self.credentials.clone(),
            client_credentials: self.client_credentials.clone(),
            roots: self.roots.clone(),
            user_agent: self.user_agent.clone(),
            headers: self.headers.clone(),
            http: self.http.clone(),
            adjust_http: self.adjust_http.clone(),
            before_send: self.before_send.clone(),
            service: PhantomData,
        }
    }
}

/// Shows which credentials are set, never their values.
impl<S> fmt::Debug for ClientBuilder<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let credentials: Vec<String> = self
            .credentials
            .iter()
            .map(|(name, _)| format!("{name}: ***"))
            .collect();
        f.debug_struct("ClientBuilder")
            .field("server_url", &self.server_url)
            .field("timeout", &self.timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("retry", &self.retry)
            .field("credentials", &credentials)
            .field(
                "client_id",
                &self
                    .client_credentials
                    .as_ref()
                    .map(|c| c.client_id.as_str()),
            )
            .field("extra_root_certificates", &self.roots.len())
            .field("user_agent", &self.user_agent)
            .field(
                "default_headers",
                &self
                    .headers
                    .iter()
                    .map(|(name, _)| name)
                    .collect::<Vec<_>>(),
            )
            .field("own_http_client", &self.http.is_some())
            .field("adjusted_http_client", &self.adjust_http.is_some())
            .finish()
    }
}

impl<S: Service> ClientBuilder<S> {
    /// `server_url` is the server's root, e.g. `http://127.0.0.1:8080`, or
    /// the service's URL (`http://127.0.0.1:8080/v2` for the pet store,
    /// `.../api` for the portfolio); a trailing `/` makes no difference.
    pub fn new(server_url: impl Into<String>) -> Self {
        Self {
            server_url: server_url.into(),
            timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
            retry: RetryPolicy::default(),
            credentials: Vec::new(),
            client_credentials: None,
            roots: Vec::new(),
            user_agent: None,
            headers: Vec::new(),
            http: None,
            adjust_http: None,
            before_send: None,
            service: PhantomData,
        }
    }

    /// Names your program in the `User-Agent` of every request, before the
    /// SDK's own: `my-app/1.2` gives `my-app/1.2 petstore-portfolio-client/0.2.0 (<commit>)`,
    /// so that the server's operators can tell callers and SDK versions
    /// apart. Without it, the SDK's alone.
    pub fn user_agent(mut self, product: impl Into<String>) -> Self {
        self.user_agent = Some(product.into());
        self
    }

    /// Sends `name: value` with every request (a header the SDK sets
    /// itself, such as a credential or `User-Agent`, is not replaced).
    pub fn default_header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        self.headers.retain(|(existing, _)| *existing != name);
        self.headers.push((name, value));
        self
    }

    /// Calls `hook` with each call's request just before it leaves, after
    /// the SDK has made it whole (credentials, `Idempotency-Key`,
    /// `User-Agent`, `traceparent`): a middleware's place, to add or check
    /// a header, record the request, or stop it. Retries send the request
    /// as the hook left it (the hook runs once per call). An `Err` stops
    /// the call with [`Error::Stopped`](crate::Error::Stopped) and that
    /// reason; nothing is sent.
    ///
    /// ```no_run
    /// # fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// use petstore_portfolio_client::reqwest::header::HeaderValue;
    ///
    /// let client = petstore_portfolio_client::petstore::ClientBuilder::new("https://pets.example")
    ///     .before_send(|request| {
    ///         if request.url().host_str() != Some("pets.example") {
    ///             return Err(format!("{} is not ours", request.url()));
    ///         }
    ///         request.headers_mut().insert("x-signed", HeaderValue::from_static("yes"));
    ///         Ok(())
    ///     })
    ///     .build()?;
    /// # let _ = client; Ok(()) }
    /// ```
    pub fn before_send(
        mut self,
        hook: impl Fn(&mut reqwest::Request) -> Result<(), String> + Send + Sync + 'static,
    ) -> Self {
        self.before_send = Some(BeforeSend(std::sync::Arc::new(hook)));
        self
    }

    /// Changes the HTTP client the SDK builds, after its TLS and timeouts
    /// are set: a proxy, pool settings, default headers, HTTP/2 only.
    ///
    /// ```no_run
    /// # fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// use petstore_portfolio_client::reqwest;
    ///
    /// let proxy = reqwest::Proxy::all("http://proxy.internal:3128")?;
    /// let client = petstore_portfolio_client::petstore::ClientBuilder::new("https://pets.example")
    ///     .configure_reqwest(move |http| http.proxy(proxy.clone()).pool_max_idle_per_host(4))
    ///     .build()?;
    /// # let _ = client; Ok(()) }
    /// ```
    pub fn configure_reqwest(
        mut self,
        adjust: impl Fn(reqwest::ClientBuilder) -> reqwest::ClientBuilder + Send + Sync + 'static,
    ) -> Self {
        self.adjust_http = Some(AdjustHttp(std::sync::Arc::new(adjust)));
        self
    }

    /// Sends the requests through `client`, one you built and may share:
    /// its proxy, connection pool, TLS settings and default headers. The
    /// SDK's credentials, retries, `User-Agent` and per-attempt
    /// [`timeout`](Self::timeout) still apply; the connect timeout and the
    /// trusted certificates are your client's, and
    /// [`add_root_certificate`](Self::add_root_certificate) or
    /// [`configure_reqwest`](Self::configure_reqwest) beside it is refused
    /// at [`build`](Self::build). Start from [`http_client_builder`], which
    /// has the SDK's TLS: with the default features reqwest has no crypto
    /// provider of its own, and `reqwest::Client::builder().build()` panics
    /// unless your program installed one.
    ///
    /// ```no_run
    /// # fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// use petstore_portfolio_client::builder::http_client_builder;
    ///
    /// let shared = http_client_builder()?.build()?;
    /// let client = petstore_portfolio_client::petstore::ClientBuilder::new("https://pets.example")
    ///     .with_reqwest_client(shared.clone())
    ///     .build()?;
    /// # let _ = client; Ok(()) }
    /// ```
    pub fn with_reqwest_client(mut self, client: reqwest::Client) -> Self {
        self.http = Some(client);
        self
    }

    /// Trusts the root certificate (or certificates) in `pem` too, besides
    /// the system's: for a server whose certificate is of its own making.
    pub fn add_root_certificate(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.roots.push(pem.into());
        self
    }

    /// Gives up on an attempt after this long, from connecting to the
    /// answer's last byte (default 30 s). One call may override it: the
    /// client's `with_timeout`.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Gives up on connecting after this long (default 10 s).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// How calls are retried (default: [`RetryPolicy::default`]).
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// Never retries: every failure goes to the caller at once.
    pub fn no_retries(self) -> Self {
        self.retry(RetryPolicy::no_retries())
    }

    /// Sends `name: value` with every request, marked sensitive (kept out of
    /// reqwest's and our `Debug` output): a credential of a kind the
    /// service's own methods do not cover.
    pub fn credential(mut self, name: HeaderName, value: String) -> Self {
        self.credentials.retain(|(existing, _)| *existing != name);
        self.credentials.push((name, value));
        self
    }

    /// Gets bearer tokens from the server's token endpoint with this client
    /// id and secret (asking for `scope`, space-separated, or all the
    /// client's), and a new one before each expires.
    pub(crate) fn token_from_client_credentials(
        mut self,
        client_id: String,
        client_secret: String,
        scope: Option<String>,
    ) -> Self {
        self.client_credentials = Some(ClientCredentials {
            client_id,
            client_secret,
            scope,
        });
        self
    }

    /// The client. Fails if the URL is not `http://` or `https://` with
    /// the server's root or the service's path, a credential or the
    /// `User-Agent` is not a valid header value, a root certificate is not
    /// PEM, or root certificates are given beside your own HTTP client.
    pub fn build(self) -> Result<S::Client, BuildError> {
        let root = root_url(&self.server_url, S::BASE_PATH)?;
        let mut headers = Vec::new();
        for (name, value) in self.credentials {
            let mut value = HeaderValue::from_str(&value).map_err(BuildError::Header)?;
            value.set_sensitive(true);
            headers.push((name, value));
        }
        let user_agent = match &self.user_agent {
            Some(product) => format!("{product} {SDK_USER_AGENT}"),
            None => SDK_USER_AGENT.to_owned(),
        };
        let user_agent = HeaderValue::from_str(&user_agent).map_err(BuildError::Header)?;
        let tokens = self.client_credentials.map(|c| {
            TokenSource::new(
                &root,
                c.client_id,
                c.client_secret,
                c.scope,
                user_agent.clone(),
            )
        });
        let credentials = Credentials::new(headers, tokens);
        let http = match self.http {
            Some(_) if !self.roots.is_empty() => {
                return Err(BuildError::Conflict(
                    "root certificates go to your own HTTP client (with_reqwest_client), \
                     not to the builder",
                ));
            }
            Some(_) if self.adjust_http.is_some() => {
                return Err(BuildError::Conflict(
                    "configure_reqwest changes the client the SDK builds; with your own \
                     (with_reqwest_client), configure that one",
                ));
            }
            Some(http) => http,
            None => {
                let http = reqwest::Client::builder()
                    .timeout(self.timeout)
                    .connect_timeout(self.connect_timeout);
                let mut http = crate::tls::configure(http, &self.roots)?;
                if let Some(AdjustHttp(adjust)) = &self.adjust_http {
                    http = adjust(http);
                }
                http.build().map_err(BuildError::Http)?
            }
        };
        let mut transport = Transport::new(
            credentials,
            self.retry,
            self.timeout,
            ServiceInfo {
                idempotent: S::IDEMPOTENT_OPERATIONS,
                routes: S::OPERATION_ROUTES,
                version: S::DOCUMENT_VERSION,
            },
            user_agent,
            self.headers,
        );
        transport.before_send = self.before_send;
        Ok(S::client(&root, http, transport))
    }
}

/// A caller's change to the HTTP client the SDK builds.
#[derive(Clone)]
struct AdjustHttp(
    std::sync::Arc<dyn Fn(reqwest::ClientBuilder) -> reqwest::ClientBuilder + Send + Sync>,
);

/// A reqwest client builder with the SDK's TLS (its crypto provider, the
/// system's root certificates), for a client of your own to pass to
/// [`ClientBuilder::with_reqwest_client`].
pub fn http_client_builder() -> Result<reqwest::ClientBuilder, BuildError> {
    crate::tls::configure(reqwest::Client::builder(), &[])
}

/// The server's root from a URL given as the root or as the service's URL:
/// `http://host`, `http://host/`, `http://host/v2` and `http://host/v2/`
/// give `http://host` for the pet store. A server behind a path
/// (`https://example.com/pets/v2`) keeps it.
fn root_url(given: &str, service_path: &str) -> Result<String, BuildError> {
    let bad = |why: String| BuildError::Url {
        url: given.to_owned(),
        why,
    };
    let url = reqwest::Url::parse(given.trim())
        .map_err(|e| bad(format!("it is not an http:// or https:// URL ({e})")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(bad("it must start with http:// or https://".to_owned()));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(bad("it must have no query (?) or fragment (#)".to_owned()));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(bad(
            "credentials do not go in the URL; use the builder's credential methods".to_owned(),
        ));
    }
    let path = url.path().trim_end_matches('/');
    let root_path = if path.is_empty() {
        ""
    } else if let Some(root) = path.strip_suffix(service_path) {
        root
    } else {
        return Err(bad(format!(
            "its path {path} is neither the server's root nor ends with this service's path {service_path}"
        )));
    };
    let origin = url.origin().ascii_serialization();
    Ok(format!("{origin}{root_path}"))
}

/// An environment variable's value, if set and not empty.
pub fn variable(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// The server URL from `PETSTORE_PORTFOLIO_URL`.
pub fn url_from_env() -> Result<String, BuildError> {
    variable(SERVER_URL_VARIABLE).ok_or(BuildError::MissingVariable(SERVER_URL_VARIABLE))
}

/// The environment variable that names the server, for `from_env`.
pub const SERVER_URL_VARIABLE: &str = "PETSTORE_PORTFOLIO_URL";

#[cfg(test)]
mod tests {
    #[test]
    fn the_server_url_may_name_the_service_or_not() {
        use super::root_url;
        for given in [
            "http://pets.example",
            "http://pets.example/",
            "http://pets.example/v2",
            "http://pets.example/v2/",
        ] {
            assert_eq!(root_url(given, "/v2").unwrap(), "http://pets.example");
        }
        assert_eq!(
            root_url("https://h.example/api/", "/api").unwrap(),
            "https://h.example"
        );
        assert_eq!(
            root_url("https://h.example/pets/v2", "/v2").unwrap(),
            "https://h.example/pets"
        );
        for (given, why) in [
            (
                "http://pets.example/api",
                "ends with this service's path /v2",
            ),
            ("http://pets.example/v2?x=1", "no query"),
            ("ftp://pets.example", "http://"),
            ("http://u:p@pets.example", "credentials"),
        ] {
            let error = root_url(given, "/v2").unwrap_err().to_string();
            assert!(error.contains(why), "{given}: {error}");
        }
    }
}
