//! The portfolio service under `/api`.
//!
//! Like the pet store, [`router`] registers each handler with its
//! `#[utoipa::path]` documentation; `cargo xtask check` compares the result
//! with `openapi/portfolio.yaml`. Handlers ([`api`]) are in one module per
//! resource and call [`reads`] and [`ops`]; the domain's types are in
//! [`model`], the SQL in [`db`].

/// Handlers: extract, call a read or an operation, render.
pub(crate) mod api;
/// The SQL, one module per table group.
pub(crate) mod db;
/// The served OpenAPI document, as the handlers' annotations build it.
pub(crate) mod document;
/// Checks every request meets before its handler: credentials, rate limits.
pub(crate) mod edge;
/// The domain's types and rules.
pub(crate) mod model;
/// Every write, with its rules and transaction.
pub(crate) mod ops;
/// Every read, its caching included.
pub(crate) mod reads;
/// What the handlers share: database, caches, settings.
pub(crate) mod state;
/// How the service speaks HTTP: bodies, formats, errors.
pub(crate) mod wire;

use std::sync::Arc;

use axum::http::HeaderValue;
use axum::routing::{self, MethodRouter};
use tower::ServiceBuilder;
use tower_http::set_header::SetResponseHeaderLayer;
use utoipa::OpenApi;
use utoipa::openapi::HttpMethod;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::http::edge::EdgeLayer;
use crate::http::idempotency::Idempotency;
use crate::http::{API_VERSION, ServiceHttp};
use crate::limits::Limiter;
use crate::portfolio::document::PortfolioDoc;
use crate::portfolio::state::PortfolioState;

/// The portfolio's routes and their documentation, before state is given.
pub(crate) fn router() -> OpenApiRouter<PortfolioState> {
    let router = OpenApiRouter::with_openapi(PortfolioDoc::openapi())
        .routes(routes!(api::content::get_site_info))
        .routes(routes!(api::content::list_projects))
        .routes(routes!(api::content::get_project))
        .routes(routes!(api::content::list_achievements))
        .routes(routes!(api::content::list_posts))
        .routes(routes!(api::content::get_post))
        .routes(routes!(api::content::get_llm_context))
        .routes(routes!(api::static_files::get_static_file))
        .routes(routes!(api::contact::submit_contact))
        .routes(routes!(api::newsletter::subscribe_newsletter))
        .routes(routes!(api::newsletter::confirm_newsletter))
        .routes(routes!(api::newsletter::unsubscribe_newsletter))
        .routes(routes!(api::newsletter::resubscribe_newsletter))
        .routes(routes!(api::notify::notify_subscribers))
        .routes(routes!(api::social::social_publish))
        .routes(routes!(api::analytics::record_page_view))
        .routes(routes!(api::analytics::get_analytics_summary))
        .routes(routes!(api::key_requests::request_api_key))
        .routes(routes!(api::admin::content::replace_site_info))
        .routes(routes!(api::admin::content::create_project))
        .routes(routes!(
            api::admin::content::replace_project,
            api::admin::content::delete_project
        ))
        .routes(routes!(api::admin::content::create_achievement))
        .routes(routes!(
            api::admin::content::replace_achievement,
            api::admin::content::delete_achievement
        ))
        .routes(routes!(api::admin::content::create_post))
        .routes(routes!(
            api::admin::content::replace_post,
            api::admin::content::delete_post
        ))
        .routes(routes!(api::admin::subscribers::list_subscribers))
        .routes(routes!(api::admin::subscribers::erase_subscriber))
        .routes(routes!(
            api::admin::contact_submissions::list_contact_submissions
        ))
        .routes(routes!(
            api::admin::api_keys::list_api_keys,
            api::admin::api_keys::create_api_key
        ))
        .routes(routes!(api::admin::api_keys::rotate_api_key))
        .routes(routes!(api::admin::api_keys::revoke_api_key))
        .routes(routes!(api::admin::key_requests::list_key_requests))
        .routes(routes!(api::admin::key_requests::approve_key_request))
        .routes(routes!(api::admin::key_requests::reject_key_request))
        .routes(routes!(
            api::admin::oauth_clients::list_oauth_clients,
            api::admin::oauth_clients::create_oauth_client
        ))
        .routes(routes!(api::admin::oauth_clients::revoke_oauth_client))
        .routes(routes!(
            api::admin::oauth_clients::rotate_oauth_client_secret
        ))
        .routes(routes!(
            api::admin::contact_submissions::mark_contact_submission_handled
        ))
        .routes(routes!(api::admin::outbox::list_failed_emails))
        .routes(routes!(api::admin::outbox::requeue_emails))
        .routes(routes!(api::oauth::issue_token))
        .routes(routes!(api::oauth::revoke_token))
        .routes(routes!(api::oauth::get_authorization_server_metadata))
        .routes(routes!(api::health::get_health))
        .routes(routes!(api::health::get_readiness));
    // The one-click unsubscribe (RFC 8058) POSTs where the link GETs.
    let one_click = SecondRoute {
        of: (HttpMethod::Get, "/api/newsletter/unsubscribe"),
        at: (HttpMethod::Post, "/api/newsletter/unsubscribe"),
        operation_id: "unsubscribeNewsletterOneClick",
        deprecated: false,
        handler: routing::post(api::newsletter::unsubscribe_newsletter_one_click),
    };
    // The paths the catalogue lists without `/api`: deprecated copies.
    let aliases = [
        (
            "/newsletter",
            "/api/newsletter",
            "subscribeNewsletterAlias",
            routing::post(api::newsletter::subscribe_newsletter),
        ),
        (
            "/social-publish",
            "/api/social-publish",
            "socialPublishAlias",
            routing::post(api::social::social_publish),
        ),
        (
            "/notify-subscribers",
            "/api/notify-subscribers",
            "notifySubscribersAlias",
            routing::post(api::notify::notify_subscribers),
        ),
    ];
    let aliases = aliases.map(|(path, target, operation_id, handler)| SecondRoute {
        of: (HttpMethod::Post, target),
        at: (HttpMethod::Post, path),
        operation_id,
        deprecated: true,
        handler,
    });
    std::iter::once(one_click)
        .chain(aliases)
        .fold(router, SecondRoute::serve)
}

/// The portfolio as served: its routes behind the service's edge, the
/// counting of requests (by route template) and its idempotency keys. It
/// has no fallback of its own: what no route matches is the server's.
pub(crate) fn app(state: PortfolioState, http: &ServiceHttp) -> axum::Router {
    let limit = edge::RateLimits {
        limiter: Arc::new(
            Limiter::default().shared_as(http.shared_counters.as_ref(), "portfolio-requests"),
        ),
        config: state.config.rate_limit.clone(),
    };
    let authentication = api::auth::Authentication {
        access: state.access.clone(),
    };
    let counting = state.analytics.clone();
    let db = state.db.clone();
    let (routes, documented) = router().with_state(state).split_for_parts();
    let keys = Idempotency::new(
        db,
        &documented,
        "",
        &api::auth::CREDENTIAL_HEADERS,
        http.request_timeout,
        http.keys_kept,
        http.max_body_bytes,
    );
    // One layer, as the pet store's: the edge, the counting and the keys.
    routes.layer(
        ServiceBuilder::new()
            // Every answer names the document it keeps to, errors included.
            .layer(SetResponseHeaderLayer::overriding(
                API_VERSION,
                HeaderValue::from_static(document::DOCUMENT_VERSION),
            ))
            .layer(EdgeLayer::new(
                edge::PortfolioEdge {
                    authentication,
                    limit,
                },
                http.request_timeout,
            ))
            .layer(axum::middleware::from_fn_with_state(
                counting,
                edge::count_requests,
            ))
            .layer(keys),
    )
}

/// The owner's console at `/console/`: pages for people, outside the API
/// (not in its document, no JSON), on the same reads and operations.
pub(crate) fn console(state: PortfolioState) -> axum::Router {
    api::console::router(state)
}

/// An operation served at a second route by the same handler, and
/// documented there as a copy of it under its own operation id.
struct SecondRoute {
    /// The documented operation's method and path.
    of: (HttpMethod, &'static str),
    /// The second route's.
    at: (HttpMethod, &'static str),
    operation_id: &'static str,
    deprecated: bool,
    handler: MethodRouter<PortfolioState>,
}

impl SecondRoute {
    fn serve(
        mut router: OpenApiRouter<PortfolioState>,
        route: SecondRoute,
    ) -> OpenApiRouter<PortfolioState> {
        let paths = &mut router.get_openapi_mut().paths;
        let (method, path) = route.of;
        let copy = paths
            .get_path_operation(path, method)
            .cloned()
            .map(|mut operation| {
                operation.operation_id = Some(route.operation_id.to_owned());
                if route.deprecated {
                    operation.deprecated = Some(utoipa::openapi::Deprecated::True);
                }
                operation
            });
        let (method, path) = route.at;
        if let Some(operation) = copy {
            paths.add_path_operation(path, vec![method], operation);
        }
        router.route(path, route.handler)
    }
}
