//! The hand-written OpenAPI documents, served as JSON, their client
//! profiles, and Swagger UI.
//!
//! What is served is `openapi/*.yaml` itself (converted to JSON once, at
//! start-up), not a document re-derived from the code: the files are the
//! contract. Beside each, its *client profile*
//! (`openapi/profiles/*.client.json`, written by `cargo xtask codegen`):
//! the JSON face of the document that progenitor, which takes a subset of
//! OpenAPI, generates a client from. Swagger UI's page links to both.

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use tower_http::set_header::SetResponseHeaderLayer;
use utoipa_swagger_ui::{SwaggerUi, Url};

pub use crate::http::paths::{
    PETSTORE_CLIENT_PROFILE_PATH, PETSTORE_JSON_PATH, PORTFOLIO_CLIENT_PROFILE_PATH,
    PORTFOLIO_JSON_PATH, SWAGGER_UI_PATH,
};

/// `openapi/petstore.yaml`, as written.
pub(crate) const PETSTORE_YAML: &str = include_str!("../../../openapi/petstore.yaml");

/// `openapi/portfolio.yaml`, as written.
pub(crate) const PORTFOLIO_YAML: &str = include_str!("../../../openapi/portfolio.yaml");

/// `openapi/profiles/petstore.client.json`: the pet store document's client
/// profile, as `cargo xtask codegen` wrote it.
pub(crate) const PETSTORE_CLIENT_PROFILE: &str =
    include_str!("../../../openapi/profiles/petstore.client.json");

/// `openapi/profiles/portfolio.client.json`: the portfolio document's client
/// profile, as `cargo xtask codegen` wrote it.
pub(crate) const PORTFOLIO_CLIENT_PROFILE: &str =
    include_str!("../../../openapi/profiles/portfolio.client.json");

/// Parses one of the embedded documents into JSON.
pub fn yaml_to_json(yaml: &str) -> anyhow::Result<serde_json::Value> {
    Ok(serde_norway::from_str(yaml)?)
}

/// Swagger UI at `/docs`, offering both documents, and a route for each
/// document's JSON and for each client profile (the file's bytes).
/// Swagger UI's pages may not be framed by another site (clickjacking of
/// the Authorize dialog and "Try it out").
pub(crate) fn router(
    petstore: Option<serde_json::Value>,
    portfolio: Option<serde_json::Value>,
) -> Router {
    let (petstore_on, portfolio_on) = (petstore.is_some(), portfolio.is_some());
    let mut swagger_ui = SwaggerUi::new(SWAGGER_UI_PATH);
    let mut router = Router::new();
    if let Some(petstore) = petstore {
        router = router.route(
            PETSTORE_CLIENT_PROFILE_PATH,
            profile_route(PETSTORE_CLIENT_PROFILE),
        );
        swagger_ui = swagger_ui.external_url_unchecked(
            Url::with_primary("Pet Store (/v2)", PETSTORE_JSON_PATH, true),
            petstore,
        );
    }
    if let Some(portfolio) = portfolio {
        router = router.route(
            PORTFOLIO_CLIENT_PROFILE_PATH,
            profile_route(PORTFOLIO_CLIENT_PROFILE),
        );
        swagger_ui = swagger_ui
            .external_url_unchecked(Url::new("Portfolio (/api)", PORTFOLIO_JSON_PATH), portfolio);
    }
    let links = document_links(petstore_on, portfolio_on);
    router
        .merge(swagger_ui)
        .layer(middleware::from_fn_with_state(
            Arc::<str>::from(links),
            with_document_links,
        ))
        .layer(SetResponseHeaderLayer::overriding(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static("frame-ancestors 'none'"),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            header::X_FRAME_OPTIONS,
            HeaderValue::from_static("DENY"),
        ))
}

/// A client profile, with its SHA-256 as its `ETag` (the digest an SDK
/// generated from the same profile carries: `check_contract`), taken once;
/// a request whose `If-None-Match` names it gets 304 Not Modified.
fn profile_route(text: &'static str) -> axum::routing::MethodRouter {
    let tag = format!("\"{}\"", profile_digest(text));
    let etag: Option<(HeaderValue, headers::ETag)> = HeaderValue::try_from(tag.as_str())
        .ok()
        .zip(tag.parse().ok());
    get(move |request_headers: axum::http::HeaderMap| async move {
        let Some((value, etag)) = etag else {
            return json_file(text);
        };
        let mut response = if not_modified(&request_headers, &etag) {
            StatusCode::NOT_MODIFIED.into_response()
        } else {
            json_file(text)
        };
        response.headers_mut().insert(header::ETAG, value);
        response
    })
}

/// Whether the request's `If-None-Match` (RFC 9110, weak comparison)
/// names `etag`, or is `*`.
fn not_modified(request_headers: &axum::http::HeaderMap, etag: &headers::ETag) -> bool {
    use headers::HeaderMapExt as _;
    request_headers
        .typed_get::<headers::IfNoneMatch>()
        .is_some_and(|condition| !condition.precondition_passes(etag))
}

/// The SHA-256 of a profile's text, in lower-case hex.
pub fn profile_digest(text: &str) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

fn json_file(text: &'static str) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        text,
    )
        .into_response()
}

/// The line above Swagger UI that links the documents and their client
/// profiles (Swagger UI itself shows only the selected document's link).
fn document_links(petstore: bool, portfolio: bool) -> String {
    let link = |href: &str, name: &str| format!(r#"<a href="{href}">{name}</a>"#);
    let mut documents = Vec::new();
    let mut profiles = Vec::new();
    if petstore {
        documents.push(link(PETSTORE_JSON_PATH, "petstore.json"));
        profiles.push(link(PETSTORE_CLIENT_PROFILE_PATH, "petstore.client.json"));
    }
    if portfolio {
        documents.push(link(PORTFOLIO_JSON_PATH, "portfolio.json"));
        profiles.push(link(PORTFOLIO_CLIENT_PROFILE_PATH, "portfolio.client.json"));
    }
    format!(
        r#"<nav id="document-links" style="font-family: sans-serif; font-size: 14px; padding: 8px 20px; background: #f4f4f4; border-bottom: 1px solid #ddd">Documents: {}. Generating a client? Their client profiles, the JSON face that progenitor takes: {}.</nav>"#,
        documents.join(", "),
        profiles.join(", "),
    )
}

/// Puts [`document_links`] on Swagger UI's page (`/docs/`), above the UI.
async fn with_document_links(
    State(links): State<Arc<str>>,
    request: Request,
    next: Next,
) -> Response {
    let path = request.uri().path();
    let page = path
        .strip_prefix(SWAGGER_UI_PATH)
        .is_some_and(|rest| rest == "/" || rest == "/index.html");
    let response = next.run(request).await;
    if !page || response.status() != StatusCode::OK {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    // The page is Swagger UI's index.html, under a kilobyte.
    let Ok(bytes) = axum::body::to_bytes(body, 64 * 1024).await else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    const ROOT: &str = r#"<div id="swagger-ui"></div>"#;
    let html = String::from_utf8_lossy(&bytes).replacen(ROOT, &format!("{links}{ROOT}"), 1);
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(html))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use axum::body::Body;
    use axum::http::{Request, StatusCode, header};
    use tower::ServiceExt as _;

    use super::*;

    async fn profile(if_none_match: Option<&str>) -> (StatusCode, Option<String>, usize) {
        let mut request = Request::get(PORTFOLIO_CLIENT_PROFILE_PATH);
        if let Some(condition) = if_none_match {
            request = request.header(header::IF_NONE_MATCH, condition);
        }
        let response = router(Some(serde_json::json!({})), Some(serde_json::json!({})))
            .oneshot(request.body(Body::empty()).unwrap())
            .await
            .unwrap();
        let status = response.status();
        let etag = response
            .headers()
            .get(header::ETAG)
            .map(|v| v.to_str().unwrap().to_owned());
        let body = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        (status, etag, body.len())
    }

    #[tokio::test]
    async fn a_profile_is_not_sent_again_to_a_client_that_has_it() {
        let digest = format!("\"{}\"", profile_digest(PORTFOLIO_CLIENT_PROFILE));
        let (status, etag, length) = profile(None).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(etag.as_deref(), Some(digest.as_str()));
        assert_eq!(length, PORTFOLIO_CLIENT_PROFILE.len());

        for held in [
            digest.clone(),
            format!("W/{digest}"),
            format!("\"x\", {digest}"),
            "*".to_owned(),
        ] {
            let (status, etag, length) = profile(Some(&held)).await;
            assert_eq!(status, StatusCode::NOT_MODIFIED, "If-None-Match: {held}");
            assert_eq!(etag.as_deref(), Some(digest.as_str()));
            assert_eq!(length, 0);
        }
        let (status, _, length) = profile(Some("\"an-older-profile\"")).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(length, PORTFOLIO_CLIENT_PROFILE.len());
    }
}
