//! Each service's edge: what every one of its requests passes before its
//! route and after its answer, outermost first:
//!
//! 1. its errors rendered in the service's format ([`ErrorRenderer`]);
//! 2. the service's checks ([`EdgeChecks`]): what the request presents
//!    (credentials, checked once) and the rate limit, which may refuse it
//!    (429) and whose headers go on every answer;
//! 3. a malformed request (its host named wrongly, a NUL byte in the URI)
//!    refused ([`extract::screen`]);
//! 4. the request timeout ([`deadline`]);
//! 5. a panic in the route answered 500 ([`panic_response`]), by
//!    tower-http's `CatchPanic`.
//!
//! A tower service written out, rather than a `from_fn` middleware of
//! nested async functions: `from_fn` clones the stack inside it for each
//! request, boxes it again (`Next`) and boxes its own future. Here, when no
//! check has to wait (the pet store's default), the route is called at once
//! and its future is polled inside this one.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use futures::future::BoxFuture;
use pin_project_lite::pin_project;
use tower::{Layer, Service};
use tower_http::BoxError;
use tower_http::catch_panic::{CatchPanic, CatchPanicLayer};

use crate::http::deadline::Watch;
use crate::http::error::{Error, ErrorFormat, ErrorRenderer, panic_response};
use crate::http::extract::{self, Screened};
use crate::http::limit_headers;
use crate::limits::Quota;

/// A service's own checks at its edge.
pub(crate) trait EdgeChecks: Clone + Send + Sync + 'static {
    /// The format the service's errors are written in.
    type Errors: ErrorFormat;

    /// Checks `request` before its route.
    fn check(&self, request: Request) -> Check;
}

/// What a service's checks make of a request. (Passed by value and taken
/// apart at once: boxing the large variant would cost the requests that
/// pass at once an allocation each, what this module saves.)
#[allow(clippy::large_enum_variant)]
pub(crate) enum Check {
    /// Checked at once (nothing to look up or count).
    Done(Checked),
    /// The checks wait (a credential looked up, a shared counter hit).
    Waiting(BoxFuture<'static, Checked>),
}

/// A request checked.
pub(crate) struct Checked {
    /// The request, with what its checks found in its extensions; or why
    /// it is refused (over its rate limit).
    pub(crate) verdict: Result<Request, Error>,
    /// The rate limit's count of it, at the time (Unix seconds): its headers
    /// go on the answer, whatever it is.
    pub(crate) quota: Option<(Quota, i64)>,
}

impl Checked {
    /// A request that passes, counted by no rate limit.
    pub(crate) fn passed(request: Request) -> Self {
        Checked {
            verdict: Ok(request),
            quota: None,
        }
    }
}

/// The edge around each of a service's routes: its checks, and the request
/// timeout (`http.request_timeout_secs`).
#[derive(Debug, Clone)]
pub(crate) struct EdgeLayer<C> {
    checks: C,
    timeout: Duration,
}

impl<C> EdgeLayer<C> {
    pub(crate) fn new(checks: C, timeout: Duration) -> Self {
        EdgeLayer { checks, timeout }
    }
}

/// What answers a panic: [`panic_response`], as tower-http's `CatchPanic`
/// calls it.
type PanicResponse = fn(Box<dyn std::any::Any + Send + 'static>) -> Response;

impl<C: Clone, S> Layer<S> for EdgeLayer<C> {
    type Service = Edge<C, CatchPanic<S, PanicResponse>>;

    fn layer(&self, inner: S) -> Self::Service {
        let answer_panic: PanicResponse = panic_response;
        Edge {
            checks: self.checks.clone(),
            timeout: self.timeout,
            inner: CatchPanicLayer::custom(answer_panic).layer(inner),
        }
    }
}

/// [`EdgeLayer`]'s service.
#[derive(Debug, Clone)]
pub(crate) struct Edge<C, S> {
    checks: C,
    timeout: Duration,
    inner: S,
}

impl<C, S, B> Service<Request> for Edge<C, S>
where
    C: EdgeChecks,
    S: Service<Request, Response = Response<B>, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = EdgeFuture<C::Errors, S>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let timeout = self.timeout;
        let mut after = After {
            renderer: ErrorRenderer::of(&request),
            quota: None,
            screened: None,
        };
        let step = match self.checks.check(request) {
            Check::Done(checked) => enter(&mut self.inner, checked, timeout, &mut after),
            Check::Waiting(check) => {
                // The route's service, made ready, goes with the future;
                // this edge keeps a copy (tower's contract for `call`).
                let copy = self.inner.clone();
                Step::Checking {
                    check,
                    inner: std::mem::replace(&mut self.inner, copy),
                }
            }
        };
        EdgeFuture {
            step,
            timeout,
            after: Some(after),
        }
    }
}

/// Goes on with a checked request: refused (its rate limit, a malformed
/// request), or handed to the route (and its panic catcher) within the
/// timeout.
fn enter<F: ErrorFormat, S, B>(
    inner: &mut S,
    checked: Checked,
    timeout: Duration,
    after: &mut After<F>,
) -> Step<S>
where
    S: Service<Request, Response = Response<B>, Error = Infallible>,
{
    after.quota = checked.quota;
    let request = match checked.verdict {
        Ok(request) => request,
        Err(refused) => return Step::answered(refused.into_response()),
    };
    let screened = after.screened.insert(extract::screen(&request));
    if let Some(refused) = screened.refused.take() {
        return Step::answered(refused.into_response());
    }
    let (request, watch) = Watch::body_of(request);
    Step::Answering {
        answer: tokio::time::timeout(timeout, inner.call(request)),
        watch,
    }
}

/// What is done to the answer on its way out, innermost first.
struct After<F: ErrorFormat> {
    renderer: ErrorRenderer<F>,
    quota: Option<(Quota, i64)>,
    /// None: refused before it was screened.
    screened: Option<Screened>,
}

impl<F: ErrorFormat> After<F> {
    fn finish(self, mut response: Response) -> Response {
        if let Some(screened) = &self.screened {
            response = screened.finish(response);
        }
        if let Some((quota, now)) = self.quota {
            limit_headers::add_headers(response.headers_mut(), quota, now);
        }
        self.renderer.render(response)
    }
}

pin_project! {
    /// [`Edge`]'s future.
    pub(crate) struct EdgeFuture<F: ErrorFormat, S: Service<Request>> {
        #[pin]
        step: Step<S>,
        timeout: Duration,
        // Taken when the answer leaves.
        after: Option<After<F>>,
    }
}

pin_project! {
    #[project = StepProjection]
    enum Step<S: Service<Request>> {
        /// The service's checks are waiting; the route's service waits
        /// with them.
        Checking {
            check: BoxFuture<'static, Checked>,
            inner: S,
        },
        /// The route is answering.
        Answering {
            #[pin]
            answer: tokio::time::Timeout<S::Future>,
            watch: Watch,
        },
        /// Answered without the route.
        Answered { response: Response },
    }
}

impl<S: Service<Request>> Step<S> {
    fn answered(response: Response) -> Self {
        Step::Answered { response }
    }
}

impl<F, S, B> Future for EdgeFuture<F, S>
where
    F: ErrorFormat,
    S: Service<Request, Response = Response<B>, Error = Infallible>,
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        loop {
            let response = match this.step.as_mut().project() {
                StepProjection::Checking { check, inner } => {
                    let checked = ready!(check.as_mut().poll(cx));
                    let Some(after) = this.after.as_mut() else {
                        return Poll::Ready(Ok(polled_after_answer()));
                    };
                    let next = enter(inner, checked, *this.timeout, after);
                    this.step.set(next);
                    continue;
                }
                StepProjection::Answering { answer, watch } => match ready!(answer.poll(cx)) {
                    Ok(Ok(response)) => response.map(Body::new),
                    Ok(Err(infallible)) => match infallible {},
                    Err(_elapsed) => watch.late_answer(*this.timeout),
                },
                StepProjection::Answered { response } => std::mem::take(response),
            };
            return Poll::Ready(Ok(match this.after.take() {
                Some(after) => after.finish(response),
                None => polled_after_answer(),
            }));
        }
    }
}

/// A future polled again after its answer (tower's contract forbids it):
/// a fault, not a panic.
fn polled_after_answer() -> Response {
    Error::internal("the edge", "its future was polled after it answered").into_response()
}

/// The edge of the pages outside both services (Swagger UI, the documents,
/// the pet store's sign-in page): errors in the format `F`, malformed
/// requests refused.
pub(crate) async fn pages_edge<F: ErrorFormat>(
    request: Request,
    next: axum::middleware::Next,
) -> Response {
    crate::http::error::render_errors_around::<F, _>(request, |request| {
        extract::refuse_malformed(request, |request| next.run(request))
    })
    .await
}

#[cfg(test)]
mod tests {
    use axum::Router;
    use axum::body::Body;
    use axum::http::{StatusCode, header};
    use axum::routing::get;
    use http_body_util::BodyExt as _;
    use tower::ServiceExt as _;

    use super::*;
    use crate::petstore::wire::PetstoreErrors;

    /// Checks that pass at once, or wait and then refuse (a rate limit).
    #[derive(Debug, Clone)]
    struct TestChecks {
        refuse: bool,
    }

    impl EdgeChecks for TestChecks {
        type Errors = PetstoreErrors;

        fn check(&self, request: Request) -> Check {
            if !self.refuse {
                return Check::Done(Checked::passed(request));
            }
            Check::Waiting(Box::pin(async move {
                tokio::task::yield_now().await;
                let quota = Quota {
                    allowed: false,
                    limit: 1,
                    remaining: 0,
                    reset_at: 60,
                };
                Checked {
                    verdict: Err(limit_headers::over_limit(quota, 0)),
                    quota: Some((quota, 0)),
                }
            }))
        }
    }

    fn app(refuse: bool) -> Router {
        app_within(refuse, Duration::from_secs(30))
    }

    fn app_within(refuse: bool, timeout: Duration) -> Router {
        Router::new()
            .route("/ok", get(|| async { "fine" }))
            .route(
                "/panics",
                get(|| async {
                    if true {
                        panic!("a handler's bug");
                    }
                    "never"
                }),
            )
            .route(
                "/slow",
                get(|| async {
                    tokio::time::sleep(Duration::from_secs(60)).await;
                    "late"
                }),
            )
            .layer(EdgeLayer::new(TestChecks { refuse }, timeout))
    }

    async fn get_path(app: Router, path: &str) -> (StatusCode, axum::http::HeaderMap, String) {
        let request = Request::builder()
            .uri(path)
            .header(header::HOST, "localhost")
            .body(Body::empty())
            .unwrap();
        let response = app.oneshot(request).await.unwrap();
        let (parts, body) = response.into_parts();
        let body = body.collect().await.unwrap().to_bytes();
        (
            parts.status,
            parts.headers,
            String::from_utf8_lossy(&body).into_owned(),
        )
    }

    #[tokio::test]
    async fn a_request_that_passes_at_once_reaches_its_route() {
        let (status, _, body) = get_path(app(false), "/ok").await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body, "fine");
    }

    /// A panic in a handler is a 500 in the service's format, not a
    /// dropped connection.
    #[tokio::test]
    async fn a_panic_in_the_route_is_answered_500_in_the_services_format() {
        let (status, headers, body) = get_path(app(false), "/panics").await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(headers[header::CONTENT_TYPE], "application/json");
        assert!(body.contains("internal error"), "{body}");
        assert!(!body.contains("a handler's bug"), "no internals: {body}");
    }

    /// Past the request timeout, a request without a body is a 503 (the
    /// server was slow), in the service's format. (The route never answers
    /// within its minute.)
    #[tokio::test]
    async fn a_route_past_the_timeout_is_answered_503() {
        let app = app_within(false, Duration::from_millis(50));
        let (status, headers, _) = get_path(app, "/slow").await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(headers[header::CONTENT_TYPE], "application/json");
    }

    /// Checks that wait and refuse: the route is not reached; the refusal
    /// carries the limit's headers and the service's format.
    #[tokio::test]
    async fn a_request_refused_by_waiting_checks_gets_their_answer_and_headers() {
        let (status, headers, body) = get_path(app(true), "/ok").await;
        assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(headers[header::CONTENT_TYPE], "application/json");
        assert!(headers.contains_key(header::RETRY_AFTER), "{headers:?}");
        assert!(!body.contains("fine"), "{body}");
    }

    /// A malformed request (a NUL byte in its path) is refused before the
    /// route.
    #[tokio::test]
    async fn a_malformed_request_is_refused_before_its_route() {
        let (status, _, body) = get_path(app(false), "/ok%00").await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    }
}
