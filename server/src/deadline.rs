//! The request timeout (`http.request_timeout_secs`), which tells whose
//! slowness it was: a request whose body is still arriving when the time is
//! up is answered 408 (the client was slow, e.g. dripping a byte a second),
//! any other 503 (the server was). tower-http's `TimeoutLayer` answers one
//! status for both.

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

use crate::error::{Error, ErrorCode};

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
