//! The whole HTTP application: both services as each serves itself, the
//! documents and Swagger UI, what no route matches, and the plumbing every
//! answer shares around them, as one stack.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::Response;
use ipnet::IpNet;
use tower::ServiceBuilder;
use tower::util::MapRequestLayer;
use tower_http::request_id::SetRequestIdLayer;
use tower_http::set_header::SetResponseHeaderLayer;
use tower_http::trace::TraceLayer;

use super::injected_failures::{InjectedFailures, answer_planned_failure};
use crate::config::Config;
use crate::http::ServiceHttp;
use crate::http::compression::CompressionLayer;
use crate::http::cors;
use crate::http::deadline::BodyReadTimeoutLayer;
use crate::http::deprecation::Deprecations;
use crate::http::docs;
use crate::http::edge::pages_edge;
use crate::http::error::{Error, render_now};
use crate::http::extract;
use crate::http::observe::{self, ObserveLayer};
use crate::http::serve::{self, Serving};
use crate::http::tls;
use crate::limits::shared_counters::SharedCounters;
use crate::petstore::{self, state::PetstoreState};
use crate::portfolio::{self, state::PortfolioState, wire::PortfolioErrors};

/// The whole HTTP application: both services' routes, docs, and the tower-http
/// plumbing around them.
pub(super) fn build_router(
    config: &Config,
    tls: bool,
    petstore_state: PetstoreState,
    portfolio_state: PortfolioState,
    shared_counters: Option<Arc<SharedCounters>>,
    failures: Option<InjectedFailures>,
) -> anyhow::Result<Serving> {
    let http = ServiceHttp::new(&config.http, shared_counters);
    let petstore_doc = petstore::document::served_document(config.petstore.auth_mode)
        .context("openapi/petstore.yaml")?;
    let portfolio_doc =
        docs::yaml_to_json(docs::PORTFOLIO_YAML).context("openapi/portfolio.yaml")?;
    // What each document marks deprecated says so on the wire too.
    let petstore_deprecations = Deprecations::of_document(&petstore_doc, petstore::BASE_PATH)
        .context("openapi/petstore.yaml")?;
    let portfolio_deprecations =
        Deprecations::of_document(&portfolio_doc, "").context("openapi/portfolio.yaml")?;
    // A service that is off has no routes and no document: its paths
    // answer 404 like any other unknown path.
    let (petstore_on, portfolio_on) = (config.petstore.enabled, config.portfolio.enabled);
    let docs_routes = docs::router(
        petstore_on.then_some(petstore_doc),
        portfolio_on.then_some(portfolio_doc),
    )
    .layer(axum::middleware::from_fn(pages_edge::<PortfolioErrors>));

    let mut router = Router::new();
    if petstore_on {
        router = router.merge(petstore_deprecations.mark(petstore::app(petstore_state, &http)));
    }
    if portfolio_on {
        router = router
            .merge(portfolio::console(portfolio_state.clone()))
            .merge(portfolio_deprecations.mark(portfolio::app(portfolio_state, &http)));
    } else {
        // The health checks stay: the probes of whoever runs the server
        // ask them whichever services it serves.
        router = router.merge(
            portfolio::app(portfolio_state, &http)
                .layer(axum::middleware::from_fn(only_health_checks)),
        );
    }
    let router = router
        .merge(docs_routes)
        // Outside both services: the portfolio's envelope, the general one.
        .fallback(no_route);
    // Only a test's server has this layer; it needs each route's template,
    // which a route's own layer is the first to see.
    let router = match failures {
        Some(failures) => router.layer(axum::middleware::from_fn_with_state(
            failures,
            answer_planned_failure,
        )),
        None => router,
    };
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
        // The request's ids (a client's set aside, the server's made), its
        // span, then its trace, metrics and access-log line, and `nosniff`
        // on every answer (`http::observe`).
        .layer(MapRequestLayer::new(observe::set_aside_client_request_id))
        .layer(SetRequestIdLayer::x_request_id(observe::NewRequestId))
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(observe::RequestSpan)
                .on_request(())
                .on_response(())
                .on_body_chunk(())
                .on_eos(())
                .on_failure(()),
        )
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
        .layer(cors::layer(&config.http.cors_allowed_origins))
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

/// With the portfolio off: its health checks are answered, and the rest of
/// its paths as no route.
async fn only_health_checks(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    match request.uri().path() {
        "/api/health" | "/api/health/ready" => next.run(request).await,
        _ => no_route(request.headers().clone()).await,
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_api_version_headers_are_the_documents_versions() {
        for (yaml, version) in [
            (docs::PETSTORE_YAML, petstore::document::DOCUMENT_VERSION),
            (docs::PORTFOLIO_YAML, portfolio::document::DOCUMENT_VERSION),
        ] {
            let document = docs::yaml_to_json(yaml).unwrap();
            assert_eq!(document["info"]["version"], version);
        }
    }
}
