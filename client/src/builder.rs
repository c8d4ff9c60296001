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

use reqwest::header::{HeaderName, HeaderValue, InvalidHeaderValue};

use crate::auth::{Credentials, TokenSource};

/// A service the SDK has a client for.
pub trait Service {
    /// The generated client.
    type Client;
    /// Where the server mounts the service (`/v2`), or `""` when its paths
    /// are absolute (`/api/...`).
    const BASE_PATH: &'static str;
    fn client(base_url: &str, http: reqwest::Client, credentials: Credentials) -> Self::Client;
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
    /// `server_url` is the server's root, e.g. `http://127.0.0.1:8080`; the
    /// service's base path is added.
    pub fn new(server_url: impl Into<String>) -> Self {
        Self {
            server_url: server_url.into(),
            timeout: Duration::from_secs(30),
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

    /// Gives up on a request after this long (default 30 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
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

    /// The client. Fails if the URL is not `http://` or `https://`, a
    /// credential is not a valid header value, or a root certificate is not
    /// PEM.
    pub fn build(self) -> Result<S::Client, BuildError> {
        let scheme = self.server_url.split_once("://").map(|(scheme, _)| scheme);
        if !matches!(scheme, Some("http" | "https")) {
            return Err(BuildError::Url(self.server_url));
        }
        // reqwest's rustls takes the process's crypto provider: ring, unless
        // the program chose one already (then this does nothing).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut headers = Vec::new();
        for (name, value) in self.credentials {
            let mut value = HeaderValue::from_str(&value).map_err(BuildError::Header)?;
            value.set_sensitive(true);
            headers.push((name, value));
        }
        let tokens = self
            .client_credentials
            .map(|c| TokenSource::new(&self.server_url, c.client_id, c.client_secret, c.scope));
        let credentials = Credentials::new(headers, tokens);
        let mut http = reqwest::Client::builder().timeout(self.timeout);
        for pem in &self.roots {
            let certificates = reqwest::Certificate::from_pem_bundle(pem)
                .map_err(|e| BuildError::Certificate(e.to_string()))?;
            if certificates.is_empty() {
                return Err(BuildError::Certificate(
                    "no BEGIN CERTIFICATE block".to_owned(),
                ));
            }
            for certificate in certificates {
                http = http.add_root_certificate(certificate);
            }
        }
        let http = http.build().map_err(BuildError::Http)?;
        let base = format!("{}{}", self.server_url.trim_end_matches('/'), S::BASE_PATH);
        Ok(S::client(&base, http, credentials))
    }
}

/// Why a client could not be built.
#[derive(Debug)]
pub enum BuildError {
    /// The server URL is not `http://...` or `https://...`.
    Url(String),
    /// A credential is not a valid header value.
    Header(InvalidHeaderValue),
    /// A root certificate is not PEM (why).
    Certificate(String),
    /// The HTTP client could not be set up.
    Http(reqwest::Error),
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::Url(url) => write!(
                f,
                "the server URL must start with http:// or https://, not {url:?}"
            ),
            BuildError::Header(_) => f.write_str("a credential is not a valid HTTP header value"),
            BuildError::Certificate(e) => write!(f, "a root certificate is not PEM: {e}"),
            BuildError::Http(e) => write!(f, "cannot build the HTTP client: {e}"),
        }
    }
}

impl std::error::Error for BuildError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BuildError::Url(_) => None,
            BuildError::Header(e) => Some(e),
            BuildError::Certificate(_) => None,
            BuildError::Http(e) => Some(e),
        }
    }
}

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
                .is_some_and(|e| e.contains("http:// or https://")),
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
}
