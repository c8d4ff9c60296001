//! The request timeout (`http.request_timeout_secs`), which tells whose
//! slowness it was: a request whose body is still arriving when the time is
//! up is answered 408 (the client was slow, e.g. dripping a byte a second),
//! any other 503 (the server was). Hand-written because tower-http's
//! `TimeoutLayer` answers one status for both.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use http_body::{Frame, SizeHint};
use tower_http::timeout::TimeoutBody;

use crate::http::error::{Error, ErrorCode};

/// Where the reading of a request's body stands.
const NOT_READ: u8 = 0;
const READING: u8 = 1;
const READ: u8 = 2;

/// A request's body watched for the request timeout: past the time, whether
/// it was still arriving tells the answer ([`Watch::late_answer`]).
pub(crate) struct Watch {
    /// None: the request has no body (most reads), so nothing can still be
    /// arriving, and nothing is watched.
    reading: Option<Arc<AtomicU8>>,
}

impl Watch {
    /// `request`, its body watched.
    pub(crate) fn body_of(request: Request) -> (Request, Watch) {
        if http_body::Body::is_end_stream(request.body()) {
            return (request, Watch { reading: None });
        }
        let reading = Arc::new(AtomicU8::new(NOT_READ));
        let request = request.map(|body| {
            Body::new(WatchedBody {
                inner: body,
                reading: reading.clone(),
            })
        });
        let watch = Watch {
            reading: Some(reading),
        };
        (request, watch)
    }

    /// The answer when `limit` passed first: 408 if the body was still being
    /// read, else 503.
    pub(crate) fn late_answer(&self, limit: Duration) -> Response {
        match &self.reading {
            Some(reading) if reading.load(Ordering::Relaxed) == READING => Error::new(
                ErrorCode::RequestTimeout,
                format!(
                    "the request body was still arriving after {} s; send it faster",
                    limit.as_secs()
                ),
            )
            .into_response(),
            _ => StatusCode::SERVICE_UNAVAILABLE.into_response(),
        }
    }
}

/// Each part of a request's body must come within the time
/// (`http.body_read_timeout_secs`), or reading it fails (answered 408 where
/// it is read): tower-http's `TimeoutBody` around the bodies that are still
/// to come. A request whose body has ended (most reads: no body at all) is
/// passed as it is: tower-http's `RequestBodyTimeout` wraps every body, and
/// its wrapper says of none that it has ended, nor how long it is, so that
/// each layer inside took every request for one with a body (the request
/// timeout above watched each of them: two allocations).
#[derive(Debug, Clone, Copy)]
pub(crate) struct BodyReadTimeoutLayer {
    pub(crate) timeout: Duration,
}

impl<S> tower::Layer<S> for BodyReadTimeoutLayer {
    type Service = BodyReadTimeout<S>;

    fn layer(&self, inner: S) -> BodyReadTimeout<S> {
        BodyReadTimeout {
            inner,
            timeout: self.timeout,
        }
    }
}

/// [`BodyReadTimeoutLayer`]'s service.
#[derive(Debug, Clone)]
pub(crate) struct BodyReadTimeout<S> {
    inner: S,
    timeout: Duration,
}

impl<S: tower::Service<Request>> tower::Service<Request> for BodyReadTimeout<S> {
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> S::Future {
        if http_body::Body::is_end_stream(request.body()) {
            return self.inner.call(request);
        }
        let timeout = self.timeout;
        self.inner
            .call(request.map(|body| Body::new(TimeoutBody::new(timeout, body))))
    }
}

/// A request body that notes whether it is being read.
struct WatchedBody {
    inner: Body,
    reading: Arc<AtomicU8>,
}

impl http_body::Body for WatchedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        let now = match &polled {
            Poll::Ready(None | Some(Err(_))) => READ,
            _ if self.inner.is_end_stream() => READ,
            _ => READING,
        };
        self.reading.store(now, Ordering::Relaxed);
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use http_body_util::BodyExt as _;
    use tower::{Layer as _, ServiceExt as _};

    use super::*;

    /// What the layer inside sees of `request`'s body through `layer`:
    /// whether it had ended, and how reading it ended.
    async fn read_through(
        layer: BodyReadTimeoutLayer,
        request: Request,
    ) -> (bool, Result<usize, String>) {
        let reader = tower::service_fn(|request: Request| async move {
            let ended = http_body::Body::is_end_stream(request.body());
            let read = match request.into_body().collect().await {
                Ok(collected) => Ok(collected.to_bytes().len()),
                Err(e) => Err(e.to_string()),
            };
            Ok::<_, std::convert::Infallible>((ended, read))
        });
        let Ok(seen) = layer.layer(reader).oneshot(request).await;
        seen
    }

    #[tokio::test]
    async fn a_request_without_a_body_is_passed_as_it_is() {
        let layer = BodyReadTimeoutLayer {
            timeout: Duration::from_millis(50),
        };
        let (ended, read) = read_through(layer, Request::new(Body::empty())).await;
        assert!(ended, "the inner layers see that the body has ended");
        assert_eq!(read, Ok(0));
    }

    /// A body whose next part does not come within the time fails to be
    /// read; one that comes is read whole.
    #[tokio::test]
    async fn a_body_that_stalls_fails_within_the_time() {
        let layer = BodyReadTimeoutLayer {
            timeout: Duration::from_millis(50),
        };
        let stalled = futures::stream::pending::<Result<Bytes, std::io::Error>>();
        let (ended, read) = read_through(layer, Request::new(Body::from_stream(stalled))).await;
        assert!(!ended);
        assert!(read.is_err(), "{read:?}");
        let (_, read) = read_through(layer, Request::new(Body::from("three"))).await;
        assert_eq!(read, Ok(5));
    }
}
