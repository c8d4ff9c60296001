//! The pet store service under `/v2`.
//!
//! [`router`] registers each handler together with its `#[utoipa::path]`
//! documentation; the document it yields is what `cargo xtask check` compares
//! with `openapi/petstore.yaml`. A handler ([`api`], one module per group of
//! operations) extracts, calls a read ([`reads`]) or an operation ([`ops`])
//! and renders; the operations and reads reach the SQL ([`db`]) and the
//! domain's rules ([`model`]); [`wire`] is how the service speaks HTTP.

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

use axum::extract::DefaultBodyLimit;
use axum::http::HeaderValue;
use tower::ServiceBuilder;
use tower_http::set_header::SetResponseHeaderLayer;
use utoipa::OpenApi;
use utoipa::openapi::OpenApi as OpenApiDoc;
use utoipa_axum::router::{OpenApiRouter, UtoipaMethodRouter, UtoipaMethodRouterExt as _};
use utoipa_axum::routes;

use crate::config::PetstoreConfig;
use crate::http::edge::{EdgeLayer, pages_edge};
use crate::http::error::Error;
use crate::http::idempotency::Idempotency;
use crate::http::{API_VERSION, ServiceHttp};
use crate::limits::Limiter;
use crate::petstore::document::PetstoreDoc;
use crate::petstore::state::PetstoreState;
use crate::petstore::wire::PetstoreErrors;

/// Where the server mounts the pet store.
pub(crate) const BASE_PATH: &str = "/v2";

/// The pet store as served: its routes at their full paths under `/v2`,
/// what no route matches under `/v2`, both behind the service's edge and
/// its idempotency keys, and the sign-in page of its implicit flow.
pub(crate) fn app(state: PetstoreState, http: &ServiceHttp) -> axum::Router {
    let limit = edge::RequestLimit {
        limiter: Arc::new(
            Limiter::default().shared_as(http.shared_counters.as_ref(), "petstore-requests"),
        ),
        per_minute: state.config.requests_per_minute,
    };
    let authorize = api::authorize::router(state.clone())
        .layer(axum::middleware::from_fn(pages_edge::<PetstoreErrors>));
    let (routes, documented) = routes_at(BASE_PATH, &state.config);
    let keys = Idempotency::new(
        state.db.clone(),
        &documented,
        BASE_PATH,
        &api::auth::CREDENTIAL_HEADERS,
        http.request_timeout,
        http.keys_kept,
        http.max_body_bytes.max(max_upload_body(&state.config)),
    );
    // The edge (which catches panics) and the idempotency keys as one layer,
    // not two: axum boxes each layer of a router around each of its routes,
    // and calling a route clones every box beneath it. Keys are looked at
    // once the route is known, inside the edge, and only when the handler's
    // own extractors (credentials, scope) have passed
    // (`http::idempotency::Idempotent`). On the fallback (no route matched)
    // they do nothing.
    let layers = ServiceBuilder::new()
        // Every answer names the document it keeps to, errors included.
        .layer(SetResponseHeaderLayer::overriding(
            API_VERSION,
            HeaderValue::from_static(document::DOCUMENT_VERSION),
        ))
        .layer(EdgeLayer::new(
            edge::PetstoreEdge {
                state: state.clone(),
                limit,
            },
            http.request_timeout,
        ))
        .layer(keys);
    let no_route = axum::Router::new().fallback(no_route).layer(layers.clone());
    routes
        .with_state(state)
        .layer(layers)
        .nest(BASE_PATH, no_route)
        .merge(authorize)
}

async fn no_route() -> Error {
    Error::not_found("no such route; the pet store's operations are listed at /docs")
}

/// The largest body the image upload accepts: the image, and a little for
/// multipart framing.
pub(crate) fn max_upload_body(config: &PetstoreConfig) -> usize {
    config.max_upload_bytes.saturating_add(64 * 1024)
}

/// The pet store's operations: each route's documented path(s) and
/// handlers.
fn operations(config: &PetstoreConfig) -> Vec<UtoipaMethodRouter<PetstoreState>> {
    let upload_limit = max_upload_body(config);
    vec![
        routes!(api::pet::update_pet, api::pet::add_pet),
        routes!(api::pet::find_pets_by_status),
        routes!(api::pet::find_pets_by_tags),
        routes!(
            api::pet::get_pet_by_id,
            api::pet::update_pet_with_form,
            api::pet::delete_pet
        ),
        routes!(api::pet_image::upload_file).layer(DefaultBodyLimit::max(upload_limit)),
        routes!(api::pet_image::get_pet_image),
        routes!(api::store::get_inventory),
        routes!(api::store::place_order),
        routes!(api::store::get_order_by_id, api::store::delete_order),
        routes!(api::user::create_user),
        routes!(api::user::create_users_with_list_input),
        routes!(api::user::login_user),
        routes!(api::user::logout_user),
        routes!(
            api::user::get_user_by_name,
            api::user::update_user,
            api::user::delete_user
        ),
    ]
}

/// The pet store's routes and their documentation, before state is given.
pub(crate) fn router(config: &PetstoreConfig) -> OpenApiRouter<PetstoreState> {
    operations(config).into_iter().fold(
        OpenApiRouter::with_openapi(PetstoreDoc::openapi()),
        OpenApiRouter::routes,
    )
}

/// The pet store's routes as served, and their documentation: each route
/// at `prefix` (`/v2`) and its documented path, rather than nested under
/// `prefix` (axum's `nest` rewrites every request's URI on its way in, a
/// cost as large as much of a cached read's own work). The route templates are the same either way
/// (`/v2/pet/{petId}`).
pub(crate) fn routes_at(
    prefix: &str,
    config: &PetstoreConfig,
) -> (axum::Router<PetstoreState>, OpenApiDoc) {
    let (served, documented) = operations(config).into_iter().fold(
        (
            axum::Router::new(),
            OpenApiRouter::with_openapi(PetstoreDoc::openapi()),
        ),
        |(served, documented), operation| {
            let (_, paths, handlers) = &operation;
            let served = paths.paths.keys().fold(served, |served, path| {
                served.route(&format!("{prefix}{path}"), handlers.clone())
            });
            (served, documented.routes(operation))
        },
    );
    (served, documented.into_openapi())
}
