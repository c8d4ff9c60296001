//! The portfolio service under `/api` (DESIGN 4.2).
//!
//! Like the pet store, [`router`] registers each handler with its
//! `#[utoipa::path]` documentation; `cargo xtask check` compares the result
//! with `openapi/portfolio.yaml`.

pub mod analytics;
pub mod auth;
pub mod contact;
pub mod content;
pub mod error;
pub mod health;
pub mod newsletter;
pub mod notify;
pub mod rate_limit;
pub mod social;
pub mod static_files;

use std::sync::Arc;
use std::time::Instant;

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use serde::Serialize;
use serde::de::DeserializeOwned;
use utoipa::openapi::OpenApi as OpenApiDoc;
use utoipa::openapi::security::{
    ApiKey, ApiKeyValue, ClientCredentials, Flow, OAuth2, Scopes, SecurityScheme,
};
use utoipa::{Modify, OpenApi};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::config::MailConfig;
use crate::config::PortfolioConfig;
use crate::error::ErrorCode;
use crate::mail::Mailer;
use crate::storage::Database;
use auth::ApiKeys;
use error::PortfolioError;

/// What every portfolio handler can reach.
#[derive(Debug, Clone)]
pub struct PortfolioState {
    pub db: Database,
    pub keys: Arc<ApiKeys>,
    pub config: Arc<PortfolioConfig>,
    pub mail: Arc<MailConfig>,
    pub mailer: Mailer,
    /// Base URL for links in emails, without a trailing slash.
    pub public_url: Arc<str>,
    pub analytics: analytics::Recorder,
    /// For calls to other services (the social network); one pool for all.
    pub http: reqwest::Client,
    pub started: Instant,
}

/// The parts of the document that are not per operation.
#[derive(OpenApi)]
#[openapi(
    info(title = "Portfolio API", version = "2.0"),
    servers((url = "/")),
    tags(
        (name = "content", description = "Site information, projects, achievements and posts"),
        (name = "contact", description = "The contact form"),
        (name = "newsletter", description = "Subscriptions and notifications"),
        (name = "social", description = "Publishing posts to a social network"),
        (name = "analytics", description = "Request counts and page views"),
        (name = "health", description = "Liveness and readiness"),
    ),
    components(schemas(content::Link, error::ErrorDetail)),
    modifiers(&SecuritySchemes),
)]
pub struct PortfolioDoc;

struct SecuritySchemes;

impl Modify for SecuritySchemes {
    fn modify(&self, openapi: &mut OpenApiDoc) {
        let components = openapi.components.get_or_insert_with(Default::default);
        let scopes = Scopes::from_iter([
            ("context:read", "read the LLM context"),
            ("contact:write", "submit the contact form"),
            ("analytics:read", "read analytics"),
            ("social:publish", "publish posts to the social network"),
            ("subscribers:notify", "email subscribers about a post"),
            ("admin", "everything"),
        ]);
        let mut oauth = OAuth2::new([Flow::ClientCredentials(ClientCredentials::new(
            "/api/oauth/token",
            scopes,
        ))]);
        oauth.description = Some(
            "Bearer tokens (`Authorization: Bearer <token>`) for the private level and as an \
             alternative to API keys. They come with the auth work: until then no operation \
             accepts them, and protected operations take API keys."
                .to_owned(),
        );
        components.add_security_scheme("oauth", SecurityScheme::OAuth2(oauth));
        components.add_security_scheme(
            "api_key",
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
                auth::API_KEY_HEADER,
                "A key from the operator. Scopes: `context:read`, `contact:write`, \
                 `analytics:read`, `social:publish`, `subscribers:notify`, `admin`.",
            ))),
        );
    }
}

/// Every portfolio error is the envelope ([`error::render_errors`] sees to
/// it); any operation can answer 500 and 503 (the request timeout), and any
/// that reads a body 413 and 415. Handlers list the statuses particular to
/// them; this adds the rest and the bodies.
struct ErrorResponses;

impl Modify for ErrorResponses {
    fn modify(&self, openapi: &mut OpenApiDoc) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components
            .schemas
            .entry("ErrorBody".to_owned())
            .or_insert_with(<error::ErrorBody as utoipa::PartialSchema>::schema);
        crate::openapi_errors::ErrorResponses {
            always: &[
                (
                    "500",
                    "Something went wrong on the server; the message carries no internals.",
                ),
                ("503", "The service cannot answer now."),
            ],
            with_body: &[
                ("413", "The body is larger than the server accepts."),
                ("415", "The body is not application/json."),
            ],
            media_types: &["application/json"],
            schema: "ErrorBody",
        }
        .apply(openapi);
        rate_limit::document(openapi);
    }
}

/// A path parameter, with the portfolio's error on a bad value.
#[derive(Debug)]
pub struct PathParam<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for PathParam<T> {
    type Rejection = PortfolioError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Path(value)| PathParam(value))
            .map_err(|rejection| PortfolioError::bad_request(rejection.body_text()))
    }
}

/// A JSON request body, read as strictly as the document is written
/// ([`crate::strict_json`]): 415 unless the body is JSON, 413 over the limit,
/// 400 when it cannot be read as `T`.
#[derive(Debug)]
pub struct JsonBody<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Serialize> FromRequest<S> for JsonBody<T> {
    type Rejection = PortfolioError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let is_json = req
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<mime::Mime>().ok())
            .is_some_and(|m| m.essence_str() == "application/json");
        if !is_json {
            return Err(PortfolioError::new(
                ErrorCode::UnsupportedMediaType,
                "the request body must be application/json",
            ));
        }
        let bytes = Bytes::from_request(req, state).await.map_err(|rejection| {
            if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                PortfolioError::new(ErrorCode::PayloadTooLarge, "the request body is too large")
            } else {
                PortfolioError::bad_request(format!(
                    "cannot read the request body: {}",
                    rejection.body_text()
                ))
            }
        })?;
        crate::strict_json::parse(&bytes)
            .map(JsonBody)
            .map_err(|e| PortfolioError::bad_request(format!("invalid JSON body: {e}")))
    }
}

/// Collects field problems for a 422 (`details.fields`: field -> problem).
#[derive(Debug, Default)]
pub struct Fields(Vec<(String, String)>);

impl Fields {
    /// A text field: present if `required`, at most `max` characters.
    pub fn text(
        &mut self,
        name: &str,
        value: Option<&str>,
        required: bool,
        max: usize,
    ) -> Option<String> {
        match value {
            None | Some("") if required => {
                self.0.push((name.to_owned(), "required".to_owned()));
                None
            }
            Some(text) if text.chars().count() > max => {
                self.0
                    .push((name.to_owned(), format!("at most {max} characters")));
                None
            }
            other => other.map(str::to_owned),
        }
    }

    /// An email address (RFC 5321 syntax, at most 254 characters).
    pub fn email(&mut self, name: &str, value: Option<&str>, required: bool) -> Option<String> {
        let text = self.text(name, value, required, 254)?;
        match text.parse::<lettre::Address>() {
            Ok(_) => Some(text),
            Err(_) => {
                self.0
                    .push((name.to_owned(), "not an email address".to_owned()));
                None
            }
        }
    }

    /// 422 if any field broke its rule.
    pub fn check(self) -> Result<(), PortfolioError> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(PortfolioError::validation(self.0))
        }
    }
}

/// The portfolio's routes and their documentation, before state is given.
pub fn router() -> OpenApiRouter<PortfolioState> {
    OpenApiRouter::with_openapi(PortfolioDoc::openapi())
        .routes(routes!(content::get_site_info))
        .routes(routes!(content::list_projects))
        .routes(routes!(content::get_project))
        .routes(routes!(content::list_achievements))
        .routes(routes!(content::list_posts))
        .routes(routes!(content::get_post))
        .routes(routes!(content::get_llm_context))
        .routes(routes!(static_files::get_static_file))
        .routes(routes!(contact::submit_contact))
        .routes(routes!(newsletter::subscribe_newsletter))
        .routes(routes!(newsletter::confirm_newsletter))
        .routes(routes!(
            newsletter::unsubscribe_newsletter,
            newsletter::unsubscribe_newsletter_one_click
        ))
        .routes(routes!(notify::notify_subscribers))
        .routes(routes!(social::social_publish))
        .routes(routes!(analytics::record_page_view))
        .routes(routes!(analytics::get_analytics_summary))
        .routes(routes!(newsletter::subscribe_newsletter_alias))
        .routes(routes!(notify::notify_subscribers_alias))
        .routes(routes!(social::social_publish_alias))
        .routes(routes!(health::get_health))
        .routes(routes!(health::get_readiness))
}

/// The paths the catalogue lists without `/api`: served, and documented as
/// deprecated aliases.
pub const DEPRECATED_ALIASES: [&str; 3] = ["/newsletter", "/social-publish", "/notify-subscribers"];

/// The portfolio's document as the handlers' annotations describe it.
pub fn openapi() -> OpenApiDoc {
    let mut doc = router().into_openapi();
    ErrorResponses.modify(&mut doc);
    for alias in DEPRECATED_ALIASES {
        if let Some(operation) = doc
            .paths
            .paths
            .get_mut(alias)
            .and_then(|item| item.post.as_mut())
        {
            operation.deprecated = Some(utoipa::openapi::Deprecated::True);
        }
    }
    doc
}
