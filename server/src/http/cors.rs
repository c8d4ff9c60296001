//! CORS for every answer: tower-http's [`tower_http::cors::CorsLayer`],
//! which answers preflights and says which origins may read an answer.
//!
//! A request that is no CORS request (no `Origin`, not `OPTIONS`: every
//! request of a server-to-server client, a load balancer, curl) gets the
//! same headers tower-http would give it, without passing through it:
//! tower-http builds a header map for each request and its `Vary` anew from
//! a list, some 3,000 instructions of the 42,000 a cached `GET /v2/pet/1`
//! cost (BENCHMARKS.md, issue 20). For such a request, with this server's
//! settings (no credentials, no exposed headers, no private network),
//! tower-http adds only `Vary` (appended) and, when every origin is
//! allowed, `Access-Control-Allow-Origin: *`; a unit test compares the two
//! ways on both settings.

use std::pin::Pin;
use std::task::{Context, Poll, ready};

use axum::http::{HeaderValue, Method, Request, Response, header};
use futures::future::Either;
use tower::{Layer, Service};
use tower_http::cors::{AllowOrigin, Any};

/// tower-http's `Vary` for CORS answers: the request headers an answer
/// depends on.
const VARY: HeaderValue = HeaderValue::from_static(
    "origin, access-control-request-method, access-control-request-headers",
);

/// CORS allowing any method and header, from `origins` (`*` for all).
#[derive(Debug, Clone)]
pub(crate) struct CorsLayer {
    cors: tower_http::cors::CorsLayer,
    any_origin: bool,
}

impl CorsLayer {
    pub(crate) fn new(origins: &[String]) -> Self {
        let cors = tower_http::cors::CorsLayer::new()
            .allow_methods(Any)
            .allow_headers(Any);
        let any_origin = origins.iter().any(|o| o == "*");
        let cors = if any_origin {
            cors.allow_origin(Any)
        } else {
            let origins = origins
                .iter()
                .filter_map(|o| o.parse().ok())
                .collect::<Vec<_>>();
            cors.allow_origin(AllowOrigin::list(origins))
        };
        CorsLayer { cors, any_origin }
    }
}

impl<S> Layer<S> for CorsLayer {
    type Service = Cors<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Cors {
            cors: self.cors.layer(inner),
            any_origin: self.any_origin,
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Cors<S> {
    cors: tower_http::cors::Cors<S>,
    any_origin: bool,
}

impl<S, B, ReqBody> Service<Request<ReqBody>> for Cors<S>
where
    S: Service<Request<ReqBody>, Response = Response<B>>,
    B: Default,
{
    type Response = Response<B>;
    type Error = S::Error;
    type Future = Either<NoCorsRequest<S::Future>, tower_http::cors::ResponseFuture<S::Future>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.cors.poll_ready(cx)
    }

    fn call(&mut self, request: Request<ReqBody>) -> Self::Future {
        if request.method() == Method::OPTIONS || request.headers().contains_key(header::ORIGIN) {
            return Either::Right(self.cors.call(request));
        }
        Either::Left(NoCorsRequest {
            answer: self.cors.get_mut().call(request),
            any_origin: self.any_origin,
        })
    }
}

pin_project_lite::pin_project! {
    /// The answer to a request that is no CORS request, given the headers
    /// tower-http would give it.
    pub(crate) struct NoCorsRequest<F> {
        #[pin]
        answer: F,
        any_origin: bool,
    }
}

impl<F, B, E> Future for NoCorsRequest<F>
where
    F: Future<Output = Result<Response<B>, E>>,
{
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let mut response = ready!(this.answer.poll(cx))?;
        let headers = response.headers_mut();
        // Appended, as tower-http does: compression's `Vary` stays.
        headers.append(header::VARY, VARY);
        if *this.any_origin {
            headers.insert(
                header::ACCESS_CONTROL_ALLOW_ORIGIN,
                HeaderValue::from_static("*"),
            );
        }
        Poll::Ready(Ok(response))
    }
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;

    use axum::body::Body;
    use axum::http::{HeaderMap, StatusCode};
    use tower::ServiceExt as _;

    use super::*;

    /// An inner service whose answer already carries a `Vary` (as
    /// compression's does) and an `Access-Control-Allow-Origin` of its own.
    async fn inner(_request: Request<Body>) -> Result<Response<Body>, Infallible> {
        Ok(Response::builder()
            .status(StatusCode::OK)
            .header(header::VARY, "accept-encoding")
            .header(header::ACCESS_CONTROL_ALLOW_ORIGIN, "https://inner.example")
            .body(Body::empty())
            .unwrap())
    }

    /// The headers of `layer`'s answer to `request`, around [`inner`].
    async fn answer_headers<L>(layer: &L, request: Request<Body>) -> HeaderMap
    where
        L: Layer<tower::util::ServiceFn<fn(Request<Body>) -> InnerAnswer>>,
        L::Service: Service<Request<Body>, Response = Response<Body>, Error = Infallible>,
    {
        let inner: fn(Request<Body>) -> InnerAnswer = |request| Box::pin(inner(request));
        let response = layer
            .layer(tower::service_fn(inner))
            .oneshot(request)
            .await
            .unwrap();
        response.headers().clone()
    }

    type InnerAnswer =
        Pin<Box<dyn Future<Output = Result<Response<Body>, Infallible>> + Send + 'static>>;

    fn request(method: Method, origin: Option<&str>) -> Request<Body> {
        let mut request = Request::builder().method(method).uri("/v2/pet/1");
        if let Some(origin) = origin {
            request = request.header(header::ORIGIN, origin);
        }
        request.body(Body::empty()).unwrap()
    }

    /// A request that is no CORS request gets, from the short way, the very
    /// headers tower-http gives it, in the same order, on both settings;
    /// CORS requests and preflights still go through tower-http.
    #[tokio::test]
    async fn a_request_without_origin_gets_what_tower_http_gives_it() {
        for origins in [vec!["*".to_owned()], vec!["https://a.example".to_owned()]] {
            let ours = CorsLayer::new(&origins);
            for method in [Method::GET, Method::POST, Method::DELETE] {
                let short = answer_headers(&ours, request(method.clone(), None)).await;
                let long = answer_headers(&ours.cors, request(method, None)).await;
                let listed = |headers: &HeaderMap| {
                    headers
                        .iter()
                        .map(|(name, value)| format!("{name}: {value:?}"))
                        .collect::<Vec<_>>()
                };
                assert_eq!(listed(&short), listed(&long), "origins {origins:?}");
                assert_eq!(short.get_all(header::VARY).iter().count(), 2);
            }
            for (method, origin) in [
                (Method::GET, Some("https://a.example")),
                (Method::OPTIONS, Some("https://a.example")),
                (Method::OPTIONS, None),
            ] {
                let short = answer_headers(&ours, request(method.clone(), origin)).await;
                let theirs = answer_headers(&ours.cors, request(method.clone(), origin)).await;
                assert_eq!(
                    short, theirs,
                    "{method} from {origin:?}, origins {origins:?}"
                );
            }
        }
        // A listed origin is answered as allowed: tower-http did the work.
        let allowed = answer_headers(
            &CorsLayer::new(&["https://a.example".to_owned()]),
            request(Method::GET, Some("https://a.example")),
        )
        .await;
        assert_eq!(
            allowed[header::ACCESS_CONTROL_ALLOW_ORIGIN],
            "https://a.example"
        );
    }
}
