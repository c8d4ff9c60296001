//! The one client builder both services share: the server's root, a
//! timeout, and the credentials sent with every request. Each service's
//! module names it `ClientBuilder` and adds the credentials it accepts.

use std::fmt;
use std::marker::PhantomData;
use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue, InvalidHeaderValue};

/// A service the SDK has a client for.
pub trait Service {
    /// The generated client.
    type Client;
    /// Where the server mounts the service (`/v2`), or `""` when its paths
    /// are absolute (`/api/...`).
    const BASE_PATH: &'static str;
    fn client(base_url: &str, http: reqwest::Client) -> Self::Client;
}

/// Builds a client of service `S` for a server, with optional credentials.
pub struct ClientBuilder<S> {
    server_url: String,
    timeout: Duration,
    /// Header name and value; the values are secrets.
    credentials: Vec<(HeaderName, String)>,
    service: PhantomData<S>,
}

impl<S> Clone for ClientBuilder<S> {
    fn clone(&self) -> Self {
        Self {
            server_url: self.server_url.clone(),
            timeout: self.timeout,
            credentials: self.credentials.clone(),
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
            service: PhantomData,
        }
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

    pub fn build(self) -> Result<S::Client, BuildError> {
        let mut headers = HeaderMap::new();
        for (name, value) in self.credentials {
            let mut value = HeaderValue::from_str(&value).map_err(BuildError::Header)?;
            value.set_sensitive(true);
            headers.insert(name, value);
        }
        let http = reqwest::Client::builder()
            .default_headers(headers)
            .timeout(self.timeout)
            .build()
            .map_err(BuildError::Http)?;
        let base = format!("{}{}", self.server_url.trim_end_matches('/'), S::BASE_PATH);
        Ok(S::client(&base, http))
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

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
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

#[cfg(test)]
mod tests {
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
    }
}
