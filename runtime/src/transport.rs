//! What each generated client carries besides its HTTP client (progenitor's
//! "inner" value), and the hooks that use it on every call: credentials, the
//! retry policy, a per-call timeout, and idempotency keys for the
//! operations that take them.

use std::time::{Duration, Instant};

use reqwest::header::{HeaderName, HeaderValue, USER_AGENT};
use reqwest::{Method, StatusCode};

use crate::auth::Credentials;
use crate::error::{Error, STOPPED_MARK};
use crate::observe;
use crate::retry::RetryPolicy;
use crate::trace::{TRACEPARENT, Trace};

/// The header that makes a retried `POST` safe.
pub const IDEMPOTENCY_KEY: HeaderName = HeaderName::from_static("idempotency-key");

/// Credentials, retries and timeouts of a client (see
/// [`ClientBuilder`](crate::builder::ClientBuilder)).
#[derive(Debug, Clone)]
pub struct Transport {
    pub(crate) credentials: Credentials,
    #[doc(hidden)]
    pub retry: RetryPolicy,
    /// Each attempt's time limit, when the call sets one.
    #[doc(hidden)]
    pub timeout: Option<Duration>,
    /// Each attempt's time limit otherwise (the builder's).
    pub(crate) attempt_timeout: Duration,
    /// The operations (progenitor's snake-case ids) that take an
    /// `Idempotency-Key`.
    pub(crate) idempotent: &'static [&'static str],
    /// The caller's trace, which every request continues
    /// (`with_traceparent`); none: each request starts one.
    #[doc(hidden)]
    pub trace: Option<Trace>,
    /// What every request says it comes from.
    pub(crate) user_agent: HeaderValue,
    /// Headers every request carries (the builder's `default_header`).
    pub(crate) headers: Vec<(HeaderName, HeaderValue)>,
    /// Each operation's route template under the server's root
    /// (progenitor's snake-case ids), for its call's span.
    pub(crate) routes: &'static [OperationRoute],
    /// The document's version the client speaks, and the other one the
    /// server last named in `API-Version`, if it named another (for
    /// messages about answers the client cannot read).
    pub(crate) version: &'static str,
    pub(crate) server_version: std::sync::Arc<std::sync::Mutex<Option<String>>>,
    /// The caller's look at each request before it leaves (the builder's
    /// `before_send`).
    pub(crate) before_send: Option<BeforeSend>,
}

/// A caller's hook on each request, after the SDK has made it whole
/// (credentials, `Idempotency-Key`, `User-Agent`): it may change it, or stop
/// it with a reason ([`Error::Stopped`]).
#[derive(Clone)]
pub(crate) struct BeforeSend(pub(crate) std::sync::Arc<BeforeSendHook>);

/// The hook itself: `Err` says why the request must not leave.
pub(crate) type BeforeSendHook = dyn Fn(&mut reqwest::Request) -> Result<(), String> + Send + Sync;

impl std::fmt::Debug for BeforeSend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BeforeSend(..)")
    }
}

/// Why [`Transport::prepare`] did not let a request go.
#[derive(Debug)]
#[doc(hidden)]
pub enum NotSent {
    Token(crate::auth::TokenError),
    Stopped(String),
}

impl std::fmt::Display for NotSent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotSent::Token(e) => e.fmt(f),
            NotSent::Stopped(why) => write!(f, "{STOPPED_MARK}{why}"),
        }
    }
}

/// What the SDK's requests say they come from, unless the caller names
/// itself first (`ClientBuilder::user_agent`).
pub const SDK_USER_AGENT: &str = concat!(
    "petstore-portfolio-client/",
    env!("CARGO_PKG_VERSION"),
    " (",
    env!("BUILT_FROM_COMMIT"),
    ")"
);

impl Transport {
    pub(crate) fn new(
        credentials: Credentials,
        retry: RetryPolicy,
        attempt_timeout: Duration,
        service: ServiceInfo,
        user_agent: HeaderValue,
        headers: Vec<(HeaderName, HeaderValue)>,
    ) -> Self {
        Transport {
            credentials,
            retry,
            timeout: None,
            attempt_timeout,
            idempotent: service.idempotent,
            trace: None,
            user_agent,
            headers,
            routes: service.routes,
            version: service.version,
            server_version: std::sync::Arc::default(),
            before_send: None,
        }
    }

    /// The route template of `operation` (`/v2/pet/{petId}`), for its span.
    fn route(&self, operation: &str) -> &'static str {
        self.routes
            .iter()
            .find(|route| route.operation == operation)
            .map_or("-", |route| route.template)
    }

    /// Before a request leaves: its credentials, and an idempotency key
    /// when its operation takes one and the caller gave none. (Its time
    /// limit is set per attempt, by [`Transport::execute`].)
    #[doc(hidden)]
    pub async fn prepare(
        &self,
        http: &reqwest::Client,
        request: &mut reqwest::Request,
        operation: &str,
    ) -> Result<(), NotSent> {
        if !request.headers().contains_key(TRACEPARENT) {
            request
                .headers_mut()
                .insert(TRACEPARENT, Trace::header(self.trace.as_ref()));
        }
        if !request.headers().contains_key(USER_AGENT) {
            request
                .headers_mut()
                .insert(USER_AGENT, self.user_agent.clone());
        }
        for (name, value) in &self.headers {
            if !request.headers().contains_key(name) {
                request.headers_mut().insert(name.clone(), value.clone());
            }
        }
        self.credentials
            .apply(http, request)
            .await
            .map_err(NotSent::Token)?;
        if self.idempotent.contains(&operation) && !request.headers().contains_key(IDEMPOTENCY_KEY)
        {
            let key = HeaderValue::from_str(&new_key()).unwrap_or(HeaderValue::from_static("-"));
            request.headers_mut().insert(IDEMPOTENCY_KEY, key);
        }
        match &self.before_send {
            Some(BeforeSend(hook)) => hook(request).map_err(NotSent::Stopped),
            None => Ok(()),
        }
    }

    /// Keeps the version the server named in `API-Version`, when it is not
    /// the client's.
    fn note_server_version(&self, headers: &reqwest::header::HeaderMap) {
        let named = headers
            .get("api-version")
            .and_then(|v| v.to_str().ok())
            .filter(|v| *v != self.version);
        if let Some(named) = named {
            let mut kept = self
                .server_version
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if kept.as_deref() != Some(named) {
                *kept = Some(named.to_owned());
            }
        }
    }

    /// Sends a request of `operation`, trying again as the retry policy
    /// allows, inside the call's span ([`observe`]).
    #[doc(hidden)]
    pub async fn execute(
        &self,
        http: &reqwest::Client,
        request: reqwest::Request,
        operation: &str,
    ) -> reqwest::Result<reqwest::Response> {
        let span = observe::call_span(operation, request.method(), self.route(operation));
        let started = Instant::now();
        let (outcome, attempts) =
            observe::in_span(&span, self.attempts(http, request, started)).await;
        observe::ended(&span, &outcome, attempts, started.elapsed());
        if let Ok(response) = &outcome {
            observe::deprecated(operation, response.headers());
            self.note_server_version(response.headers());
        }
        outcome
    }

    /// The attempts of one call: the last outcome, and how many were made.
    async fn attempts(
        &self,
        http: &reqwest::Client,
        request: reqwest::Request,
        started: Instant,
    ) -> (reqwest::Result<reqwest::Response>, u32) {
        let retriable = retriable_method(&request);
        let mut attempt = 1;
        let mut request = request;
        let attempt_limit = self.timeout.unwrap_or(self.attempt_timeout);
        loop {
            // No attempt runs past the deadline.
            let left = self.retry.total().saturating_sub(started.elapsed());
            *request.timeout_mut() = Some(attempt_limit.min(left.max(Duration::from_millis(1))));
            let spare = (attempt < self.retry.attempts())
                .then(|| request.try_clone())
                .flatten();
            let outcome = self.credentials.execute(http, request).await;
            let Some(next) = spare else {
                return (outcome, attempt);
            };
            let (wait, why) = match &outcome {
                Ok(response) if retriable && worth_retrying(response) => (
                    self.retry
                        .delay(attempt, crate::auth::retry_after(response.headers())),
                    response.status().to_string(),
                ),
                Err(e) if e.is_connect() || (retriable && (e.is_timeout() || e.is_request())) => {
                    let why = if e.is_connect() {
                        "cannot connect"
                    } else if e.is_timeout() {
                        "timed out"
                    } else {
                        "the connection broke"
                    };
                    (self.retry.delay(attempt, None), why.to_owned())
                }
                _ => return (outcome, attempt),
            };
            if started.elapsed() + wait > self.retry.total() {
                return (outcome, attempt);
            }
            drop(outcome);
            observe::retrying(attempt, wait, &why);
            tokio::time::sleep(wait).await;
            request = next;
            attempt += 1;
        }
    }
}

/// What a service's generated client tells its transport about the
/// service.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ServiceInfo {
    pub(crate) idempotent: &'static [&'static str],
    pub(crate) routes: &'static [OperationRoute],
    pub(crate) version: &'static str,
}

/// One operation of a service: the SDK method's name, its HTTP method and
/// its route template under the server's root, as the documents write it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OperationRoute {
    /// The method of the client (`get_pet_by_id`): the operationId in
    /// snake case.
    pub operation: &'static str,
    /// `GET`, `POST`, ...
    pub method: &'static str,
    /// `/v2/pet/{petId}`
    pub template: &'static str,
}

/// `GET`, `PUT`, `DELETE` (and `HEAD`, `OPTIONS`) may be sent again; a
/// `POST` only with an idempotency key.
fn retriable_method(request: &reqwest::Request) -> bool {
    match *request.method() {
        Method::GET | Method::PUT | Method::DELETE | Method::HEAD | Method::OPTIONS => true,
        _ => request.headers().contains_key(IDEMPOTENCY_KEY),
    }
}

/// An answer that says "later": over a limit, a gateway's trouble, the
/// service unavailable, or the same idempotency key still running.
fn worth_retrying(response: &reqwest::Response) -> bool {
    match response.status() {
        StatusCode::TOO_MANY_REQUESTS
        | StatusCode::BAD_GATEWAY
        | StatusCode::SERVICE_UNAVAILABLE
        | StatusCode::GATEWAY_TIMEOUT => true,
        StatusCode::CONFLICT => response
            .headers()
            .contains_key(reqwest::header::RETRY_AFTER),
        _ => false,
    }
}

/// A fresh idempotency key: 128 random bits, as hex.
fn new_key() -> String {
    format!("{:016x}{:016x}", fastrand::u64(..), fastrand::u64(..))
}

/// Runs a generated operation: gets a bearer token first when the client
/// uses client credentials (so that a failure to get one is a typed
/// error), then turns what the generated code returned into the SDK's
/// [`Error`].
#[doc(hidden)]
pub async fn finish<T, E: serde::Serialize>(
    transport: &Transport,
    http: &reqwest::Client,
    operation: &'static str,
    call: impl Future<Output = Result<T, progenitor_client::Error<E>>>,
) -> Result<T, Error> {
    transport
        .credentials
        .ready(http, &Trace::header(transport.trace.as_ref()))
        .await?;
    match call.await {
        Ok(value) => Ok(value),
        Err(error) => match Error::from_generated(operation, error).await {
            // An answer the client cannot read: say so when the server
            // speaks another version of the document.
            Error::Decode { status, message } => {
                let server = transport
                    .server_version
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .clone();
                let message = match server {
                    Some(server) => format!(
                        "{message} (this client speaks version {} of the document, \
                         the server version {server})",
                        transport.version
                    ),
                    None => message,
                };
                Err(Error::Decode { status, message })
            }
            error => Err(error),
        },
    }
}

/// What each service's generated `Client` gets by hand: the hooks that put
/// the transport to work on every request, and per-call settings.
#[macro_export]
macro_rules! service_client {
    () => {
        /// Puts the builder's credentials on every request and retries as
        /// its policy allows (see [`petstore_portfolio_runtime::transport`]).
        impl $crate::progenitor_client::ClientHooks<$crate::transport::Transport> for Client {
            async fn pre<E>(
                &self,
                request: &mut reqwest::Request,
                info: &$crate::progenitor_client::OperationInfo,
            ) -> Result<(), $crate::progenitor_client::Error<E>> {
                self.inner
                    .prepare(&self.client, request, info.operation_id)
                    .await
                    .map_err(|e| $crate::progenitor_client::Error::Custom(e.to_string()))
            }

            async fn exec(
                &self,
                request: reqwest::Request,
                info: &$crate::progenitor_client::OperationInfo,
            ) -> reqwest::Result<reqwest::Response> {
                self.inner
                    .execute(&self.client, request, info.operation_id)
                    .await
            }
        }

        impl Client {
            /// A client like this one (the same connections and
            /// credentials) whose calls give up on each attempt after
            /// `timeout`: a per-call time limit.
            ///
            /// ```no_run
            /// # async fn demo(client: &petstore_portfolio_client::petstore::Client) -> Result<(), petstore_portfolio_client::Error> {
            /// use std::time::Duration;
            /// use petstore_portfolio_client::RetryPolicy;
            ///
            /// let quick = client.with_timeout(Duration::from_millis(500));
            /// let once = client.with_retry(RetryPolicy::no_retries());
            /// # let _ = (quick, once);
            /// # Ok(()) }
            /// ```
            pub fn with_timeout(&self, timeout: std::time::Duration) -> Client {
                self.with_transport(|transport| transport.timeout = Some(timeout))
            }

            /// A client like this one with another retry policy.
            pub fn with_retry(&self, policy: $crate::RetryPolicy) -> Client {
                self.with_transport(|transport| transport.retry = policy)
            }

            /// A client like this one whose requests (and the token
            /// fetches they need) continue the trace of `traceparent`, a
            /// W3C Trace Context header value such as your own server
            /// received: the server's logs then carry your trace id. A value
            /// that is not a valid `traceparent` is ignored, and each
            /// request starts a trace of its own, as without this.
            ///
            /// ```no_run
            /// # fn demo(client: &petstore_portfolio_client::petstore::Client) {
            /// let traced = client
            ///     .with_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
            /// # let _ = traced;
            /// # }
            /// ```
            pub fn with_traceparent(&self, traceparent: &str) -> Client {
                let trace = $crate::trace::Trace::parse(traceparent);
                self.with_transport(|transport| transport.trace = trace)
            }

            /// Which contract the server speaks, against the one this client
            /// was generated from: the same profile, a compatible one (every
            /// operation this client knows is served as it knows it), or an
            /// incompatible one, naming the operations that differ. See
            /// `petstore_portfolio_runtime::contract`.
            pub async fn check_contract(
                &self,
            ) -> Result<$crate::contract::ContractCheck, $crate::Error> {
                // The client's URL is the server's root, or the root and the
                // service's path.
                let root = self
                    .baseurl
                    .strip_suffix(BASE_PATH)
                    .unwrap_or(&self.baseurl);
                $crate::contract::check(
                    &self.client,
                    root,
                    $crate::contract::Contract {
                        profile_path: PROFILE_PATH,
                        profile_digest: PROFILE_DIGEST,
                        version: DOCUMENT_VERSION,
                        routes: OPERATION_ROUTES,
                    },
                )
                .await
            }

            fn with_transport(
                &self,
                change: impl FnOnce(&mut $crate::transport::Transport),
            ) -> Client {
                let mut transport = self.inner.clone();
                change(&mut transport);
                Client::new_with_client(&self.baseurl, self.client.clone(), transport)
            }
        }
    };
}
