//! Answers compressed for clients that ask (`Accept-Encoding`), by
//! tower-http's `Compression`; a request that asks for no encoding passes
//! it by, with the same headers.
//!
//! Why: every request went through tower-http's layer, which reads its
//! `Accept-Encoding` (absent: identity), checks the answer against its
//! predicate and wraps the body, for nothing when the client asks for no
//! encoding (server-to-server clients, load balancers, wrk): some 1,500
//! instructions of a cached `GET /v2/pet/1` (BENCHMARKS.md, issue 20). The
//! one thing that layer adds to such an answer, `Vary: accept-encoding`
//! (on what it would compress for another client), is added here the same
//! way; a unit test compares both ways' headers and bodies.

use std::pin::Pin;
use std::task::{Context, Poll, ready};

use axum::http::{HeaderValue, Request, Response, header};
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
        /// Passed by: the answer as it is, `Vary` as tower-http's would say.
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
                let mut response = ready!(answer.poll(cx))?;
                vary_as_compression_would(&mut response);
                Poll::Ready(Ok(response.map(|body| MaybeCompressed::Identity { body })))
            }
        }
    }
}

/// `Vary: accept-encoding` on an answer tower-http's layer would compress
/// for a client that asked (its own test, from its `ResponseFuture`): the
/// answer depends on that header, whoever asked.
fn vary_as_compression_would<B: Body>(response: &mut Response<B>) {
    let headers = response.headers();
    let compressible = !headers.contains_key(header::CONTENT_ENCODING)
        && !headers.contains_key(header::CONTENT_RANGE)
        && compressible_by_default(response);
    let said = || {
        response
            .headers()
            .get_all(header::VARY)
            .iter()
            .any(|value| {
                value
                    .as_bytes()
                    .windows(header::ACCEPT_ENCODING.as_str().len())
                    .any(|name| {
                        name.eq_ignore_ascii_case(header::ACCEPT_ENCODING.as_str().as_bytes())
                    })
            })
    };
    if compressible && !said() {
        response
            .headers_mut()
            .append(header::VARY, HeaderValue::from(header::ACCEPT_ENCODING));
    }
}

/// tower-http's `DefaultPredicate`, the content type looked up once rather
/// than once for each of its three tests (a third of this layer's work): a
/// body of 32 bytes or more (or of unknown size), and neither gRPC (gRPC-Web
/// is compressed), an image (SVG is) nor server-sent events. The unit tests
/// compare it with tower-http's own on each of these.
fn compressible_by_default<B: Body>(response: &Response<B>) -> bool {
    let size = response.body().size_hint().exact().or_else(|| {
        response
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.parse().ok())
    });
    if size.is_some_and(|size| size < 32) {
        return false;
    }
    let content_type = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default();
    let not = |kind: &str, except: Option<&str>| {
        !content_type.starts_with(kind) || except.is_some_and(|e| content_type.starts_with(e))
    };
    not("application/grpc", Some("application/grpc-web"))
        && not("image/", Some("image/svg+xml"))
        && not("text/event-stream", None)
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
    use axum::http::HeaderMap;
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

    /// Each answer's status, headers and body, through tower-http's layer
    /// and through ours, to a request without `Accept-Encoding`.
    #[tokio::test]
    async fn a_request_without_accept_encoding_is_answered_as_tower_http_answers() {
        let answers: [(&[(&str, &str)], usize); 14] = [
            (&[("content-type", "application/json")], 200),
            (&[("content-type", "application/json")], 10),
            (&[("content-type", "application/json")], 32),
            (&[("content-type", "application/json")], 31),
            (&[], 200),
            (&[("content-type", "image/png")], 200),
            (&[("content-type", "image/svg+xml")], 200),
            (&[("content-type", "application/grpc")], 200),
            (&[("content-type", "application/grpc-web+proto")], 200),
            (&[("content-type", "text/event-stream")], 200),
            (
                &[("content-type", "application/json"), ("vary", "Origin")],
                200,
            ),
            (
                &[
                    ("content-type", "application/json"),
                    ("vary", "Origin, Accept-Encoding"),
                ],
                200,
            ),
            (
                &[
                    ("content-type", "application/json"),
                    ("content-encoding", "gzip"),
                ],
                200,
            ),
            (&[("content-range", "bytes 0-199/400")], 200),
        ];
        // `usize::MAX`: a body of unknown size.
        let answers = answers.into_iter().chain([
            (&[("content-type", "application/json")][..], usize::MAX),
            (&[("content-type", "image/png")][..], usize::MAX),
        ]);
        for (headers, length) in answers {
            let make = move || {
                tower::service_fn(move |_: Request<AxumBody>| async move {
                    Ok::<_, std::convert::Infallible>(answer(headers, length))
                })
            };
            let request = || Request::new(AxumBody::empty());
            let theirs = Compression::new(make()).oneshot(request()).await.unwrap();
            let ours = CompressionLayer
                .layer(make())
                .oneshot(request())
                .await
                .unwrap();
            assert!(
                matches!(ours.body(), MaybeCompressed::Identity { .. }),
                "passed by"
            );
            let (their_parts, their_body) = theirs.into_parts();
            let (our_parts, our_body) = ours.into_parts();
            assert_eq!(our_parts.status, their_parts.status);
            let sorted = |headers: &HeaderMap| {
                let mut all: Vec<_> = headers
                    .iter()
                    .map(|(name, value)| (name.to_string(), value.as_bytes().to_vec()))
                    .collect();
                all.sort();
                all
            };
            assert_eq!(
                sorted(&our_parts.headers),
                sorted(&their_parts.headers),
                "{headers:?}, {length} bytes"
            );
            let their_bytes = their_body.collect().await.unwrap().to_bytes();
            let our_bytes = our_body.collect().await.unwrap().to_bytes();
            assert_eq!(our_bytes, their_bytes);
        }
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
