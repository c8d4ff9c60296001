//! The portfolio's document as the code describes it ([`openapi`], which
//! `cargo xtask check` compares with `openapi/portfolio.yaml`): what the
//! handlers' annotations say, with what is true of every operation added
//! (the security schemes, the shared error answers, the rate limits'
//! headers, the credentials' challenges).

use utoipa::OpenApi;
use utoipa::openapi::OpenApi as OpenApiDoc;
use utoipa::openapi::security::{
    ApiKey, ApiKeyValue, ClientCredentials, Flow, OAuth2, Scopes, SecurityScheme,
};

use crate::config::Scope;
use crate::http::openapi_errors::{ErrorResponses, SERVER_FAULT, TOO_LARGE, TOO_SLOW};
use crate::portfolio::{api, model, router, wire};

/// The parts of the document that are not per operation and that the
/// contract check compares. Its prose (info, servers, the tags'
/// descriptions) is the hand-written document's alone.
#[derive(OpenApi)]
#[openapi(components(schemas(model::Link, wire::ErrorDetail)))]
pub(crate) struct PortfolioDoc;

/// The security schemes the operations name.
fn add_security_schemes(openapi: &mut OpenApiDoc) {
    let components = openapi.components.get_or_insert_with(Default::default);
    let scopes = Scopes::from_iter(Scope::ALL.map(|scope| (scope.as_str(), scope.description())));
    let mut oauth = OAuth2::new([Flow::ClientCredentials(ClientCredentials::new(
        "/api/oauth/token",
        scopes,
    ))]);
    oauth.description = Some(
        "Bearer tokens (`Authorization: Bearer <token>`) for the clients the operator \
         registers: the private (admin) operations take them, and the authenticated ones \
         (social-publish, notify-subscribers) take them as an alternative to API keys. \
         `admin` grants every scope."
            .to_owned(),
    );
    components.add_security_scheme("oauth", SecurityScheme::OAuth2(oauth));
    components.add_security_scheme(
        "api_key",
        SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
            api::auth::API_KEY_HEADER,
            "A key from the operator (ask with `POST /api/key-requests`). Scopes: \
             `context:read`, `contact:write`, `analytics:read`, `social:publish`, \
             `subscribers:notify`, `content:write`, `subscribers:read`, \
             `subscribers:write`, `keys:manage`, `admin`.",
        ))),
    );
}

/// Every portfolio error is the envelope (the error middleware sees to it);
/// any operation can answer 500 and 503 (the request timeout), and any
/// that reads a body 413 and 415.
fn document_errors(openapi: &mut OpenApiDoc) {
    ErrorResponses {
        always: &[SERVER_FAULT, ("503", "The service cannot answer now.")],
        with_body: &[
            ("400", "The body is not JSON of this shape"),
            TOO_SLOW,
            TOO_LARGE,
            ("415", "The body is not application/json."),
        ],
        with_path: &[("404", "Nothing has this identifier")],
        refusals_from_security: true,
        media_types: &["application/json"],
        schema: (
            "ErrorBody",
            <wire::ErrorBody as utoipa::PartialSchema>::schema,
        ),
    }
    .apply(openapi);
}

/// The version of `openapi/portfolio.yaml`, which every answer of the
/// portfolio names in `API-Version` (a test keeps it equal to the document's).
pub(crate) const DOCUMENT_VERSION: &str = "2.1";

/// The portfolio's document as the handlers' annotations describe it.
pub fn openapi() -> OpenApiDoc {
    let mut doc = router().into_openapi();
    add_security_schemes(&mut doc);
    crate::http::document_rules::apply(&mut doc);
    // After the routes: they work on every operation.
    document_errors(&mut doc);
    crate::http::limit_headers::document(&mut doc, "ErrorBody", &["application/json"]);
    api::auth::document(&mut doc);
    doc
}
