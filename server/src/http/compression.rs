//! Answers compressed for clients that ask (`Accept-Encoding`), by
//! tower-http's `Compression`; a request that asks for no encoding is not
//! handed to it at all (its answer could only be the identity).
//!
//! A thin wrapper rather than the layer on every request: most requests
//! (server-to-server clients, load balancers, benchmarks) ask for no
//! encoding, and the layer would read each one's headers and wrap each
//! answer's body for nothing. Such an answer goes out without the layer's
//! `Vary: accept-encoding`, which only tells caches that another client
//! might get it compressed: a cache that keeps it serves the identity to
//! everyone, which every client takes.

use std::pin::Pin;
use std::task::{Context, Poll, ready};

use axum::http::{Request, Response, header};
use bytes::{Buf as _, Bytes};
use http_body::{Body, Frame, SizeHint};
use pin_project_lite::pin_project;
use tower::{Layer, Service};
use tower_http::BoxError;
use tower_http::compression::predicate::DefaultPredicate;
use tower_http::compression::{Compression, CompressionBody, ResponseFuture};

/// Compression for the clients that ask for it.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct CompressionLayer;

impl<S> Layer<S> for CompressionLayer {
    type Service = Compress<S>;

    fn layer(&self, inner: S) -> Compress<S> {
        Compress {
            inner: Compression::new(inner),
        }
    }
}

/// [`CompressionLayer`]'s service.
#[derive(Clone)]
pub(crate) struct Compress<S> {
    inner: Compression<S>,
}

impl<S, ReqBody, ResBody> Service<Request<ReqBody>> for Compress<S>
where
    S: Service<Request<ReqBody>, Response = Response<ResBody>>,
    ResBody: Body,
{
    type Response = Response<MaybeCompressed<ResBody>>;
    type Error = S::Error;
    type Future = CompressFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<ReqBody>) -> Self::Future {
        if request.headers().contains_key(header::ACCEPT_ENCODING) {
            CompressFuture::Negotiated {
                answer: self.inner.call(request),
            }
        } else {
            CompressFuture::Identity {
                answer: self.inner.get_mut().call(request),
            }
        }
    }
}

pin_project! {
    /// [`Compress`]'s future.
    #[project = CompressFutureProjection]
    pub(crate) enum CompressFuture<F> {
        /// Through tower-http's layer.
        Negotiated {
            #[pin]
            answer: ResponseFuture<F, DefaultPredicate>,
        },
        /// Passed by: the answer as it is.
        Identity {
            #[pin]
            answer: F,
        },
    }
}

impl<F, B, E> Future for CompressFuture<F>
where
    F: Future<Output = Result<Response<B>, E>>,
    B: Body,
{
    type Output = Result<Response<MaybeCompressed<B>>, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project() {
            CompressFutureProjection::Negotiated { answer } => {
                let response = ready!(answer.poll(cx))?;
                Poll::Ready(Ok(response.map(|body| MaybeCompressed::Negotiated {
                    body: Box::pin(body),
                })))
            }
            CompressFutureProjection::Identity { answer } => {
                let response = ready!(answer.poll(cx))?;
                Poll::Ready(Ok(response.map(|body| MaybeCompressed::Identity { body })))
            }
        }
    }
}

pin_project! {
    /// An answer's body, compressed or as it was. The compressed one is boxed:
    /// an encoder's state is large, and the answer (its body with it) is
    /// moved several times on its way to the socket.
    #[project = MaybeCompressedProjection]
    pub(crate) enum MaybeCompressed<B: Body> {
        Negotiated {
            body: Pin<Box<CompressionBody<B>>>,
        },
        Identity {
            #[pin]
            body: B,
        },
    }
}

/// An empty body (CORS answers a preflight with one).
impl<B: Body + Default> Default for MaybeCompressed<B> {
    fn default() -> Self {
        MaybeCompressed::Identity { body: B::default() }
    }
}

/// As tower-http's `CompressionBody` for identity: frames of `Bytes`,
/// errors boxed.
impl<B: Body> Body for MaybeCompressed<B>
where
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        match self.project() {
            MaybeCompressedProjection::Negotiated { body } => body.as_mut().poll_frame(cx),
            MaybeCompressedProjection::Identity { body } => match ready!(body.poll_frame(cx)) {
                Some(Ok(frame)) => Poll::Ready(Some(Ok(
                    frame.map_data(|mut data| data.copy_to_bytes(data.remaining()))
                ))),
                Some(Err(e)) => Poll::Ready(Some(Err(e.into()))),
                None => Poll::Ready(None),
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            MaybeCompressed::Negotiated { body } => body.is_end_stream(),
            MaybeCompressed::Identity { body } => body.is_end_stream(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            MaybeCompressed::Negotiated { body } => body.size_hint(),
            MaybeCompressed::Identity { body } => body.size_hint(),
        }
    }
}

#[cfg(test)]
mod tests {
    use axum::body::Body as AxumBody;
    use axum::http::HeaderValue;
    use http_body_util::BodyExt as _;
    use tower::ServiceExt as _;

    use super::*;

    /// An answer with `headers` and a body of `length` bytes (`usize::MAX`:
    /// 200 bytes in a stream, of a size the body does not tell).
    fn answer(headers: &[(&'static str, &'static str)], length: usize) -> Response<AxumBody> {
        let body = if length == usize::MAX {
            let chunks = [Ok::<_, std::io::Error>(Bytes::from(vec![b'x'; 200]))];
            AxumBody::from_stream(futures::stream::iter(chunks))
        } else {
            AxumBody::from(vec![b'x'; length])
        };
        let mut response = Response::new(body);
        for (name, value) in headers {
            response
                .headers_mut()
                .append(*name, HeaderValue::from_static(value));
        }
        response
    }

    /// A request without `Accept-Encoding` gets the answer as it was made,
    /// headers and body, whatever it is.
    #[tokio::test]
    async fn a_request_without_accept_encoding_gets_the_answer_as_made() {
        let service = CompressionLayer.layer(tower::service_fn(|_: Request<AxumBody>| async {
            Ok::<_, std::convert::Infallible>(answer(&[("content-type", "application/json")], 200))
        }));
        let response = service
            .oneshot(Request::new(AxumBody::empty()))
            .await
            .unwrap();
        assert!(matches!(response.body(), MaybeCompressed::Identity { .. }));
        let (parts, body) = response.into_parts();
        assert_eq!(
            parts.headers.iter().collect::<Vec<_>>(),
            [(
                &header::CONTENT_TYPE,
                &HeaderValue::from_static("application/json")
            )]
        );
        assert_eq!(body.collect().await.unwrap().to_bytes(), vec![b'x'; 200]);
    }

    /// A client that asks for gzip gets it, through tower-http's layer.
    #[tokio::test]
    async fn a_request_with_accept_encoding_goes_through_tower_http() {
        let service = CompressionLayer.layer(tower::service_fn(|_: Request<AxumBody>| async {
            Ok::<_, std::convert::Infallible>(answer(&[("content-type", "application/json")], 200))
        }));
        let request = Request::builder()
            .header(header::ACCEPT_ENCODING, "gzip")
            .body(AxumBody::empty())
            .unwrap();
        let response = service.oneshot(request).await.unwrap();
        assert_eq!(response.headers()[header::CONTENT_ENCODING], "gzip");
        assert!(matches!(
            response.body(),
            MaybeCompressed::Negotiated { .. }
        ));
    }
}
