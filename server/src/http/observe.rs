//! What the server notes of every request, around the router. Outermost
//! first:
//!
//! - a client's `x-request-id` is set aside ([`set_aside_client_request_id`]):
//!   kept, as [`ClientRequestId`], only when short and plain
//!   ([`client_request_id`]);
//! - tower-http's `SetRequestId` gives every request the server's own id
//!   ([`NewRequestId`]), unique, on the request for the layers inside;
//! - tower-http's `TraceLayer` opens its span, `request`
//!   ([`RequestSpan`]: the request id, the client's beside it, the trace
//!   id), so that every log line written while answering carries them;
//! - and this layer ([`ObserveLayer`]): its trace ([`TraceContext`]: the
//!   caller's `traceparent` continued, or a new trace), kept for the calls
//!   the request makes; the HTTP server metrics (OpenTelemetry's names:
//!   duration, requests in flight, body sizes, by method, route template,
//!   status and service); one access-log line (target `access`, INFO) once
//!   the answer's last byte is sent or the client leaves (method, route
//!   template, status, duration, bytes, request ids, trace id, client
//!   address; never the path or query as sent, which can hold ids, emails
//!   and link tokens); and on the answer, its id (the client's when kept,
//!   the server's otherwise) and `X-Content-Type-Options: nosniff` (no
//!   answer is to be read as another type than it says).
//!
//! Hand-written because no library does it: the access line and the
//! metrics need the route template and the bytes sent, which travel with
//! the answer's body to its end, where `TraceLayer`'s callbacks have no
//! place for them.
//!
//! The route template is left by each service's edge
//! ([`crate::http::error::ErrorRenderer`]) in a [`RouteSlot`] this layer puts in
//! the request's extensions when something will read it (the metrics, the
//! access log, exported traces): for an answer no one notes, the slot and
//! the route cost nothing. A request without one (no route matched) is
//! `unmatched`.

use std::convert::Infallible;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll, ready};
use std::time::Instant;

use axum::body::Body;
use axum::extract::MatchedPath;
use axum::http::{HeaderValue, Request, StatusCode, header};
use axum::response::Response;
use bytes::Buf as _;
use http_body::{Body as _, Frame, SizeHint};
use tower::{Layer, Service};
use tower_http::request_id::{MakeRequestId, RequestId};
use tower_http::trace::MakeSpan;

use crate::http::extract::client_address;
use crate::telemetry::metrics::{self, method_label, service_of};
use crate::telemetry::otlp;
use crate::telemetry::trace_context::{self, TraceContext};
use crate::telemetry::{REQUEST_ID, RouteSlot, client_request_id, new_request_id};

/// The route label of a request no route matched.
pub(crate) const UNMATCHED: &str = "unmatched";

/// A client's `x-request-id`, kept because it is short and plain: logged
/// beside the server's id and sent back on the answer.
#[derive(Debug, Clone)]
pub(crate) struct ClientRequestId(pub(crate) HeaderValue);

/// Takes a client's `x-request-id` off the request, so that the server's
/// own is made for every request, and keeps it as [`ClientRequestId`] when
/// it is one worth keeping ([`client_request_id`]).
pub(crate) fn set_aside_client_request_id<B>(mut request: Request<B>) -> Request<B> {
    if let Some(id) = request
        .headers_mut()
        .remove(REQUEST_ID)
        .filter(client_request_id)
    {
        request.extensions_mut().insert(ClientRequestId(id));
    }
    request
}

/// The server's request ids, for tower-http's `SetRequestId`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NewRequestId;

impl MakeRequestId for NewRequestId {
    fn make_request_id<B>(&mut self, _: &Request<B>) -> Option<RequestId> {
        Some(RequestId::new(new_request_id()))
    }
}

/// Each request's span, for tower-http's `TraceLayer`: `request`, with the
/// server's request id, the client's beside it, and (recorded by
/// [`ObserveLayer`]) the trace id; a server span when spans are exported.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RequestSpan;

impl<B> MakeSpan<B> for RequestSpan {
    fn make_span(&mut self, request: &Request<B>) -> tracing::Span {
        let request_id = request
            .extensions()
            .get::<RequestId>()
            .and_then(|id| id.header_value().to_str().ok())
            .unwrap_or("-");
        let client_request_id = request
            .extensions()
            .get::<ClientRequestId>()
            .and_then(|ClientRequestId(id)| id.to_str().ok());
        if otlp::on() {
            // Exported: a server span (named once the route is known), in
            // the caller's trace, which must be said before it is entered.
            let span = tracing::info_span!(
                "request",
                request_id,
                client_request_id,
                trace_id = tracing::field::Empty,
                otel.kind = "server",
            );
            otlp::continue_trace(&span, &TraceContext::continue_or_start(request.headers()));
            span
        } else {
            tracing::info_span!(
                "request",
                request_id,
                client_request_id,
                trace_id = tracing::field::Empty,
            )
        }
    }
}

/// What is noted: metrics only with a recorder installed (`--metrics-bind`),
/// the access log unless turned off.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ObserveLayer {
    pub(crate) metrics: bool,
    pub(crate) access_log: bool,
}

impl<S> Layer<S> for ObserveLayer {
    type Service = Observe<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Observe {
            inner,
            settings: *self,
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Observe<S> {
    inner: S,
    settings: ObserveLayer,
}

impl<S, B> Service<Request<Body>> for Observe<S>
where
    S: Service<Request<Body>, Response = Response<B>, Error = Infallible>,
{
    type Response = Response<Counted<B, Box<Answered>>>;
    type Error = Infallible;
    type Future = Observed<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request<Body>) -> Self::Future {
        let mut trace = TraceContext::continue_or_start(request.headers());
        // The request's span, which `TraceLayer` entered around this call.
        let span = tracing::Span::current();
        if otlp::on() {
            otlp::adopt_ids(&span, &mut trace);
        }
        span.record("trace_id", tracing::field::display(trace.trace_id));
        let request_id = request
            .extensions()
            .get::<RequestId>()
            .map_or_else(new_request_id, |id| id.header_value().clone());
        let client_request_id = request
            .extensions()
            .get::<ClientRequestId>()
            .map(|ClientRequestId(id)| id.clone());
        let method = method_label(request.method());
        let service = service_of(request.uri().path());
        let in_flight = self
            .settings
            .metrics
            .then(|| metrics::http_request_started(method, service));
        // For the metrics: what the body declares (Content-Length); a
        // chunked one is counted as it is read.
        let request_bytes = match request.body().size_hint().exact() {
            Some(declared) => RequestBytes::Declared(declared),
            None if in_flight.is_none() => RequestBytes::Declared(0),
            None => {
                let read = Arc::new(AtomicU64::new(0));
                request = request.map(|body| {
                    Body::new(Counted {
                        body,
                        bytes: 0,
                        tally: Some(read.clone()),
                    })
                });
                RequestBytes::Read(read)
            }
        };
        let route = self.notes_routes().then(|| {
            let slot = RouteSlot::default();
            request.extensions_mut().insert(slot.clone());
            slot
        });
        let note = Note {
            start: Instant::now(),
            route,
            access_log: self.settings.access_log,
            in_flight,
            method,
            service,
            request_bytes,
            request_id,
            client_request_id,
            trace_id: trace.trace_id,
            client: client_address(request.extensions()),
            span: span.clone(),
        };
        Observed {
            answer: trace_context::scope(trace, self.inner.call(request)),
            note: Some(note),
        }
    }
}

impl<S> Observe<S> {
    /// Whether the answers' route templates are read: by the metrics, the
    /// access log (on, and its target enabled) or exported traces.
    fn notes_routes(&self) -> bool {
        self.settings.metrics
            || otlp::on()
            || (self.settings.access_log
                && tracing::enabled!(target: "access", tracing::Level::INFO))
    }
}

pin_project_lite::pin_project! {
    /// The answer on its way: its body is wrapped so that the request is
    /// noted when the body ends.
    pub(crate) struct Observed<F> {
        #[pin]
        answer: tokio::task::futures::TaskLocalFuture<TraceContext, F>,
        note: Option<Note>,
    }

    impl<F> PinnedDrop for Observed<F> {
        fn drop(this: Pin<&mut Self>) {
            // Dropped unanswered: the client went away while the request
            // was handled.
            if let Some(note) = this.project().note.take() {
                note.abandoned();
            }
        }
    }
}

impl<B, F: Future<Output = Result<Response<B>, Infallible>>> Future for Observed<F> {
    type Output = Result<Response<Counted<B, Box<Answered>>>, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let Ok(response) = ready!(this.answer.poll(cx));
        let (mut parts, body) = response.into_parts();
        if let Some(note) = this.note.as_ref() {
            parts.headers.entry(REQUEST_ID).or_insert_with(|| {
                note.client_request_id
                    .clone()
                    .unwrap_or_else(|| note.request_id.clone())
            });
        }
        parts
            .headers
            .entry(header::X_CONTENT_TYPE_OPTIONS)
            .or_insert(HeaderValue::from_static("nosniff"));
        let answered = this.note.take().map(|note| Answered {
            status: parts.status,
            route: note.route.as_ref().and_then(RouteSlot::route),
            note,
        });
        Poll::Ready(Ok(Response::from_parts(
            parts,
            Counted {
                body,
                bytes: 0,
                tally: answered.map(Box::new),
            },
        )))
    }
}

/// What is noted of a request, once its answer's body ends.
pub(crate) struct Note {
    start: Instant,
    /// Where its route template is left, when anything notes it.
    route: Option<RouteSlot>,
    access_log: bool,
    /// The requests-in-flight gauge this request counts in, when metrics
    /// are on.
    in_flight: Option<::metrics::Gauge>,
    method: &'static str,
    service: &'static str,
    request_bytes: RequestBytes,
    /// The server's id of the request.
    request_id: HeaderValue,
    /// The client's, when it sent one worth keeping.
    client_request_id: Option<HeaderValue>,
    trace_id: trace_context::TraceId,
    client: Option<IpAddr>,
    span: tracing::Span,
}

/// A request body's size: declared, or counted as read.
pub(crate) enum RequestBytes {
    Declared(u64),
    Read(Arc<AtomicU64>),
}

impl RequestBytes {
    fn count(&self) -> u64 {
        match self {
            RequestBytes::Declared(n) => *n,
            RequestBytes::Read(read) => read.load(Ordering::Relaxed),
        }
    }
}

/// A [`Note`] with its answer's status and route.
pub(crate) struct Answered {
    note: Note,
    status: StatusCode,
    route: Option<MatchedPath>,
}

/// What a [`Counted`] body tells of its bytes.
pub(crate) trait Tally {
    /// `n` more bytes went through.
    fn add(&mut self, _n: u64) {}
    /// The body ended (or was dropped) after `bytes` bytes.
    fn end(self, _bytes: u64)
    where
        Self: Sized,
    {
    }
}

/// A request body's count, read when its answer ends (whether or not the
/// body was read to its end).
impl Tally for Arc<AtomicU64> {
    fn add(&mut self, n: u64) {
        self.fetch_add(n, Ordering::Relaxed);
    }
}

/// An answer's: the request is noted once its body ends.
impl Tally for Box<Answered> {
    fn end(self, bytes: u64) {
        self.record(bytes);
    }
}

pin_project_lite::pin_project! {
    /// A body whose bytes are counted as they go through: a request body
    /// of no declared length, or an answer's.
    pub(crate) struct Counted<B, T: Tally> {
        #[pin]
        body: B,
        bytes: u64,
        tally: Option<T>,
    }

    impl<B, T: Tally> PinnedDrop for Counted<B, T> {
        fn drop(this: Pin<&mut Self>) {
            // An answer whose client left before its end, or that was never
            // read (empty, or an answer to HEAD).
            let this = this.project();
            if let Some(tally) = this.tally.take() {
                tally.end(*this.bytes);
            }
        }
    }
}

impl<B: http_body::Body, T: Tally> http_body::Body for Counted<B, T> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let this = self.project();
        let frame = ready!(this.body.poll_frame(cx));
        match &frame {
            Some(Ok(frame)) => {
                if let Some(data) = frame.data_ref() {
                    let n = data.remaining() as u64;
                    *this.bytes += n;
                    if let Some(tally) = this.tally.as_mut() {
                        tally.add(n);
                    }
                }
            }
            Some(Err(_)) | None => {
                if let Some(tally) = this.tally.take() {
                    tally.end(*this.bytes);
                }
            }
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

impl Answered {
    /// The metrics and the access-log line of a request whose answer
    /// ended after `bytes` bytes of body.
    fn record(self, bytes: u64) {
        let Answered {
            note,
            status,
            route,
        } = self;
        let elapsed = note.start.elapsed();
        let route = route.as_ref().map_or(UNMATCHED, MatchedPath::as_str);
        if otlp::on() {
            otlp::answered(&note.span, note.method, route, status.as_u16());
        }
        if let Some(in_flight) = &note.in_flight {
            in_flight.decrement(1.0);
            metrics::http_request_finished(
                metrics::HttpRequest {
                    method: note.method,
                    service: note.service,
                    route,
                    status: status.as_u16(),
                },
                elapsed,
                note.request_bytes.count(),
                bytes,
            );
        }
        note.log(route, status.as_u16(), bytes);
    }
}

/// The status the access log gives a request whose client went away before
/// it was answered (nginx's "client closed request").
const CLIENT_GONE: u16 = 499;

impl Note {
    /// A request dropped unanswered: out of the requests in flight, and
    /// logged with [`CLIENT_GONE`] (its route is not known).
    fn abandoned(self) {
        if let Some(in_flight) = &self.in_flight {
            in_flight.decrement(1.0);
        }
        self.log("-", CLIENT_GONE, 0);
    }

    /// The access-log line.
    fn log(&self, route: &str, status: u16, bytes: u64) {
        if !self.access_log {
            return;
        }
        let request_id = self.request_id.to_str().unwrap_or("-");
        tracing::info!(
            target: "access",
            parent: &self.span,
            method = self.method,
            route,
            status,
            duration_us = u64::try_from(self.start.elapsed().as_micros()).unwrap_or(u64::MAX),
            bytes,
            request_id,
            client_request_id = self.client_request_id.as_ref().and_then(|id| id.to_str().ok()),
            trace_id = %self.trace_id,
            client = self.client.map(tracing::field::display),
        );
    }
}
