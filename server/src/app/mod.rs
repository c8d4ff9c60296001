//! Assembles the services, the HTTP plumbing and the background tasks into
//! one server.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use axum::Router;
use axum::body::Body;
use axum::extract::DefaultBodyLimit;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Request, header};
use axum::middleware::{self, Next};
use axum::response::Response;
use ipnet::IpNet;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tower::ServiceBuilder;
use tower::util::MapRequestLayer;
use tower_http::set_header::SetResponseHeaderLayer;

pub mod fixtures;

use crate::access::Access;
use crate::config::{Config, redact_url};
use crate::core::lifecycle::Draining;
use crate::core::password::Hasher;
use crate::http::compression::CompressionLayer;
use crate::http::cors::CorsLayer;
use crate::http::deadline::BodyReadTimeoutLayer;
use crate::http::docs;
use crate::http::edge::{Check, Checked, EdgeChecks, EdgeLayer};
use crate::http::error::{Error, render_errors_around, render_now};
use crate::http::extract::{self, refuse_malformed};
use crate::http::idempotency::{self, Idempotency};
use crate::http::observe::ObserveLayer;
use crate::http::serve::Serving;
use crate::http::{serve, tls};
use crate::limits::Limiter;
use crate::limits::shared_counters::SharedCounters;
use crate::mail::Mailer;
use crate::petstore::state::PetstoreState;
use crate::petstore::{self, ops::demo_data, wire::PetstoreErrors};
use crate::portfolio::state::PortfolioState;
use crate::portfolio::{self, wire::PortfolioErrors};
use crate::storage::Database;
use crate::storage::backup::DatabaseLock;
use crate::telemetry::metrics::{self as metrics, Sampler};

/// A server bound to its address, ready to run.
pub struct Server {
    listener: TcpListener,
    /// The whole application, to be served on `listener`.
    serving: Serving,
    tls: Option<TlsAcceptor>,
    limits: serve::Limits,
    local_addr: SocketAddr,
    /// `/metrics`' own listener, and what sets the gauges read when scraped.
    metrics: Option<(
        TcpListener,
        metrics_exporter_prometheus::PrometheusHandle,
        Sampler,
    )>,
    background: Vec<tokio::task::JoinHandle<()>>,
    /// Held while the server runs (a restore waits for it to stop).
    _database_lock: Option<DatabaseLock>,
    /// On at a stop: readiness answers 503 through the drain period.
    draining: Draining,
    drain: Duration,
    /// Stopped gracefully: it finishes the email in hand.
    mail_worker: (Mailer, tokio::task::JoinHandle<()>),
    /// Ends by itself once the router (and so every sender) is gone, after
    /// writing what it still holds.
    analytics_writer: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("local_addr", &self.local_addr)
            .finish_non_exhaustive()
    }
}

/// Connects the configured database (running migrations), making the data
/// directory first for a SQLite file: the server and the operator's CLI
/// alike.
pub(crate) async fn open_database(config: &Config) -> anyhow::Result<Database> {
    let database_url = config.database_url();
    if database_url.starts_with("sqlite:") && !database_url.contains(":memory:") {
        std::fs::create_dir_all(&config.data_dir).with_context(|| {
            format!(
                "cannot create the data directory {}",
                config.data_dir.display()
            )
        })?;
    }
    Database::connect_with(&database_url, config.database_max_connections).await
}

impl Server {
    /// Starts up as the steps below read: checks the configuration, opens
    /// storage, binds the listener, builds both services, fills empty
    /// tables, and starts the background tasks. Nothing is served until
    /// [`Server::run`].
    pub async fn bind(config: Config) -> anyhow::Result<Self> {
        // TLS for outgoing HTTPS (the social network) uses ring, like lettre's
        // SMTP TLS; reqwest takes the process-wide default. A second install
        // (tests start many servers) fails harmlessly.
        let _ = rustls::crypto::ring::default_provider().install_default();
        check_settings(&config)?;
        let mut storage = Storage::open(&config).await?;
        let endpoint = Endpoint::bind(&config)?;
        // Recording starts before the services are built: they keep the
        // handles of their metrics.
        let recorder = endpoint
            .metrics_listener
            .is_some()
            .then(metrics::install)
            .transpose()?;
        let services = Services::build(&config, &storage, &endpoint.public_url).await?;
        load_startup_data(&config, &storage.db).await?;
        let background = services.spawn_background(&config, &storage.db);
        let metrics = endpoint
            .metrics_listener
            .zip(recorder)
            .map(|(listener, handle)| (listener, handle, services.metrics_sampler(&storage)));
        let draining = services.portfolio.draining.clone();
        let serving = build_router(
            &config,
            endpoint.tls.is_some(),
            services.petstore,
            services.portfolio,
        )?;
        Ok(Self {
            listener: endpoint.listener,
            serving,
            tls: endpoint.tls,
            limits: endpoint.limits,
            local_addr: endpoint.local_addr,
            metrics,
            background,
            _database_lock: storage.database_lock.take(),
            draining,
            drain: Duration::from_secs(config.http.shutdown_drain_secs),
            mail_worker: services.mail_worker,
            analytics_writer: services.analytics_writer,
        })
    }

    /// The address actually bound (the port is chosen when 0 was asked).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Where `/metrics` is served, if it is (`--metrics-bind`).
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics
            .as_ref()
            .and_then(|(listener, _, _)| listener.local_addr().ok())
    }

    /// `https` with TLS, `http` without.
    pub fn scheme(&self) -> &'static str {
        if self.tls.is_some() { "https" } else { "http" }
    }

    /// Serves until `shutdown` completes, then finishes the requests in flight.
    pub async fn run(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> anyhow::Result<()> {
        let Server {
            listener,
            serving,
            tls,
            limits,
            background,
            mail_worker: (mailer, mail_task),
            analytics_writer,
            metrics,
            draining,
            drain,
            ..
        } = self;
        // The metrics stay up until the last request is answered.
        let (metrics_stop, metrics_stopped) = tokio::sync::oneshot::channel::<()>();
        let metrics_task = metrics.map(|(listener, handle, sample)| {
            tokio::spawn(metrics::serve(listener, handle, sample, async move {
                let _ = metrics_stopped.await;
            }))
        });
        // Asked to stop: readiness says 503 at once, and the listener goes on
        // serving through the drain period, so that a load balancer that
        // has not yet seen it sends nothing to a closed port; then it stops
        // accepting and finishes what is in flight.
        let stop_accepting = {
            let draining = draining.clone();
            async move {
                shutdown.await;
                draining.start();
                tracing::info!(
                    drain_secs = drain.as_secs(),
                    "stopping: readiness answers 503; serving on through the drain period"
                );
                tokio::time::sleep(drain).await;
                tracing::info!("no longer accepting connections; finishing requests in flight");
            }
        };
        serving(listener, tls, limits, draining, Box::pin(stop_accepting)).await;
        // Let the mail worker finish the email in hand, so that no email stays
        // leased, and the analytics writer write what it holds (both bounded);
        // the other tasks hold nothing.
        mailer.stop();
        let mut mail_task = mail_task;
        if tokio::time::timeout(MAIL_STOP_TIMEOUT, &mut mail_task)
            .await
            .is_err()
        {
            // Cut off mid-delivery: what it holds goes back to the outbox.
            mail_task.abort();
            match mailer.hand_back_leases().await {
                Ok(n) => tracing::warn!(
                    handed_back = n,
                    "the mail worker did not stop in time; its emails are due again"
                ),
                Err(e) => tracing::warn!(error = %e, "cannot hand back the mail worker's leases"),
            }
        }
        if tokio::time::timeout(Duration::from_secs(10), analytics_writer)
            .await
            .is_err()
        {
            tracing::warn!("the analytics writer did not finish in time");
        }
        for task in background {
            task.abort();
        }
        let _ = metrics_stop.send(());
        if let Some(task) = metrics_task {
            let _ = task.await;
        }
        Ok(())
    }
}

/// At a stop, how long the mail worker may take to finish the emails in
/// hand (an SMTP exchange each, bounded by its own timeout).
const MAIL_STOP_TIMEOUT: Duration = Duration::from_secs(10);

/// At a stop, what answers in flight get beyond the request timeout to be
/// sent.
const FINISH_GRACE: Duration = Duration::from_secs(2);

/// The settings no type can hold to: refused before anything opens.
fn check_settings(config: &Config) -> anyhow::Result<()> {
    anyhow::ensure!(
        config.petstore.failed_logins_per_minute > 0,
        "petstore.failed_logins_per_minute must be at least 1"
    );
    anyhow::ensure!(
        config.petstore.requests_per_minute != Some(0),
        "petstore.requests_per_minute must be at least 1 (leave it out for no limit)"
    );
    Ok(())
}

/// Where the server keeps what it keeps: the database (migrated), and the
/// rate limits' counters in Redis when replicas share them.
struct Storage {
    db: Database,
    /// On a SQLite file: its lock, shared, so that no restore replaces the
    /// database under the server.
    database_lock: Option<DatabaseLock>,
    shared_counters: Option<Arc<SharedCounters>>,
}

impl Storage {
    async fn open(config: &Config) -> anyhow::Result<Self> {
        // Taken before the file is opened: a restore under way is waited
        // for, and none starts while the server runs.
        let database_lock = match crate::storage::backup::sqlite_file(&config.database_url()) {
            Ok(file) => {
                if let Some(folder) = file.parent().filter(|f| !f.as_os_str().is_empty()) {
                    std::fs::create_dir_all(folder).with_context(|| {
                        format!("cannot create the database's folder {}", folder.display())
                    })?;
                }
                Some(DatabaseLock::shared(&file)?)
            }
            Err(_) => None,
        };
        let db = open_database(config).await?;
        // The caches follow the other replicas' writes (PostgreSQL).
        db.follow_changes(&config.database_url());
        tracing::info!(database = %redact_url(&config.database_url()), "database ready");
        let shared_counters = config
            .redis_url
            .as_deref()
            .map(|url| SharedCounters::new(url, &config.redis_key_prefix))
            .transpose()?
            .map(Arc::new);
        Ok(Storage {
            db,
            database_lock,
            shared_counters,
        })
    }

    /// A limiter counting in Redis when replicas share counters.
    fn limiter(&self, limiter: Limiter, name: &'static str) -> Arc<Limiter> {
        Arc::new(limiter.shared_as(self.shared_counters.as_ref(), name))
    }
}

/// The listening socket, with its TLS, the URL links are built from, and
/// the connections' limits.
struct Endpoint {
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    local_addr: SocketAddr,
    public_url: String,
    limits: serve::Limits,
    metrics_listener: Option<TcpListener>,
}

impl Endpoint {
    fn bind(config: &Config) -> anyhow::Result<Self> {
        let tls = match (&config.tls_cert, &config.tls_key) {
            (Some(cert), Some(key)) => Some(tls::acceptor(cert, key)?),
            (None, None) => None,
            _ => anyhow::bail!("HTTPS needs both tls_cert and tls_key (--tls-cert, --tls-key)"),
        };
        let listener = serve::listen(config.bind)
            .with_context(|| format!("cannot listen on {}", config.bind))?;
        let local_addr = listener.local_addr()?;
        let scheme = if tls.is_some() { "https" } else { "http" };
        let public_url = config
            .public_url
            .clone()
            .unwrap_or_else(|| format!("{scheme}://{local_addr}"))
            .trim_end_matches('/')
            .to_owned();
        let http = &config.http;
        let limits = serve::Limits {
            header_read_timeout: Duration::from_secs(http.header_read_timeout_secs.max(1)),
            keep_alive_timeout: Duration::from_secs(http.keep_alive_timeout_secs.max(1)),
            send_timeout: Duration::from_secs(http.send_timeout_secs.max(1)),
            max_connections: http
                .max_connections
                .unwrap_or_else(serve::default_max_connections)
                .max(1),
            finish_timeout: Duration::from_secs(http.request_timeout_secs.max(1)) + FINISH_GRACE,
        };
        let metrics_listener = config.metrics_bind.map(metrics::listen).transpose()?;
        Ok(Endpoint {
            listener,
            tls,
            local_addr,
            public_url,
            limits,
            metrics_listener,
        })
    }
}

/// Both services' state, and the tasks that run beside them.
struct Services {
    petstore: PetstoreState,
    portfolio: PortfolioState,
    mail_worker: (Mailer, tokio::task::JoinHandle<()>),
    analytics_writer: tokio::task::JoinHandle<()>,
}

impl Services {
    async fn build(config: &Config, storage: &Storage, public_url: &str) -> anyhow::Result<Self> {
        let db = &storage.db;
        let hasher = Hasher::start(
            config.petstore.password_hash_threads,
            config.petstore.password_hash_queue,
        )
        .context("cannot start the password hashing threads")?;
        let access = Arc::new(
            Access::load(db, &config.portfolio.api_keys)
                .await
                .context("cannot load the API keys")?,
        );
        // One writer, one transaction a turn, for every kind of write in
        // batches.
        let writer = crate::storage::batches::Writer::start(db.clone());
        let petstore = PetstoreState::new(petstore::state::Shared {
            db: db.clone(),
            config: Arc::new(config.petstore.clone()),
            hasher,
            failed_logins: storage.limiter(Limiter::default(), "failed-logins"),
            public_url: Arc::from(public_url),
            access: access.clone(),
            caches: petstore::reads::Caches::new(db),
            new_pets: petstore::db::new_pets::NewPets::on(&writer),
            new_orders: petstore::db::new_orders::NewOrders::on(&writer),
            replaced_pets: petstore::db::replaced_pets::ReplacedPets::on(&writer),
        });
        let mailer = Mailer::new(db.clone(), &config.mail, &config.data_dir)?;
        let mail_worker = (mailer.clone(), mailer.spawn_worker());
        let (analytics, analytics_writer) = portfolio::ops::analytics::Recorder::start(
            db.clone(),
            Duration::from_millis(config.portfolio.analytics_flush_interval_ms.max(10)),
        );
        let portfolio = PortfolioState::new(portfolio::state::Shared {
            db: db.clone(),
            access,
            config: Arc::new(config.portfolio.clone()),
            mail: Arc::new(config.mail.clone()),
            mailer,
            public_url: Arc::from(public_url),
            analytics,
            client_auth_failures: storage.limiter(Limiter::default(), "client-auth-failures"),
            key_request_limiter: storage.limiter(Limiter::with_window(3600), "key-requests"),
            shared_counters: storage.shared_counters.clone(),
            http: reqwest::Client::builder()
                .user_agent(concat!("petstore-portfolio/", env!("CARGO_PKG_VERSION")))
                .build()
                .context("cannot build the HTTP client")?,
            started: std::time::Instant::now(),
            draining: Draining::default(),
            caches: portfolio::reads::Caches::new(db),
        });
        Ok(Services {
            petstore,
            portfolio,
            mail_worker,
            analytics_writer,
        })
    }

    /// What sets the gauges read when `/metrics` is scraped: the database
    /// pool, the outbox and Redis's state.
    fn metrics_sampler(&self, storage: &Storage) -> Sampler {
        let db = storage.db.clone();
        let mailer = self.portfolio.mailer.clone();
        let shared_counters = storage.shared_counters.clone();
        Arc::new(move || {
            let (db, mailer, shared_counters) =
                (db.clone(), mailer.clone(), shared_counters.clone());
            Box::pin(async move {
                let (open, idle) = db.pool_connections();
                metrics::db_pool(open, idle);
                mailer.sample_metrics().await;
                metrics::redis_fallback(
                    shared_counters.is_some_and(|counters| counters.problem().is_some()),
                );
            })
        })
    }

    /// The tasks that keep the state fresh: the credentials' refresh, the
    /// sweep of old idempotency keys, the demo data's periodic reset.
    fn spawn_background(&self, config: &Config, db: &Database) -> Vec<tokio::task::JoinHandle<()>> {
        let mut background = vec![
            self.portfolio.access.spawn_refresh(db.clone()),
            idempotency::spawn_sweeper(db.clone(), config.http.idempotency_keys_kept()),
        ];
        if let Some(secs) = config.petstore.demo_reset_interval_secs.filter(|s| *s > 0) {
            background.push(demo_data::spawn_periodic_reset(
                db.clone(),
                Duration::from_secs(secs),
            ));
        }
        background
    }
}

/// Fills empty tables on the first start: the demo pets (if configured)
/// and the portfolio's content. Replicas starting at once take turns.
async fn load_startup_data(config: &Config, db: &Database) -> anyhow::Result<()> {
    let startup = db
        .lock_for_startup()
        .await
        .context("cannot take the startup lock")?;
    if config.petstore.demo_data {
        demo_data::load_if_empty(db)
            .await
            .context("cannot load the demo data")?;
    }
    portfolio::ops::content::load_if_empty(db, config.portfolio.content_file.as_deref())
        .await
        .context("cannot load the portfolio content")?;
    startup
        .release()
        .await
        .context("cannot release the startup lock")
}

/// The whole HTTP application: both services' routes, docs, and the tower-http
/// plumbing around them.
pub(crate) fn build_router(
    config: &Config,
    tls: bool,
    petstore_state: PetstoreState,
    portfolio_state: PortfolioState,
) -> anyhow::Result<Serving> {
    let timeout = Duration::from_secs(config.http.request_timeout_secs);
    // Each service renders its own errors, including axum's (no route, wrong
    // method, body limits), a caught panic and the timeout: those layers sit
    // inside its renderer.
    let shared_counters = portfolio_state.shared_counters.as_ref();
    let request_limit = petstore::edge::RequestLimit {
        limiter: Arc::new(Limiter::default().shared_as(shared_counters, "petstore-requests")),
        per_minute: petstore_state.config.requests_per_minute,
    };
    let authorize_routes = petstore::api::authorize::router(petstore_state.clone())
        .layer(middleware::from_fn(pages_edge::<PetstoreErrors>));
    let kept = config.http.idempotency_keys_kept();
    let db = petstore_state.db.clone();
    let (petstore_routes, petstore_api) = petstore::routes_at("/v2", &petstore_state.config);
    let petstore_routes = petstore_routes.with_state(petstore_state.clone());
    let petstore_keys = Idempotency::new(
        db.clone(),
        &petstore_api,
        "/v2",
        &PETSTORE_CREDENTIALS,
        timeout,
        kept,
        config
            .http
            .max_body_bytes
            .max(petstore::max_upload_body(&config.petstore)),
    );
    // The edge (which catches panics) and the idempotency keys as one layer,
    // not two: axum boxes each layer of a router around each of its routes,
    // and calling a route clones every box beneath it (a cached `GET
    // /v2/pet/1` cloned and freed 20 boxes; BENCHMARKS.md, issue 20).
    // Keys are looked at once the route is known, inside the edge, and
    // only when the handler's own extractors (credentials, scope) have
    // passed (`idempotency::Idempotent`). On the fallback (no route
    // matched) they do nothing.
    let petstore_layers = ServiceBuilder::new()
        .layer(EdgeLayer::new(
            PetstoreEdge {
                state: petstore_state,
                limit: request_limit,
            },
            timeout,
        ))
        .layer(petstore_keys);
    // The routes sit at their full paths (`petstore::routes_at`); what no
    // route matches under `/v2` goes to the pet store's fallback, through
    // the same layers.
    let petstore_routes = petstore_routes.layer(petstore_layers.clone());
    let petstore_fallback = Router::new()
        .fallback(petstore_no_route)
        .layer(petstore_layers);
    let counting = portfolio_state.analytics.clone();
    let limits = portfolio::edge::RateLimits {
        limiter: Arc::new(Limiter::default().shared_as(shared_counters, "portfolio-requests")),
        config: portfolio_state.config.rate_limit.clone(),
    };
    let authentication = portfolio::api::auth::Authentication {
        access: portfolio_state.access.clone(),
    };
    let (portfolio_routes, portfolio_api) = portfolio::router()
        .with_state(portfolio_state)
        .split_for_parts();
    let portfolio_keys = Idempotency::new(
        db,
        &portfolio_api,
        "",
        &PORTFOLIO_CREDENTIALS,
        timeout,
        kept,
        config.http.max_body_bytes,
    );
    // One layer, as the pet store's: the edge, the analytics (by route
    // template) and the idempotency keys. A router's layer wraps only its
    // routes here: the portfolio's router has no fallback of its own, and
    // the merged router keeps `no_route`.
    let portfolio_routes = portfolio_routes.layer(
        ServiceBuilder::new()
            .layer(EdgeLayer::new(
                PortfolioEdge {
                    authentication,
                    limit: limits,
                },
                timeout,
            ))
            .layer(middleware::from_fn_with_state(
                counting,
                portfolio::edge::count_requests,
            ))
            .layer(portfolio_keys),
    );

    let petstore_doc =
        petstore::served_document(config.petstore.auth_mode).context("openapi/petstore.yaml")?;
    let portfolio_doc =
        docs::yaml_to_json(docs::PORTFOLIO_YAML).context("openapi/portfolio.yaml")?;
    let docs_routes = docs::router(petstore_doc, portfolio_doc)
        .layer(middleware::from_fn(pages_edge::<PortfolioErrors>));

    let router = Router::new()
        .nest("/v2", petstore_fallback)
        .merge(petstore_routes)
        .merge(portfolio_routes)
        .merge(docs_routes)
        .merge(authorize_routes)
        // Outside both services: the portfolio's envelope, the general one.
        .fallback(no_route);
    // The plumbing every answer shares wraps the router once, as one stack:
    // `Router::layer` would wrap each route in its own copy, and every
    // request would clone that copy (CORS's lists included) on its way in.
    let trusted_proxies: Arc<[IpNet]> =
        extract::parse_trusted_proxies(&config.http.trusted_proxies)?.into();
    // Its answers' bodies keep their types to hyper (`serve::serving`): no
    // box for any of them.
    let service = ServiceBuilder::new()
        // Behind trusted proxies, the client they forward is the client.
        .option_layer((!trusted_proxies.is_empty()).then(|| {
            MapRequestLayer::new(move |request| {
                extract::note_forwarded_client(request, &trusted_proxies)
            })
        }))
        // The request's id, trace, span, metrics and access-log line, and
        // `nosniff` on every answer.
        .layer(ObserveLayer {
            metrics: config.metrics_bind.is_some(),
            access_log: config.log.access_log,
        })
        // Over HTTPS, browsers are told to come back over HTTPS only.
        .option_layer(tls.then(|| {
            SetResponseHeaderLayer::if_not_present(
                header::STRICT_TRANSPORT_SECURITY,
                HeaderValue::from_static(tls::HSTS),
            )
        }))
        .layer(CorsLayer::new(&config.http.cors_allowed_origins))
        .layer(CompressionLayer)
        // The next part of a body must come within this, or the request is
        // answered 408 (where the body is read).
        .layer(BodyReadTimeoutLayer {
            timeout: Duration::from_secs(config.http.body_read_timeout_secs.max(1)),
        })
        .layer(DefaultBodyLimit::max(config.http.max_body_bytes))
        .service(router);
    Ok(serve::serving(service))
}

/// The headers that carry each service's credentials: who a caller is, for
/// idempotency keys.
static PETSTORE_CREDENTIALS: [HeaderName; 2] =
    [header::AUTHORIZATION, HeaderName::from_static("api_key")];
static PORTFOLIO_CREDENTIALS: [HeaderName; 2] =
    [header::AUTHORIZATION, HeaderName::from_static("x-api-key")];

/// What the pet store's edge checks with: the service (for
/// authentication) and its rate limit.
#[derive(Debug, Clone)]
struct PetstoreEdge {
    state: PetstoreState,
    limit: petstore::edge::RequestLimit,
}

/// The pet store's checks at its edge (`edge.rs`): authentication (what
/// the request presents, checked once, in `enforce` mode), then the rate
/// limit (when configured). With neither (the default), nothing waits.
impl EdgeChecks for PetstoreEdge {
    type Errors = PetstoreErrors;

    fn check(&self, request: Request<Body>) -> Check {
        if !petstore::api::auth::checks_credentials(&self.state) && self.limit.per_minute.is_none()
        {
            return Check::Done(Checked::passed(request));
        }
        let edge = self.clone();
        Check::Waiting(Box::pin(async move {
            let request = petstore::api::auth::authenticate(&edge.state, request).await;
            petstore::edge::limit_requests(&edge.limit, request).await
        }))
    }
}

/// What the portfolio's edge checks with: the authentication step's, and
/// its rate limit.
#[derive(Debug, Clone)]
struct PortfolioEdge {
    authentication: portfolio::api::auth::Authentication,
    limit: portfolio::edge::RateLimits,
}

/// The portfolio's checks at its edge: authentication (what the request
/// presents, checked once), which the rate limit after it counts by.
impl EdgeChecks for PortfolioEdge {
    type Errors = PortfolioErrors;

    fn check(&self, request: Request<Body>) -> Check {
        let edge = self.clone();
        Check::Waiting(Box::pin(async move {
            let request = portfolio::api::auth::authenticate(&edge.authentication, request).await;
            portfolio::edge::limit_requests(&edge.limit, request).await
        }))
    }
}

/// The edge of the pages outside both services (Swagger UI, the documents,
/// the sign-in page): errors in the format `F`, malformed requests refused.
async fn pages_edge<F: crate::http::error::ErrorFormat>(
    request: Request<Body>,
    next: Next,
) -> Response {
    render_errors_around::<F, _>(request, |request| {
        refuse_malformed(request, |request| next.run(request))
    })
    .await
}

async fn petstore_no_route() -> Error {
    Error::not_found("no such route; the pet store's operations are listed at /docs")
}

/// Outside both services: answered in the portfolio's envelope.
async fn no_route(headers: HeaderMap) -> Response {
    render_now::<PortfolioErrors>(
        Error::not_found(
            "no such route: the pet store is under /v2, the portfolio under /api; see /docs",
        ),
        &headers,
    )
}
