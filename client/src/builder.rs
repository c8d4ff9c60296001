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
use crate::transport::Transport;

/// A service the SDK has a client for.
pub trait Service {
    /// The generated client.
    type Client;
    /// Where the server mounts the service (`/v2`, `/api`).
    const BASE_PATH: &'static str;
    /// The operations that take an `Idempotency-Key`.
    const IDEMPOTENT_OPERATIONS: &'static [&'static str];
    /// The client for the server whose root (without the service's path)
    /// is `root_url`.
    fn client(root_url: &str, http: reqwest::Client, transport: Transport) -> Self::Client;
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
            service: PhantomData,
        }
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
    /// reqwest's and our `Debug` output).
    pub(crate) fn credential(mut self, name: HeaderName, value: String) -> Self {
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
    /// the server's root or the service's path, a credential is not a
    /// valid header value, or a root certificate is not PEM.
    pub fn build(self) -> Result<S::Client, BuildError> {
        let root = root_url(&self.server_url, S::BASE_PATH)?;
        let mut headers = Vec::new();
        for (name, value) in self.credentials {
            let mut value = HeaderValue::from_str(&value).map_err(BuildError::Header)?;
            value.set_sensitive(true);
            headers.push((name, value));
        }
        let tokens = self
            .client_credentials
            .map(|c| TokenSource::new(&root, c.client_id, c.client_secret, c.scope));
        let credentials = Credentials::new(headers, tokens);
        let http = reqwest::Client::builder()
            .timeout(self.timeout)
            .connect_timeout(self.connect_timeout);
        let http = crate::tls::configure(http, &self.roots)?;
        let http = http.build().map_err(BuildError::Http)?;
        let transport = Transport::new(
            credentials,
            self.retry,
            self.timeout,
            S::IDEMPOTENT_OPERATIONS,
        );
        Ok(S::client(&root, http, transport))
    }
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
pub(crate) fn variable(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// The server URL from `PETSTORE_PORTFOLIO_URL`.
pub(crate) fn url_from_env() -> Result<String, BuildError> {
    variable(SERVER_URL_VARIABLE).ok_or(BuildError::MissingVariable(SERVER_URL_VARIABLE))
}

/// The environment variable that names the server, for `from_env`.
pub const SERVER_URL_VARIABLE: &str = "PETSTORE_PORTFOLIO_URL";

#[cfg(test)]
mod tests {
    use super::BuildError;
    use crate::{petstore, portfolio};

    #[test]
    fn debug_output_names_credentials_but_never_shows_them() {
        let petstore = petstore::ClientBuilder::new("http://127.0.0.1:1")
            .api_key("s3cret-key")
            .bearer_token("s3cret-token");
        let portfolio = portfolio::ClientBuilder::new("http://127.0.0.1:1").api_key("s3cret-key");
        let printed = format!("{petstore:?} {portfolio:?}");
        assert!(!printed.contains("s3cret"), "{printed}");
        assert!(printed.contains("api_key: ***"), "{printed}");
        let clients = format!(
            "{:?} {:?}",
            petstore.build().unwrap(),
            portfolio.build().unwrap()
        );
        assert!(!clients.contains("s3cret"), "{clients}");
    }

    #[test]
    fn a_url_without_an_http_scheme_is_refused_with_a_reason() {
        let error = petstore::ClientBuilder::new("127.0.0.1:8080")
            .build()
            .err()
            .map(|e| e.to_string());
        assert!(
            error
                .as_deref()
                .is_some_and(|e| e.contains("http://") && e.contains("https://")),
            "{error:?}"
        );
        assert!(
            petstore::ClientBuilder::new("https://pets.example")
                .build()
                .is_ok()
        );
    }

    #[test]
    fn a_root_certificate_that_is_not_pem_is_refused() {
        let built = portfolio::ClientBuilder::new("https://portfolio.example")
            .add_root_certificate(b"not a certificate".to_vec())
            .build();
        assert!(matches!(built, Err(BuildError::Certificate(_))));
    }

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

    /// The variables `from_env` reads; each case starts without them.
    const VARIABLES: [&str; 9] = [
        "PETSTORE_PORTFOLIO_URL",
        "PETSTORE_API_KEY",
        "PETSTORE_BEARER_TOKEN",
        "PETSTORE_USERNAME",
        "PETSTORE_PASSWORD",
        "PORTFOLIO_API_KEY",
        "PORTFOLIO_BEARER_TOKEN",
        "PORTFOLIO_CLIENT_ID",
        "PORTFOLIO_CLIENT_SECRET",
    ];

    /// Runs in a child process (the environment is the process's own):
    /// prints what `from_env` made of it.
    #[test]
    fn from_env_child() {
        let Ok(service) = std::env::var("FROM_ENV_SERVICE") else {
            return;
        };
        let made = match service.as_str() {
            "petstore" => petstore::ClientBuilder::from_env().map(|b| format!("{b:?}")),
            _ => portfolio::ClientBuilder::from_env().map(|b| format!("{b:?}")),
        };
        match made {
            Ok(builder) => println!("FROM_ENV OK {builder}"),
            Err(error) => println!("FROM_ENV ERR {error}"),
        }
    }

    fn from_env(service: &str, variables: &[(&str, &str)]) -> String {
        let mut child = std::process::Command::new(std::env::current_exe().unwrap());
        child.args(["builder::tests::from_env_child", "--exact", "--nocapture"]);
        for name in VARIABLES {
            child.env_remove(name);
        }
        child
            .env("FROM_ENV_SERVICE", service)
            .envs(variables.iter().copied());
        let output = child.output().unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        stdout
            .lines()
            .find_map(|line| line.strip_prefix("FROM_ENV "))
            .unwrap_or_else(|| panic!("the child printed nothing: {stdout}"))
            .to_owned()
    }

    #[test]
    fn from_env_reads_the_server_and_credentials_and_names_what_is_missing() {
        let missing = from_env("petstore", &[]);
        assert_eq!(
            missing,
            "ERR the environment variable PETSTORE_PORTFOLIO_URL is not set"
        );
        let url = ("PETSTORE_PORTFOLIO_URL", "http://pets.example/v2");
        let keyed = from_env("petstore", &[url, ("PETSTORE_API_KEY", "s3cret")]);
        assert!(keyed.starts_with("OK "), "{keyed}");
        assert!(
            keyed.contains("api_key: ***") && !keyed.contains("s3cret"),
            "{keyed}"
        );
        let half = from_env("petstore", &[url, ("PETSTORE_USERNAME", "user1")]);
        assert_eq!(
            half,
            "ERR the environment variable PETSTORE_PASSWORD is not set"
        );
        let url = ("PETSTORE_PORTFOLIO_URL", "https://site.example/api/");
        let half = from_env("portfolio", &[url, ("PORTFOLIO_CLIENT_ID", "pc_1")]);
        assert_eq!(
            half,
            "ERR the environment variable PORTFOLIO_CLIENT_SECRET is not set"
        );
        let both = from_env(
            "portfolio",
            &[
                url,
                ("PORTFOLIO_CLIENT_ID", "pc_1"),
                ("PORTFOLIO_CLIENT_SECRET", "s3cret"),
            ],
        );
        assert!(both.contains("pc_1") && !both.contains("s3cret"), "{both}");
    }
}
