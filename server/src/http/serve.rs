//! Accepting connections, over TCP or TLS, with the limits that keep slow or
//! idle clients from starving everyone else.
//!
//! - **Header-read timeout**: a connection must deliver a request's headers
//!   within `header_read_timeout`, counted from when it starts waiting for
//!   one (hyper's own timer). A client sending headers a byte at a time is
//!   cut off.
//! - **Keep-alive timeout**: a connection with no request in flight on which
//!   nothing has been read or written for `keep_alive_timeout` is closed.
//! - **Send timeout**: a connection whose client stops taking its answer
//!   (writes blocked) for `send_timeout` is closed, busy or not.
//! - **A cap on open connections**, well below the process's file limit.
//!   When every place is taken, the connection that has been quiet the
//!   longest (no request in flight, or an answer its client does not take)
//!   is closed for the newcomer; if all of them are working, the newcomer
//!   waits in the kernel's backlog for one to end. So clients that hold
//!   connections without using them can never keep a real request out.
//!
//! What a connection does is followed from its traffic: the socket notes
//! each read and write (and a write the client does not take), and the
//! service counts the requests in flight until their answers are sent.
//!
//! The body-read timeout (408) is a layer of the router
//! (`deadline::BodyReadTimeoutLayer`), and the request timeout (503) one of
//! each service.
//!
//! The application reaches [`serve`] as the service it is, its type known to
//! the compiler, and is erased once, at start ([`Serving`]): boxed as a
//! `BoxCloneSyncService`, each request paid a box for the whole stack's
//! future (and its copy into it), and each answer's body two boxes more.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::ConnectInfo;
use axum::http::{HeaderValue, Request, Version, header};
use axum::response::Response;
use futures::future::BoxFuture;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use hyper_util::server::graceful::{GracefulShutdown, Watcher};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpListener;
use tokio::sync::Notify;
use tokio_rustls::TlsAcceptor;
use tower::{Service, ServiceExt as _};
use tower_http::BoxError;

use crate::core::lifecycle::Draining;
use crate::telemetry::metrics;

/// How long connections may take, and how many may be open.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub(crate) header_read_timeout: Duration,
    pub(crate) keep_alive_timeout: Duration,
    pub(crate) send_timeout: Duration,
    pub(crate) max_connections: usize,
    /// How long a stop waits for the requests in flight (the request
    /// timeout, and a moment to send the answers).
    pub(crate) finish_timeout: Duration,
}

/// The whole application, served ([`serving`]): what [`crate::app::Server`]
/// keeps, its type erased once rather than for each request.
pub(crate) type Serving = Box<
    dyn FnOnce(
            TcpListener,
            Option<TlsAcceptor>,
            Limits,
            Draining,
            BoxFuture<'static, ()>,
        ) -> BoxFuture<'static, ()>
        + Send,
>;

/// What [`serve`] serves: the whole application as one service (the router
/// inside the plumbing every answer shares), of any type whose answers'
/// bodies hyper can send; a name for the bounds every function here needs.
pub(crate) trait Application:
    Service<
        Request<Body>,
        Response = Response<Self::AnswerBody>,
        Error = Infallible,
        Future: Send + 'static,
    > + Clone
    + Send
    + Sync
    + 'static
{
    type AnswerBody: http_body::Body<Data = Bytes, Error: Into<BoxError>> + Send + 'static;
}

impl<S, B> Application for S
where
    S: Service<Request<Body>, Response = Response<B>, Error = Infallible>
        + Clone
        + Send
        + Sync
        + 'static,
    S::Future: Send + 'static,
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type AnswerBody = B;
}

/// `router` to be served by [`serve`].
pub(crate) fn serving(router: impl Application) -> Serving {
    Box::new(move |listener, tls, limits, draining, shutdown| {
        Box::pin(serve(listener, router, tls, limits, draining, shutdown))
    })
}

/// For a newcomer, a connection quiet this long is closed rather than one
/// that was active more recently (which may be about to send a request).
const EVICTION_GRACE_MS: u64 = 250;

/// How often HTTP/2 pings an idle client (to find dead peers); longer than
/// the keep-alive timeout, so that the pings do not keep it open.
const HTTP2_PING_EVERY: Duration = Duration::from_secs(20);

/// Serves `router` on `listener` (with TLS if `tls` is given) until
/// `shutdown` completes; then stops accepting, lets the requests in flight
/// finish (for at most `limits.finish_timeout`), and returns. While
/// `draining`, HTTP/1 answers say `Connection: close`, so that clients and
/// proxies open their next connection elsewhere rather than find this one
/// closed under them.
async fn serve<S: Application>(
    listener: TcpListener,
    router: S,
    tls: Option<TlsAcceptor>,
    limits: Limits,
    draining: Draining,
    shutdown: impl Future<Output = ()>,
) {
    let registry = Arc::new(Registry::default());
    let graceful = GracefulShutdown::new();
    let mut builder = Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout);
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(Some(HTTP2_PING_EVERY.max(limits.keep_alive_timeout * 2)))
        .keep_alive_timeout(limits.header_read_timeout);
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors, most likely: wait for some to
                    // be freed rather than spin.
                    tracing::warn!(error = %e, "cannot accept a connection");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        // Removed from the registry when dropped, whatever ends the task.
        let place = registry.open();
        tokio::select! {
            () = registry.make_room(place.id, limits.max_connections) => {}
            () = &mut shutdown => break,
        }
        let served = Served {
            draining: draining.clone(),
            router: router.clone(),
            builder: builder.clone(),
            watcher: graceful.watcher(),
            registry: registry.clone(),
            connection: place.connection.clone(),
            peer,
            limits,
        };
        let tls = tls.clone();
        tokio::spawn(async move {
            let _place = place;
            let stream = Tracked {
                inner: stream,
                connection: served.connection.clone(),
            };
            match tls {
                None => served.run(stream).await,
                Some(tls) => {
                    let handshake =
                        tokio::time::timeout(limits.header_read_timeout, tls.accept(stream));
                    tokio::select! {
                        done = handshake => match done {
                            Ok(Ok(stream)) => served.run(stream).await,
                            Ok(Err(e)) => tracing::debug!(error = %e, %peer, "TLS handshake failed"),
                            Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
                        },
                        // Closed for a newcomer before it even said hello.
                        () = served.connection.close.notified() => {}
                    }
                }
            }
        });
    }
    drop(listener);
    if tokio::time::timeout(limits.finish_timeout, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!(
            "connections still open after {:?}; leaving them",
            limits.finish_timeout
        );
    }
}

/// One accepted connection and what serving it needs.
struct Served<S> {
    draining: Draining,
    router: S,
    builder: Builder<TokioExecutor>,
    watcher: Watcher,
    registry: Arc<Registry>,
    connection: Arc<Connection>,
    peer: SocketAddr,
    limits: Limits,
}

impl<S: Application> Served<S> {
    /// Serves requests on `io` until the client leaves, the connection is
    /// closed for a newcomer, stays quiet too long, or its client stops
    /// taking its answer.
    async fn run<I>(self, io: I)
    where
        I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let Served {
            draining,
            router,
            builder,
            watcher,
            registry,
            connection,
            peer,
            limits,
        } = self;
        let in_flight = connection.clone();
        // The connection's own copy of the stack, called for each of its
        // requests: cloning the whole stack for each request (as `oneshot`
        // needs) costs a box and every layer's clone. hyper calls a connection's service from that connection's
        // task, one request at a time, so the lock is never contended.
        let router = std::sync::Mutex::new(router);
        let service = hyper::service::service_fn(move |mut request: Request<Incoming>| {
            request.extensions_mut().insert(ConnectInfo(peer));
            let busy = Busy::start(in_flight.clone());
            let close = draining.is_on() && request.version() <= Version::HTTP_11;
            let answer = call_when_ready(&router, request.map(Body::new));
            async move {
                let response = answer.await;
                // Busy until the answer's body is taken, not only started.
                Ok::<_, Infallible>(response.map_or_else(
                    |never| match never {},
                    |mut r| {
                        if close {
                            r.headers_mut()
                                .insert(header::CONNECTION, HeaderValue::from_static("close"));
                        }
                        r.map(|body| WhileSending { body, _busy: busy })
                    },
                ))
            }
        });
        let served = builder.serve_connection_with_upgrades(TokioIo::new(io), service);
        let served = watcher.watch(served.into_owned());
        tokio::pin!(served);
        let mut ticks = tokio::time::interval(tick_for(limits.keep_alive_timeout));
        loop {
            tokio::select! {
                _ = &mut served => return,
                () = connection.close.notified() => {
                    // Chosen for a newcomer, but a request may have begun
                    // since: then it stays, and the newcomer looks again.
                    if !connection.is_working(now_ms()) {
                        metrics::connection_evicted();
                        return;
                    }
                    connection.closing.store(false, Ordering::SeqCst);
                    registry.closed.notify_waiters();
                }
                _ = ticks.tick() => {
                    let now = now_ms();
                    if connection.keep_alive_over(now, limits.keep_alive_timeout)
                        || connection.send_stalled(now, limits.send_timeout)
                    {
                        return;
                    }
                }
            }
        }
    }
}

/// Calls `router` at once when it is ready (the router and every layer
/// around it always are), else a clone of it once it is ready.
fn call_when_ready<S>(
    router: &std::sync::Mutex<S>,
    request: Request<Body>,
) -> futures::future::Either<S::Future, tower::util::Oneshot<S, Request<Body>>>
where
    S: Service<Request<Body>, Error = Infallible> + Clone,
{
    use futures::future::Either;
    // A poisoned lock still holds a usable service: its calls cannot leave
    // it half changed.
    let mut router = router
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut context = Context::from_waker(std::task::Waker::noop());
    match router.poll_ready(&mut context) {
        Poll::Ready(Ok(())) => Either::Left(router.call(request)),
        Poll::Ready(Err(never)) => match never {},
        Poll::Pending => Either::Right(router.clone().oneshot(request)),
    }
}

/// How often a connection checks its timeouts.
fn tick_for(keep_alive: Duration) -> Duration {
    (keep_alive / 4).clamp(Duration::from_millis(50), Duration::from_secs(1))
}

/// Milliseconds since the first call (a clock cheap to keep in atomics).
fn now_ms() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    u64::try_from(START.get_or_init(Instant::now).elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// What the accept loop knows of a connection, from its traffic.
#[derive(Debug)]
struct Connection {
    /// Requests in flight (answers not fully taken).
    busy: AtomicUsize,
    /// When the last request in flight ended (or the connection opened).
    idle_since: AtomicU64,
    /// When bytes last arrived.
    last_read: AtomicU64,
    /// When the first bytes of a request not yet dispatched arrived (0:
    /// none): a real client's headers take milliseconds, a slow one's
    /// seconds.
    request_arriving_since: AtomicU64,
    /// When bytes last left.
    last_write: AtomicU64,
    /// Since when a write has waited for the client to take it (0: none).
    write_blocked_since: AtomicU64,
    /// Asked to close, for a newcomer: not to be chosen again.
    closing: AtomicBool,
    /// Ends it (a newcomer needs its place).
    close: Notify,
}

impl Connection {
    fn new() -> Self {
        let now = now_ms();
        Connection {
            busy: AtomicUsize::new(0),
            idle_since: AtomicU64::new(now),
            last_read: AtomicU64::new(now),
            request_arriving_since: AtomicU64::new(0),
            last_write: AtomicU64::new(now),
            write_blocked_since: AtomicU64::new(0),
            closing: AtomicBool::new(false),
            close: Notify::new(),
        }
    }

    /// When anything last happened on it.
    fn last_activity(&self) -> u64 {
        self.idle_since
            .load(Ordering::SeqCst)
            .max(self.last_read.load(Ordering::SeqCst))
            .max(self.last_write.load(Ordering::SeqCst))
    }

    fn is_busy(&self) -> bool {
        self.busy.load(Ordering::SeqCst) > 0
    }

    fn write_blocked_for(&self, now: u64) -> Option<u64> {
        match self.write_blocked_since.load(Ordering::SeqCst) {
            0 => None,
            since => Some(now.saturating_sub(since)),
        }
    }

    /// Nothing in flight, nothing read or written, for `timeout`, at `now`.
    fn keep_alive_over(&self, now: u64, timeout: Duration) -> bool {
        !self.is_busy()
            && self.write_blocked_for(now).is_none()
            && now.saturating_sub(self.last_activity()) >= duration_ms(timeout)
    }

    /// Its client has not taken the answer for `timeout`, at `now`.
    fn send_stalled(&self, now: u64, timeout: Duration) -> bool {
        self.write_blocked_for(now)
            .is_some_and(|blocked| blocked >= duration_ms(timeout))
    }

    /// Serving a request whose client takes the answer: not to be closed
    /// for a newcomer.
    fn is_working(&self, now: u64) -> bool {
        self.is_busy()
            && self
                .write_blocked_for(now)
                .is_none_or(|blocked| blocked < EVICTION_GRACE_MS)
    }

    /// Doing nothing useful for `grace_ms` at `now`: idle and quiet, a
    /// request arriving that slowly, or an answer its client does not take.
    fn quiet_for(&self, now: u64, grace_ms: u64) -> bool {
        let idle = !self.is_busy()
            && match self.request_arriving_since.load(Ordering::SeqCst) {
                0 => now.saturating_sub(self.last_activity()) >= grace_ms,
                since => now.saturating_sub(since) >= grace_ms,
            };
        let stuck = self
            .write_blocked_for(now)
            .is_some_and(|blocked| blocked >= grace_ms);
        idle || stuck
    }
}

fn duration_ms(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// A request in flight on a connection, until its answer is taken.
struct Busy(Arc<Connection>);

impl Busy {
    fn start(connection: Arc<Connection>) -> Self {
        connection.busy.fetch_add(1, Ordering::SeqCst);
        connection.request_arriving_since.store(0, Ordering::SeqCst);
        Busy(connection)
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        if self.0.busy.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.idle_since.store(now_ms(), Ordering::SeqCst);
        }
    }
}

pin_project_lite::pin_project! {
    /// An answer's body, keeping its request counted as in flight until it
    /// is taken (or dropped).
    struct WhileSending<B> {
        #[pin]
        body: B,
        _busy: Busy,
    }
}

impl<B: hyper::body::Body<Data = Bytes>> hyper::body::Body for WhileSending<B> {
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        self.project().body.poll_frame(cx)
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }
}

/// A connection's socket, noting when bytes arrive and leave, and when a
/// write waits for the client.
struct Tracked<S> {
    inner: S,
    connection: Arc<Connection>,
}

impl<S> Tracked<S> {
    /// Notes how a write went: bytes leaving end a wait, a write that must
    /// wait starts one. (A flush that finds nothing to do changes neither.)
    fn note_write<T>(&self, polled: &Poll<io::Result<T>>, progressed: bool) {
        let connection = &self.connection;
        if progressed {
            connection.last_write.store(now_ms(), Ordering::SeqCst);
            connection.write_blocked_since.store(0, Ordering::SeqCst);
        } else if polled.is_pending() {
            let _ = connection.write_blocked_since.compare_exchange(
                0,
                now_ms().max(1),
                Ordering::SeqCst,
                Ordering::SeqCst,
            );
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Tracked<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            let (connection, now) = (&self.connection, now_ms());
            connection.last_read.store(now, Ordering::SeqCst);
            if !connection.is_busy() {
                let _ = connection.request_arriving_since.compare_exchange(
                    0,
                    now.max(1),
                    Ordering::SeqCst,
                    Ordering::SeqCst,
                );
            }
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Tracked<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        let progressed = matches!(polled, Poll::Ready(Ok(n)) if n > 0);
        self.note_write(&polled, progressed);
        polled
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        let progressed = matches!(polled, Poll::Ready(Ok(n)) if n > 0);
        self.note_write(&polled, progressed);
        polled
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let polled = Pin::new(&mut self.inner).poll_flush(cx);
        self.note_write(&polled, false);
        polled
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

/// The open connections.
#[derive(Default)]
struct Registry {
    open: Mutex<(u64, HashMap<u64, Arc<Connection>>)>,
    /// A connection closed (or refused to close for a newcomer).
    closed: Notify,
}

/// A connection's place in the registry, given back when dropped.
struct Place {
    registry: Arc<Registry>,
    id: u64,
    connection: Arc<Connection>,
}

impl Drop for Place {
    fn drop(&mut self) {
        self.registry.lock().1.remove(&self.id);
        self.registry.closed.notify_waiters();
        metrics::connection_open(-1.0);
    }
}

impl Registry {
    fn open(self: &Arc<Self>) -> Place {
        let connection = Arc::new(Connection::new());
        metrics::connection_open(1.0);
        let mut open = self.lock();
        let id = open.0;
        open.0 += 1;
        open.1.insert(id, connection.clone());
        Place {
            registry: self.clone(),
            id,
            connection,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (u64, HashMap<u64, Arc<Connection>>)> {
        self.open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Returns once the connections (`newcomer` included) are at most
    /// `max`: closes the one quiet the longest for it, or waits for one to
    /// end or fall quiet.
    async fn make_room(&self, newcomer: u64, max: usize) {
        loop {
            let closed = self.closed.notified();
            tokio::pin!(closed);
            closed.as_mut().enable();
            {
                let now = now_ms();
                let open = self.lock();
                let closing = open
                    .1
                    .values()
                    .filter(|c| c.closing.load(Ordering::SeqCst))
                    .count();
                if open.1.len() <= max {
                    return;
                }
                // The quietest connection that is not working: one quiet
                // for a while before one active a moment ago.
                if open.1.len() - closing > max
                    && let Some(victim) = open
                        .1
                        .iter()
                        .filter(|(id, c)| {
                            **id != newcomer
                                && !c.closing.load(Ordering::SeqCst)
                                && !c.is_working(now)
                        })
                        .min_by_key(|(_, c)| {
                            (!c.quiet_for(now, EVICTION_GRACE_MS), c.last_activity())
                        })
                        .map(|(_, c)| c.clone())
                {
                    victim.closing.store(true, Ordering::SeqCst);
                    victim.close.notify_one();
                }
            }
            // A place frees when a connection ends; one may also fall quiet
            // without a notice, so look again soon.
            let _ = tokio::time::timeout(Duration::from_millis(200), closed).await;
        }
    }
}

/// Connections waiting to be accepted, at most (the kernel caps it at
/// `net.core.somaxconn`): a burst of clients, some of them hostile, must
/// not see their connection attempts dropped (a dropped SYN is retried only
/// a second later).
const LISTEN_BACKLOG: u32 = 4096;

/// A listening socket on `address`, with room for bursts of connections.
pub(crate) fn listen(address: SocketAddr) -> io::Result<TcpListener> {
    let socket = if address.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(address)?;
    socket.listen(LISTEN_BACKLOG)
}

/// The most connections a process with this many file descriptors should
/// hold: half of them, the rest left for the database, mail, files.
pub(crate) fn default_max_connections() -> usize {
    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile)
        .current
        .unwrap_or(4096);
    usize::try_from(limit / 2).unwrap_or(usize::MAX).max(16)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A connection opened at `opened` (ms on the connection clock).
    fn connection_at(opened: u64) -> Connection {
        let connection = Connection::new();
        for time in [
            &connection.idle_since,
            &connection.last_read,
            &connection.last_write,
        ] {
            time.store(opened, Ordering::SeqCst);
        }
        connection
    }

    #[test]
    fn a_connection_quiet_past_the_keep_alive_timeout_is_over() {
        let connection = connection_at(1_000);
        assert!(!connection.keep_alive_over(5_999, Duration::from_secs(5)));
        assert!(connection.keep_alive_over(6_000, Duration::from_secs(5)));
        connection.busy.store(1, Ordering::SeqCst);
        assert!(!connection.keep_alive_over(60_000, Duration::from_secs(5)));
    }

    #[test]
    fn a_connection_whose_client_stops_reading_is_stalled_not_idle() {
        let connection = connection_at(1_000);
        connection.busy.store(1, Ordering::SeqCst);
        connection
            .write_blocked_since
            .store(2_000, Ordering::SeqCst);
        assert!(!connection.send_stalled(3_000, Duration::from_secs(2)));
        assert!(connection.send_stalled(4_000, Duration::from_secs(2)));
        assert!(!connection.keep_alive_over(60_000, Duration::from_secs(2)));
        assert!(
            connection.quiet_for(4_000, 1_000),
            "it may make room for a newcomer"
        );
    }

    #[test]
    fn a_connection_still_sending_its_answer_is_not_idle() {
        let connection = connection_at(1_000);
        // The last request ended long ago, but bytes left just now.
        connection.last_write.store(20_000, Ordering::SeqCst);
        assert!(!connection.keep_alive_over(20_500, Duration::from_secs(5)));
        assert!(!connection.quiet_for(20_500, 1_000));
        assert!(connection.quiet_for(21_000, 1_000));
    }

    #[test]
    fn a_request_on_its_way_is_not_closed_for_a_newcomer() {
        let connection = connection_at(1_000);
        connection.last_read.store(9_800, Ordering::SeqCst);
        connection
            .request_arriving_since
            .store(9_800, Ordering::SeqCst);
        assert!(!connection.quiet_for(10_000, 1_000));
        assert!(!connection.keep_alive_over(10_000, Duration::from_secs(5)));
    }

    #[test]
    fn a_request_dripping_in_for_seconds_may_be_closed_for_a_newcomer() {
        let connection = connection_at(1_000);
        // Its first byte came at 2 s; one more arrives every half second.
        connection
            .request_arriving_since
            .store(2_000, Ordering::SeqCst);
        connection.last_read.store(9_800, Ordering::SeqCst);
        assert!(connection.quiet_for(10_000, 1_000));
    }
}
