//! Idempotency keys (IETF draft "The Idempotency-Key HTTP Header Field"):
//! a client that sends `Idempotency-Key: <key>` with a request that creates
//! something may send it again (a dropped connection, a timeout) without
//! creating it twice. Hand-written because no tower or axum layer keeps
//! such keys.
//!
//! For each caller and key the first *successful* answer (status, the
//! headers that describe it, the body) is kept for
//! `http.idempotency_keys_kept_secs` (24 hours); a repeat with the same
//! request replays it with `Idempotency-Replayed: true`. The same key with
//! another request (method, path, query or body) is 422; a repeat while the
//! first is still running is 409 with `Retry-After: 1`. An error answer
//! changed nothing, so it is not kept: a repeat runs again. Keys live in
//! the database, so they hold across restarts and across replicas on
//! PostgreSQL; expired ones are swept.
//!
//! The caller is the credential the request carries (a hash of it), or the
//! client's address when it carries none: one caller cannot replay
//! another's answer. Kept bodies are sealed (ChaCha20-Poly1305) under a key
//! derived from the same credential, so that a created API key's secret
//! cannot be read from the table.
//!
//! Which operations take a key is what their `#[utoipa::path]` says: those
//! that declare the [`IdempotencyKeyHeader`] parameter; their handlers read
//! their bodies through [`Idempotent`]. The key is looked at only once the
//! request has passed everything its handler checks before its body (its
//! credentials, above all): a request that would be refused without a key
//! is refused the same way with one, before anything is read, replayed or
//! claimed.

pub(crate) mod db;

use std::collections::{HashMap, HashSet};
use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{MatchedPath, Request};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use chacha20poly1305::aead::{Aead as _, KeyInit as _};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};
use futures::FutureExt as _;
use futures::future::BoxFuture;
use serde::Deserialize;
use sha2::{Digest as _, Sha256};
use tower::ServiceExt as _;
use utoipa::IntoParams;
use utoipa::openapi::path::ParameterIn;
use utoipa::openapi::{OpenApi, RefOr};

use crate::core::clock;
use crate::http::error::Error;
use crate::storage::Database;

/// The request header that carries the key.
pub(crate) const IDEMPOTENCY_KEY: HeaderName = HeaderName::from_static("idempotency-key");
/// The response header that marks a replayed answer.
pub(crate) const IDEMPOTENCY_REPLAYED: HeaderName = HeaderName::from_static("idempotency-replayed");
/// The longest key accepted, in characters.
pub(crate) const MAX_KEY_CHARS: usize = 255;
/// The largest answer kept for replay (no creating operation answers
/// anything near it; a larger one is a 500, and the key is freed).
const MAX_KEPT_BODY: usize = 16 * 1024 * 1024;

/// The `Idempotency-Key` header, as the operations that take it declare it
/// (`params(IdempotencyKeyHeader)`).
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Header)]
pub(crate) struct IdempotencyKeyHeader {
    /// A key of the client's choosing (a random UUID is a good one), 1 to
    /// 255 printable ASCII characters, sent again with every retry of the
    /// same request. The first successful answer is kept 24 hours and
    /// replayed, with `Idempotency-Replayed: true`, to a retry with the same
    /// key; the same key with another request is 422, and a retry while
    /// the first is still running 409.
    #[serde(rename = "Idempotency-Key")]
    #[param(
        rename = "Idempotency-Key",
        min_length = 1,
        max_length = 255,
        pattern = "^[!-~]([ -~]*[!-~])?$"
    )]
    #[allow(dead_code)] // The layer reads the header; this field documents it.
    pub(crate) idempotency_key: Option<String>,
}

/// What the layer needs: the database, which operations take keys, and
/// how long answers are kept.
#[derive(Clone)]
pub(crate) struct Idempotency {
    inner: Arc<Inner>,
}

struct Inner {
    db: Database,
    /// By method, the route templates (as the router matches them) of the
    /// operations that take a key.
    operations: HashMap<Method, HashSet<String>>,
    /// The headers that carry the service's credentials: the caller.
    credential_headers: &'static [HeaderName],
    /// How long the first request may run before a retry may take the key
    /// over (its replica died): the request timeout and a margin.
    lease: Duration,
    /// How long a request with a key may run: the request timeout, so that
    /// it has ended before its lease does.
    run_for: Duration,
    kept: Duration,
    /// The largest body any of the service's routes accepts.
    max_body: usize,
}

impl std::fmt::Debug for Idempotency {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Idempotency")
            .field("operations", &self.operations())
            .finish_non_exhaustive()
    }
}

impl Idempotency {
    /// The layer's state for a service whose annotated document is `api`
    /// and whose routes are nested under `prefix` (`/v2`, or `""`).
    pub(crate) fn new(
        db: Database,
        api: &OpenApi,
        prefix: &str,
        credential_headers: &'static [HeaderName],
        request_timeout: Duration,
        kept: Duration,
        max_body: usize,
    ) -> Self {
        Idempotency {
            inner: Arc::new(Inner {
                db,
                operations: operations_taking_keys(api, prefix),
                credential_headers,
                lease: request_timeout + Duration::from_secs(5),
                run_for: request_timeout,
                kept,
                max_body,
            }),
        }
    }

    /// How many route templates take keys (for tests).
    pub(crate) fn operations(&self) -> usize {
        self.inner.operations.values().map(HashSet::len).sum()
    }
}

/// The operations of `api` that declare the `Idempotency-Key` header, as
/// (method, route template the router matches, prefix included).
fn operations_taking_keys(api: &OpenApi, prefix: &str) -> HashMap<Method, HashSet<String>> {
    let mut operations: HashMap<Method, HashSet<String>> = HashMap::new();
    for (path, item) in &api.paths.paths {
        let methods = [
            (Method::GET, &item.get),
            (Method::PUT, &item.put),
            (Method::POST, &item.post),
            (Method::DELETE, &item.delete),
            (Method::PATCH, &item.patch),
        ];
        for (method, operation) in methods {
            let takes_key = operation
                .as_ref()
                .and_then(|op| op.parameters.as_ref())
                .is_some_and(|parameters| {
                    parameters.iter().any(|p| {
                        matches!(p, RefOr::T(p) if p.parameter_in == ParameterIn::Header
                            && p.name.eq_ignore_ascii_case(IDEMPOTENCY_KEY.as_str()))
                    })
                });
            if takes_key {
                // The router may match the template with or without the
                // prefix it is nested under.
                let templates = operations.entry(method).or_default();
                templates.insert(path.clone());
                templates.insert(format!("{prefix}{path}"));
            }
        }
    }
    operations
}

/// The layer: a request that carries a key for an operation that takes one
/// runs in a task of its own, and its answer is kept when its handler
/// claimed the key ([`Idempotent`]). A tower layer rather than `from_fn`:
/// most requests carry no key and go straight on, with no box, no clone of
/// the routes inside and no future of its own (`from_fn` costs each
/// request all three).
impl<S> tower::Layer<S> for Idempotency {
    type Service = KeepAnswers<S>;

    fn layer(&self, inner: S) -> Self::Service {
        KeepAnswers {
            idempotency: self.clone(),
            inner,
        }
    }
}

/// [`Idempotency`] around the routes `S`.
#[derive(Clone)]
pub(crate) struct KeepAnswers<S> {
    idempotency: Idempotency,
    inner: S,
}

impl<S> std::fmt::Debug for KeepAnswers<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.idempotency.fmt(f)
    }
}

impl<S> tower::Service<Request> for KeepAnswers<S>
where
    S: tower::Service<Request, Response = Response, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future =
        futures::future::Either<S::Future, BoxFuture<'static, Result<Response, Infallible>>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        if !self.idempotency.takes_key(&request) {
            return futures::future::Either::Left(self.inner.call(request));
        }
        // The routes made ready are the ones that run; a clone stays.
        let clone = self.inner.clone();
        let ready = std::mem::replace(&mut self.inner, clone);
        let inner = self.idempotency.inner.clone();
        futures::future::Either::Right(Box::pin(run_keyed(inner, request, ready).map(Ok)))
    }
}

impl Idempotency {
    /// Whether `request` carries a key for an operation that takes one
    /// (once the route is known; on a request no route matched, never).
    fn takes_key(&self, request: &Request) -> bool {
        // Most requests carry no key: one header lookup, and on.
        request.headers().contains_key(IDEMPOTENCY_KEY)
            && request
                .extensions()
                .get::<MatchedPath>()
                .zip(self.inner.operations.get(request.method()))
                .is_some_and(|(route, templates)| templates.contains(route.as_str()))
    }
}

/// Runs a request that carries a key. Its handler's extractors judge its
/// credentials first, as without a key; only then does its body's
/// extractor ([`Idempotent`]) read the body and look the key up, answering
/// with the kept answer or claiming the key. Once the handler has answered,
/// a claimed key keeps the answer (a success) or is freed (an error).
///
/// The request runs in a task of its own: if the client goes away (the
/// connection dropped after the commit), the answer is still kept for its
/// retry. It runs no longer than the request timeout, so that it has ended
/// before its lease does and a retry may take the key over.
async fn run_keyed<S>(inner: Arc<Inner>, mut request: Request, routes: S) -> Response
where
    S: tower::Service<Request, Response = Response, Error = Infallible> + Send + 'static,
    S::Future: Send + 'static,
{
    let claimed = Claimed::default();
    request.extensions_mut().insert(KeyedRequest {
        inner: inner.clone(),
        claimed: claimed.clone(),
    });
    let run_for = inner.run_for;
    let task = tokio::spawn(crate::telemetry::within_request(async move {
        let handled = std::panic::AssertUnwindSafe(routes.oneshot(request)).catch_unwind();
        match tokio::time::timeout(run_for, handled).await {
            Ok(Ok(Ok(response))) => match claimed.take() {
                KeyState::Held(held) => held.keep(response).await,
                KeyState::Answered => response,
                KeyState::Unread => {
                    // Refused before its body was read (credentials, the
                    // path, `Accept`): the key was never looked at. A
                    // success here is a handler that forgot its keys.
                    if response.status().is_success() {
                        tracing::error!(
                            "an operation that takes Idempotency-Key answered without \
                             reading its body through Idempotent: its answer is not kept"
                        );
                    }
                    response
                }
            },
            Ok(Ok(Err(never))) => match never {},
            Ok(Err(_panic)) => {
                if let KeyState::Held(held) = claimed.take() {
                    held.release().await;
                }
                Error::internal("an idempotent request", "its handler panicked").into_response()
            }
            // Cut off: what it did is undone unless it committed. The key
            // stays taken until its lease ends; then a retry runs.
            Err(_) => Error::new(
                crate::http::error::ErrorCode::ServiceUnavailable,
                "the service could not answer in time",
            )
            .into_response(),
        }
    }));
    task.await
        .unwrap_or_else(|e| Error::internal("an idempotent request", e).into_response())
}

/// What [`run_keyed`] leaves in a request's extensions for its body's
/// extractor: where the keys are, and where to leave the key it claims.
#[derive(Clone)]
struct KeyedRequest {
    inner: Arc<Inner>,
    claimed: Claimed,
}

/// What a request's extractor did with its key, for [`run_keyed`] to settle
/// once the handler has answered.
#[derive(Clone, Default)]
struct Claimed(Arc<std::sync::Mutex<KeyState>>);

/// Where a request's key stands.
#[derive(Default)]
enum KeyState {
    /// Never looked at: the request was refused before its body was read
    /// (or its handler reads no [`Idempotent`] body).
    #[default]
    Unread,
    /// Looked at and answered without running the handler: replayed, 409,
    /// 422, or the body could not be read.
    Answered,
    /// Claimed: the handler runs, and its answer is kept or the key freed.
    Held(Held),
}

impl Claimed {
    fn set(&self, state: KeyState) {
        *self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = state;
    }

    fn take(&self) -> KeyState {
        std::mem::take(
            &mut *self
                .0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }
}

/// The body of an operation that takes idempotency keys, read by `B`.
///
/// As the last extractor of its handler, it runs after every extractor
/// that reads the request's parts, its credentials' included: a request
/// that is refused never reaches the keys and is never waited for, and a
/// credential no longer valid is refused before anything is replayed to
/// it. With a key, it reads the body, then answers with the kept answer
/// (`Idempotency-Replayed: true`), 409 (the first is still running) or
/// 422 (the key was used with another request), or claims the key and
/// hands the body to `B`. Without one, it is `B`.
#[derive(Debug)]
pub(crate) struct Idempotent<B>(pub(crate) B);

impl<S, B> axum::extract::FromRequest<S> for Idempotent<B>
where
    S: Send + Sync,
    B: axum::extract::FromRequest<S>,
    B::Rejection: IntoResponse,
{
    type Rejection = Response;

    async fn from_request(mut request: Request, state: &S) -> Result<Self, Response> {
        if let Some(keyed) = request.extensions_mut().remove::<KeyedRequest>() {
            let claimed = keyed.claimed.clone();
            request = claim_or_answer(keyed, request).await.inspect_err(|_| {
                // Answered from the key (replayed, 409, 422) or refused for
                // it: the handler does not run.
                claimed.set(KeyState::Answered);
            })?;
        }
        B::from_request(request, state)
            .await
            .map(Idempotent)
            .map_err(IntoResponse::into_response)
    }
}

/// The body of an operation that reads none (with [`Idempotent`]).
#[derive(Debug)]
pub(crate) struct NoBody;

impl<S: Send + Sync> axum::extract::FromRequest<S> for NoBody {
    type Rejection = Infallible;

    async fn from_request(_: Request, _: &S) -> Result<Self, Infallible> {
        Ok(NoBody)
    }
}

/// Claims the key of `request` (and returns the request, its body read,
/// for its extractor), or answers it: with the kept answer, 409, 422, or
/// the error that kept it from being read.
async fn claim_or_answer(keyed: KeyedRequest, request: Request) -> Result<Request, Response> {
    // A failure answers at once, in the service's error format.
    macro_rules! or_answer {
        ($result:expr) => {
            match $result {
                Ok(value) => value,
                Err(error) => return Err(Error::from(error).into_response()),
            }
        };
    }
    let inner = &keyed.inner;
    let Some(key) = or_answer!(key_of(request.headers())) else {
        return Ok(request);
    };
    let caller = Caller::of(inner.credential_headers, &request);
    let (parts, body) = request.into_parts();
    // The body is read here to tell a repeat from another request with the
    // same key, within the largest limit of the service's routes; the
    // route's own limit still applies when its extractor reads it.
    let body = or_answer!(read_body(body, inner.max_body).await);
    let fingerprint = fingerprint(&parts.method, &parts.uri, &parts.headers, &body);

    let now = clock::now_ms();
    if let Some(stored) = or_answer!(db::find(&inner.db, &caller.id, &key).await)
        && stored.expires_ms > now
    {
        if stored.fingerprint != fingerprint {
            return Err(reused_for_another_request());
        }
        match stored.state {
            db::State::Done(answer) => return Err(replay(&caller, &answer)),
            db::State::Running { lease_until_ms } if lease_until_ms > now => {
                return Err(still_running());
            }
            // Its request died with its replica: this one takes it over.
            db::State::Running { .. } => {}
        }
    }
    let holder = format!("{:032x}", rand::random::<u128>());
    let claim = db::Claim {
        caller: &caller.id,
        key: &key,
        fingerprint: &fingerprint,
        holder: &holder,
        lease_until_ms: now + millis(inner.lease),
        expires_ms: now + millis(inner.kept),
    };
    if !or_answer!(db::claim(&inner.db, &claim, now).await) {
        // Another request took it between the read and the claim.
        return Err(
            match or_answer!(db::find(&inner.db, &caller.id, &key).await) {
                Some(stored) if stored.fingerprint != fingerprint => reused_for_another_request(),
                Some(db::Stored {
                    state: db::State::Done(answer),
                    ..
                }) => replay(&caller, &answer),
                _ => still_running(),
            },
        );
    }
    keyed.claimed.set(KeyState::Held(Held {
        db: inner.db.clone(),
        caller,
        key,
        holder,
    }));
    Ok(Request::from_parts(parts, Body::from(body)))
}

/// A key this request holds: what it needs to keep its answer or free it.
struct Held {
    db: Database,
    caller: Caller,
    key: String,
    /// The claim's token: a request whose key was taken over cannot keep
    /// an answer or free the key of the one that took it.
    holder: String,
}

impl Held {
    /// Keeps a successful answer (and returns it); frees the key after an
    /// error answer, which changed nothing.
    async fn keep(self, response: Response) -> Response {
        if !response.status().is_success() {
            self.release().await;
            return response;
        }
        let (parts, body) = response.into_parts();
        let body = match axum::body::to_bytes(body, MAX_KEPT_BODY).await {
            Ok(body) => body,
            Err(e) => {
                self.release().await;
                return Error::internal("reading an answer to keep", e).into_response();
            }
        };
        let answer = db::StoredAnswer {
            status: parts.status.as_u16(),
            headers: kept_headers(&parts.headers),
            sealed_body: self.caller.seal(&body),
        };
        // The answer goes out whatever happens here; without it kept, a
        // retry would find the key running until its lease ends and then
        // run again, so a passing failure is tried again.
        for pause_ms in [0, 50, 250] {
            tokio::time::sleep(Duration::from_millis(pause_ms)).await;
            match db::settle(
                &self.db,
                &self.caller.id,
                &self.key,
                &self.holder,
                Some(&answer),
            )
            .await
            {
                Ok(()) => break,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot keep the answer of an idempotent request");
                }
            }
        }
        Response::from_parts(parts, Body::from(body))
    }

    async fn release(self) {
        if let Err(e) = db::settle(&self.db, &self.caller.id, &self.key, &self.holder, None).await {
            tracing::warn!(error = %e, "cannot free an idempotency key");
        }
    }
}

/// The whole body, or the error a handler would answer: 413 beyond
/// `limit`, 408 when it arrives too slowly.
async fn read_body(body: Body, limit: usize) -> Result<Bytes, Error> {
    use http_body_util::BodyExt as _;
    match http_body_util::Limited::new(body, limit).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => {
            Err(Error::payload_too_large("the request body is too large"))
        }
        Err(e) if crate::http::error::body_timed_out(e.as_ref()) => {
            Err(crate::http::error::body_timeout())
        }
        Err(e) => Err(Error::bad_request(format!(
            "cannot read the request body: {e}"
        ))),
    }
}

/// The kept answer, as first sent, marked replayed.
fn replay(caller: &Caller, answer: &db::StoredAnswer) -> Response {
    let Some(body) = caller.open(&answer.sealed_body) else {
        return Error::internal("a kept answer", "its body cannot be opened").into_response();
    };
    let status = match StatusCode::from_u16(answer.status) {
        Ok(status) => status,
        Err(e) => return Error::internal("a kept answer", e).into_response(),
    };
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    let pairs: Vec<(String, String)> = serde_json::from_str(&answer.headers).unwrap_or_default();
    for (name, value) in pairs {
        if let (Ok(name), Ok(value)) = (
            HeaderName::try_from(name.as_str()),
            HeaderValue::try_from(value.as_str()),
        ) {
            response.headers_mut().append(name, value);
        }
    }
    response
        .headers_mut()
        .insert(IDEMPOTENCY_REPLAYED, HeaderValue::from_static("true"));
    response
}

/// The headers of an answer worth replaying: what it is and where the
/// created thing is, not what each answer gets anew (the date, the
/// request id, the rate limit) nor cookies.
fn kept_headers(headers: &HeaderMap) -> String {
    const KEPT: [HeaderName; 6] = [
        header::CONTENT_TYPE,
        header::LOCATION,
        header::CONTENT_LANGUAGE,
        header::CACHE_CONTROL,
        header::ETAG,
        header::LAST_MODIFIED,
    ];
    let pairs: Vec<(&str, &str)> = headers
        .iter()
        .filter(|(name, _)| KEPT.contains(name))
        .filter_map(|(name, value)| Some((name.as_str(), value.to_str().ok()?)))
        .collect();
    serde_json::to_string(&pairs).unwrap_or_else(|_| "[]".to_owned())
}

/// The key a request carries: `None` without one; 400 when it is not a
/// key (empty, longer than 255 characters, not printable ASCII, sent
/// twice). The draft's form is a structured-field string (`"abc"`); a bare
/// token is taken too.
pub(crate) fn key_of(headers: &HeaderMap) -> Result<Option<String>, Error> {
    let mut values = headers.get_all(IDEMPOTENCY_KEY).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    let bad = |why: &str| {
        Error::bad_request(format!("Idempotency-Key {why}"))
            .with_detail("header", "Idempotency-Key")
    };
    if values.next().is_some() {
        return Err(bad("is given twice"));
    }
    let bytes = value.as_bytes();
    if !bytes.iter().all(|b| (0x20..0x7f).contains(b)) {
        return Err(bad("must be printable ASCII"));
    }
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim();
    let key = match text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
        Some(quoted) => quoted,
        None => text,
    };
    if key.is_empty() {
        return Err(bad("is empty"));
    }
    if key.chars().count() > MAX_KEY_CHARS {
        return Err(bad(&format!("is longer than {MAX_KEY_CHARS} characters")));
    }
    Ok(Some(key.to_owned()))
}

fn reused_for_another_request() -> Response {
    Error::validation(
        "this Idempotency-Key was used with a different request; use a new key for a new request",
    )
    .with_detail("header", "Idempotency-Key")
    .into_response()
}

fn still_running() -> Response {
    Error::conflict(
        "a request with this Idempotency-Key is still being processed; retry when it has completed",
    )
    .with_detail("header", "Idempotency-Key")
    .with_retry_after(1)
    .into_response()
}

/// Hex SHA-256 of what makes a request this request: method, path and
/// query, media type and body.
fn fingerprint(method: &Method, uri: &axum::http::Uri, headers: &HeaderMap, body: &[u8]) -> String {
    let mut hash = Sha256::new();
    hash.update(method.as_str());
    hash.update([0]);
    hash.update(uri.path_and_query().map_or("", |pq| pq.as_str()));
    hash.update([0]);
    hash.update(
        headers
            .get(header::CONTENT_TYPE)
            .map_or(&b""[..], HeaderValue::as_bytes),
    );
    hash.update([0]);
    hash.update(body);
    hex(&hash.finalize())
}

/// Who sent a request, as far as keys go: an id (a hash, never the
/// credential) and the key its answers are sealed with.
struct Caller {
    id: String,
    seal: Key,
}

impl Caller {
    fn of(credential_headers: &[HeaderName], request: &Request) -> Self {
        let mut material = Vec::new();
        for name in credential_headers {
            for value in request.headers().get_all(name) {
                material.extend_from_slice(name.as_str().as_bytes());
                material.push(b':');
                material.extend_from_slice(value.as_bytes());
                material.push(b'\n');
            }
        }
        if material.is_empty() {
            let address = crate::http::extract::client_address(request.extensions())
                .map(|a| a.to_string())
                .unwrap_or_default();
            material.extend_from_slice(b"address:");
            material.extend_from_slice(address.as_bytes());
        }
        let derive = |purpose: &[u8]| {
            let mut hash = Sha256::new();
            hash.update(purpose);
            hash.update([0]);
            hash.update(&material);
            hash.finalize()
        };
        Caller {
            id: hex(&derive(b"petstore-portfolio idempotency caller")),
            seal: derive(b"petstore-portfolio idempotency seal"),
        }
    }

    /// The body, sealed: a random nonce, then the ciphertext.
    fn seal(&self, body: &[u8]) -> Vec<u8> {
        let nonce: [u8; 12] = rand::random();
        let cipher = ChaCha20Poly1305::new(&self.seal);
        match cipher.encrypt(Nonce::from_slice(&nonce), body) {
            Ok(sealed) => [&nonce[..], &sealed].concat(),
            // Encryption fails only for bodies beyond any size kept here.
            Err(_) => Vec::new(),
        }
    }

    fn open(&self, sealed: &[u8]) -> Option<Vec<u8>> {
        if sealed.len() < 12 {
            return None;
        }
        let (nonce, sealed) = sealed.split_at(12);
        ChaCha20Poly1305::new(&self.seal)
            .decrypt(Nonce::from_slice(nonce), sealed)
            .ok()
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

/// Sweeps expired keys now and then (every ten minutes, or as often as
/// keys expire when they are kept for less).
pub(crate) fn spawn_sweeper(db: Database, kept: Duration) -> tokio::task::JoinHandle<()> {
    let every = kept.clamp(Duration::from_secs(1), Duration::from_secs(600));
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(every);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            match db::sweep(&db, clock::now_ms()).await {
                Ok(0) => {}
                Ok(swept) => tracing::debug!(swept, "expired idempotency keys swept"),
                Err(e) => tracing::warn!(error = %e, "cannot sweep expired idempotency keys"),
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(value: &[u8]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(IDEMPOTENCY_KEY, HeaderValue::from_bytes(value).unwrap());
        headers
    }

    #[test]
    fn keys_are_read_bare_or_as_structured_strings() {
        assert_eq!(key_of(&HeaderMap::new()).unwrap(), None);
        assert_eq!(
            key_of(&headers(b"abc-1")).unwrap().as_deref(),
            Some("abc-1")
        );
        assert_eq!(
            key_of(&headers(b"\"abc-1\"")).unwrap().as_deref(),
            Some("abc-1")
        );
        assert!(key_of(&headers(&[b'k'; 255])).unwrap().is_some());
    }

    #[test]
    fn bad_keys_are_refused_with_a_reason() {
        for (value, why) in [
            (&b""[..], "empty"),
            (b"\"\"", "empty"),
            (&[b'k'; 256], "longer than 255"),
            ("clé".as_bytes(), "printable ASCII"),
            (b"a\tb", "printable ASCII"),
        ] {
            let error = key_of(&headers(value)).unwrap_err();
            assert_eq!(error.status(), StatusCode::BAD_REQUEST);
            assert!(error.message().contains(why), "{}", error.message());
        }
        let mut twice = headers(b"a");
        twice.append(IDEMPOTENCY_KEY, HeaderValue::from_static("b"));
        assert!(key_of(&twice).unwrap_err().message().contains("twice"));
    }

    #[test]
    fn sealed_bodies_open_only_for_their_caller() {
        let request = |key: &'static str| {
            Request::builder()
                .header("x-api-key", key)
                .body(Body::empty())
                .unwrap()
        };
        let names = [HeaderName::from_static("x-api-key")];
        let alice = Caller::of(&names, &request("pk_alice"));
        let bob = Caller::of(&names, &request("pk_bob"));
        assert_ne!(alice.id, bob.id);
        let sealed = alice.seal(b"{\"secret\":\"pk_new\"}");
        assert!(!sealed.windows(6).any(|w| w == b"pk_new"));
        assert_eq!(alice.open(&sealed).unwrap(), b"{\"secret\":\"pk_new\"}");
        assert_eq!(bob.open(&sealed), None);
    }

    /// A handler that signals when it starts and waits to be let go: the
    /// first request's place is known without timing.
    #[derive(Clone, Default)]
    struct Gate {
        entered: Arc<tokio::sync::Notify>,
        open: Arc<tokio::sync::Notify>,
        made: Arc<std::sync::atomic::AtomicUsize>,
    }

    #[utoipa::path(
        post, path = "/things",
        params(IdempotencyKeyHeader),
        responses((status = 201, description = "Made"))
    )]
    async fn make_thing(
        axum::extract::State(gate): axum::extract::State<Gate>,
        _: Idempotent<NoBody>,
    ) -> (StatusCode, &'static str) {
        gate.entered.notify_one();
        gate.open.notified().await;
        gate.made.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        (StatusCode::CREATED, "thing")
    }

    fn post(key: &str) -> Request {
        Request::post("/things")
            .header(IDEMPOTENCY_KEY, key)
            .body(Body::from("{}"))
            .unwrap()
    }

    /// The layer over a test's routes: no prefix, no credential headers,
    /// short enough holds for a test and room for small bodies.
    fn keys_for(db: Database, api: &OpenApi) -> Idempotency {
        Idempotency::new(
            db,
            api,
            "",
            &[],
            Duration::from_secs(30),
            Duration::from_secs(3600),
            1024,
        )
    }

    #[tokio::test]
    async fn a_retry_while_the_first_runs_is_409_and_the_first_is_kept_if_its_client_leaves() {
        use tower::ServiceExt as _;
        let (_dir, db) = crate::storage::temporary_sqlite().await;
        let gate = Gate::default();
        let (router, api) = utoipa_axum::router::OpenApiRouter::new()
            .routes(utoipa_axum::routes!(make_thing))
            .with_state(gate.clone())
            .split_for_parts();
        let keys = keys_for(db, &api);
        assert_eq!(keys.operations(), 1);
        let router = router.route_layer(keys);

        let first = tokio::spawn(router.clone().oneshot(post("a")));
        gate.entered.notified().await;
        let running = router.clone().oneshot(post("a")).await.unwrap();
        assert_eq!(running.status(), StatusCode::CONFLICT);
        let error = running.extensions().get::<Error>().unwrap();
        assert_eq!(error.retry_after(), Some(1));
        // The client of the first request goes away; its request goes on.
        first.abort();
        assert!(first.await.unwrap_err().is_cancelled());
        gate.open.notify_one();
        let mut replayed = None;
        for _ in 0..200 {
            let response = router.clone().oneshot(post("a")).await.unwrap();
            if response.status() != StatusCode::CONFLICT {
                replayed = Some(response);
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let replayed = replayed.expect("the first request completed");
        assert_eq!(replayed.status(), StatusCode::CREATED);
        assert_eq!(replayed.headers()[IDEMPOTENCY_REPLAYED], "true");
        let body = axum::body::to_bytes(replayed.into_body(), 1024)
            .await
            .unwrap();
        assert_eq!(&body[..], b"thing");
        assert_eq!(gate.made.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    /// A retry answered from the kept answer is no handler's mistake: it
    /// is replayed without a word in the log, while a handler that answers
    /// a keyed request without reading its body through [`Idempotent`] is
    /// logged as the bug it is.
    #[tokio::test]
    async fn a_replay_logs_nothing_and_a_handler_that_forgot_its_keys_is_logged() {
        use tower::ServiceExt as _;

        #[utoipa::path(
            post, path = "/forgetful",
            params(IdempotencyKeyHeader),
            responses((status = 201, description = "Made"))
        )]
        async fn forgetful() -> StatusCode {
            StatusCode::CREATED
        }

        let (_dir, db) = crate::storage::temporary_sqlite().await;
        let gate = Gate::default();
        let (router, api) = utoipa_axum::router::OpenApiRouter::new()
            .routes(utoipa_axum::routes!(make_thing))
            .routes(utoipa_axum::routes!(forgetful))
            .with_state(gate.clone())
            .split_for_parts();
        let keys = keys_for(db, &api);
        let router = router.route_layer(keys);
        let (logs, _guard) = crate::telemetry::CapturedLogs::start();

        gate.open.notify_one();
        let first = router.clone().oneshot(post("b")).await.unwrap();
        assert_eq!(first.status(), StatusCode::CREATED);
        let replayed = router.clone().oneshot(post("b")).await.unwrap();
        assert_eq!(replayed.headers()[IDEMPOTENCY_REPLAYED], "true");
        assert!(
            !logs.text().contains("ERROR"),
            "a replay is no error: {}",
            logs.text()
        );

        let forgot = Request::post("/forgetful")
            .header(IDEMPOTENCY_KEY, "c")
            .body(Body::empty())
            .unwrap();
        let forgot = router.clone().oneshot(forgot).await.unwrap();
        assert_eq!(forgot.status(), StatusCode::CREATED);
        assert!(
            logs.text()
                .contains("without reading its body through Idempotent"),
            "{}",
            logs.text()
        );
    }

    /// A request whose lease ran out and whose key was taken over can
    /// neither free the key nor keep its answer over the new holder's.
    #[tokio::test]
    async fn only_the_holder_of_a_key_keeps_an_answer_or_frees_it() {
        let (_dir, db) = crate::storage::temporary_sqlite().await;
        let claim = |holder: &'static str, lease_until_ms| db::Claim {
            caller: "c",
            key: "k",
            fingerprint: "f",
            holder,
            lease_until_ms,
            expires_ms: 10_000,
        };
        assert!(db::claim(&db, &claim("a", 100), 0).await.unwrap());
        assert!(
            !db::claim(&db, &claim("b", 1_200), 50).await.unwrap(),
            "a's lease holds"
        );
        assert!(
            db::claim(&db, &claim("b", 1_200), 200).await.unwrap(),
            "taken over"
        );
        let answer = |status| db::StoredAnswer {
            status,
            headers: "[]".to_owned(),
            sealed_body: Vec::new(),
        };
        db::settle(&db, "c", "k", "a", None).await.unwrap();
        db::settle(&db, "c", "k", "a", Some(&answer(201)))
            .await
            .unwrap();
        let stored = db::find(&db, "c", "k").await.unwrap().unwrap();
        assert!(
            matches!(stored.state, db::State::Running { .. }),
            "b still holds it"
        );
        db::settle(&db, "c", "k", "b", Some(&answer(200)))
            .await
            .unwrap();
        let stored = db::find(&db, "c", "k").await.unwrap().unwrap();
        assert!(matches!(stored.state, db::State::Done(ref a) if a.status == 200));
    }
}
