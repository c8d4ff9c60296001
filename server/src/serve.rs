//! Accepting connections, over TCP or TLS, with the limits that keep slow or
//! idle clients from starving everyone else.
//!
//! - **Header-read timeout**: a connection must deliver a request's headers
//!   within `header_read_timeout`, counted from when it starts waiting for
//!   one (hyper's own timer). A client sending headers a byte at a time is
//!   cut off.
//! - **Keep-alive timeout**: a connection with no request in flight and no
//!   bytes arriving is closed after `keep_alive_timeout`.
//! - **A cap on open connections**, well below the process's file limit.
//!   When every place is taken, the connection that has been idle (or slow
//!   to send its request) the longest is closed for the newcomer; if all of
//!   them are serving requests, the newcomer waits in the kernel's backlog
//!   for one to end. So clients that hold connections without using them can
//!   never keep a real request out.
//!
//! The body-read timeout (408) is a layer of the router
//! (`tower_http::timeout::RequestBodyTimeoutLayer`), and the request timeout
//! (503) one of each service.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::Request;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use hyper_util::server::graceful::{GracefulShutdown, Watcher};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpListener;
use tokio::sync::Notify;
use tokio_rustls::TlsAcceptor;
use tower::ServiceExt as _;

/// How long connections may take, and how many may be open.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub header_read_timeout: Duration,
    pub keep_alive_timeout: Duration,
    pub max_connections: usize,
}

/// How long a graceful stop waits for connections to finish.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(30);

/// Serves `router` on `listener` (with TLS if `tls` is given) until
/// `shutdown` completes; then stops accepting, lets the requests in flight
/// finish, and returns.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    tls: Option<TlsAcceptor>,
    limits: Limits,
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
        .keep_alive_interval(Some(limits.keep_alive_timeout))
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
        let (id, connection) = registry.open();
        tokio::select! {
            () = registry.make_room(id, limits.max_connections) => {}
            () = &mut shutdown => {
                registry.close(id);
                break;
            }
        }
        let served = Served {
            router: router.clone(),
            builder: builder.clone(),
            watcher: graceful.watcher(),
            connection,
            peer,
            limits,
        };
        let (registry, tls) = (registry.clone(), tls.clone());
        tokio::spawn(async move {
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
            registry.close(id);
        });
    }
    drop(listener);
    if tokio::time::timeout(DRAIN_TIMEOUT, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("connections still open after {DRAIN_TIMEOUT:?}; closing them");
    }
}

/// One accepted connection and what serving it needs.
struct Served {
    router: Router,
    builder: Builder<TokioExecutor>,
    watcher: Watcher,
    connection: Arc<Connection>,
    peer: SocketAddr,
    limits: Limits,
}

impl Served {
    /// Serves requests on `io` until the client leaves, the connection is
    /// closed for a newcomer, or it stays idle too long.
    async fn run<I>(self, io: I)
    where
        I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let Served {
            router,
            builder,
            watcher,
            connection,
            peer,
            limits,
        } = self;
        let in_flight = connection.clone();
        let service = hyper::service::service_fn(move |mut request: Request<Incoming>| {
            request.extensions_mut().insert(ConnectInfo(peer));
            let busy = Busy::start(in_flight.clone());
            let router = router.clone();
            async move {
                let response = router.oneshot(request.map(Body::new)).await;
                // Busy until the answer's body is sent, not only started.
                Ok::<_, Infallible>(response.map_or_else(
                    |never| match never {},
                    |r| r.map(|body| Body::new(WhileSending { body, _busy: busy })),
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
                () = connection.close.notified() => return,
                _ = ticks.tick() => {
                    if connection.idle_for(limits.keep_alive_timeout) {
                        return;
                    }
                }
            }
        }
    }
}

/// How often a connection checks whether it has been idle too long.
fn tick_for(keep_alive: Duration) -> Duration {
    (keep_alive / 4).clamp(Duration::from_millis(50), Duration::from_secs(1))
}

/// What the accept loop knows of a connection.
#[derive(Debug)]
struct Connection {
    /// Requests in flight (answers not fully sent).
    busy: AtomicUsize,
    /// Bytes arrived since it last became idle: a request is on its way.
    reading: AtomicBool,
    /// Asked to close, for a newcomer: not to be chosen again.
    closing: AtomicBool,
    /// Since when it has had no request in flight.
    idle_since: Mutex<Instant>,
    /// Ends it (a newcomer needs its place).
    close: Notify,
}

impl Connection {
    fn new() -> Self {
        Connection {
            busy: AtomicUsize::new(0),
            reading: AtomicBool::new(false),
            closing: AtomicBool::new(false),
            idle_since: Mutex::new(Instant::now()),
            close: Notify::new(),
        }
    }

    fn idle_since(&self) -> Instant {
        *self
            .idle_since
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// No request in flight, none arriving, for `timeout`.
    fn idle_for(&self, timeout: Duration) -> bool {
        self.busy.load(Ordering::SeqCst) == 0
            && !self.reading.load(Ordering::SeqCst)
            && self.idle_since().elapsed() >= timeout
    }

    /// Serving nothing: may be closed for a newcomer.
    fn closable(&self) -> bool {
        self.busy.load(Ordering::SeqCst) == 0 && !self.closing.load(Ordering::SeqCst)
    }
}

/// A request in flight on a connection, until its answer is sent.
struct Busy(Arc<Connection>);

impl Busy {
    fn start(connection: Arc<Connection>) -> Self {
        connection.busy.fetch_add(1, Ordering::SeqCst);
        Busy(connection)
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        if self.0.busy.fetch_sub(1, Ordering::SeqCst) == 1 {
            *self
                .0
                .idle_since
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = Instant::now();
            self.0.reading.store(false, Ordering::SeqCst);
        }
    }
}

/// An answer's body, keeping its request counted as in flight until it is
/// sent (or dropped).
struct WhileSending {
    body: Body,
    _busy: Busy,
}

impl hyper::body::Body for WhileSending {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// A connection's socket, noting when bytes arrive (a request is coming).
struct Tracked<S> {
    inner: S,
    connection: Arc<Connection>,
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
            self.connection.reading.store(true, Ordering::SeqCst);
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
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

/// The open connections.
#[derive(Default)]
struct Registry {
    open: Mutex<(u64, HashMap<u64, Arc<Connection>>)>,
    /// A connection closed.
    closed: Notify,
}

impl Registry {
    fn open(&self) -> (u64, Arc<Connection>) {
        let connection = Arc::new(Connection::new());
        let mut open = self.lock();
        let id = open.0;
        open.0 += 1;
        open.1.insert(id, connection.clone());
        (id, connection)
    }

    fn close(&self, id: u64) {
        self.lock().1.remove(&id);
        self.closed.notify_waiters();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (u64, HashMap<u64, Arc<Connection>>)> {
        self.open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Returns once the connections (`newcomer` included) are at most
    /// `max`: closes the one idle the longest for it, or waits for one to end.
    async fn make_room(&self, newcomer: u64, max: usize) {
        loop {
            let closed = self.closed.notified();
            tokio::pin!(closed);
            closed.as_mut().enable();
            {
                let open = self.lock();
                let closing = open
                    .1
                    .values()
                    .filter(|c| c.closing.load(Ordering::SeqCst))
                    .count();
                if open.1.len() - closing <= max {
                    if open.1.len() <= max {
                        return;
                    }
                } else if let Some(victim) = open
                    .1
                    .iter()
                    .filter(|(id, c)| **id != newcomer && c.closable())
                    .min_by_key(|(_, c)| c.idle_since())
                    .map(|(_, c)| c.clone())
                {
                    victim.closing.store(true, Ordering::SeqCst);
                    victim.close.notify_one();
                }
            }
            closed.await;
        }
    }
}

/// The most connections a process with this many file descriptors should
/// hold: half of them, the rest left for the database, mail, files.
pub fn default_max_connections() -> usize {
    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile)
        .current
        .unwrap_or(4096);
    usize::try_from(limit / 2).unwrap_or(usize::MAX).max(16)
}
