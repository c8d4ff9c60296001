//! The owner's console at `/console/`: server-rendered pages (the template
//! files under `server/templates/pages/console/`, no script) over the same
//! reads and operations the API uses. Every page but sign-in needs a
//! session (a cookie: `HttpOnly`, `SameSite=Strict`, `Secure` over HTTPS);
//! every form carries the session's CSRF token; every answer forbids
//! framing and anything but the console's own style sheet.

mod contact;
mod credentials;
mod dashboard;
mod key_requests;
mod outbox;
mod posts;
mod sign_in;
mod subscribers;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum_extra::extract::CookieJar;
use minijinja::context;
use subtle::ConstantTimeEq as _;
use tower::ServiceBuilder;
use tower_http::set_header::SetResponseHeaderLayer;

use crate::core::failure::Failure;
use crate::core::templates;
use crate::portfolio::reads;
use crate::portfolio::reads::console::Session;
use crate::portfolio::state::PortfolioState;

/// The session cookie's name.
const SESSION_COOKIE: &str = "console_session";

/// The console's routes, and the headers every answer of it carries.
pub(crate) fn router(state: PortfolioState) -> Router {
    Router::new()
        .route("/console", get(|| async { Redirect::to("/console/") }))
        .route("/console/", get(dashboard::show_dashboard))
        .route("/console/console.css", get(style_sheet))
        .route("/console/icon.svg", get(icon))
        .route(
            "/console/sign-in",
            get(sign_in::show_sign_in).post(sign_in::sign_in),
        )
        .route("/console/sign-out", post(sign_in::sign_out))
        .route(
            "/console/key-requests",
            get(key_requests::list_key_requests),
        )
        .route(
            "/console/key-requests/{id}/approve",
            post(key_requests::approve_key_request),
        )
        .route(
            "/console/key-requests/{id}/reject",
            post(key_requests::reject_key_request),
        )
        .route("/console/posts", get(posts::list_posts))
        .route("/console/posts/new", get(posts::new_post))
        .route("/console/posts/drafts", post(posts::save_draft))
        .route("/console/posts/drafts/{slug}", get(posts::edit_draft))
        .route(
            "/console/posts/drafts/{slug}/publish",
            get(posts::confirm_publish).post(posts::publish_draft),
        )
        .route("/console/contact", get(contact::list_contact_messages))
        .route("/console/contact/{id}/handled", post(contact::mark_handled))
        .route("/console/subscribers", get(subscribers::list_subscribers))
        .route(
            "/console/subscribers.csv",
            get(subscribers::export_subscribers),
        )
        .route(
            "/console/subscribers/{id}/remove",
            post(subscribers::remove_subscriber),
        )
        .route("/console/credentials", get(credentials::list_credentials))
        .route("/console/keys", post(credentials::create_key))
        .route("/console/keys/{id}/rotate", post(credentials::rotate_key))
        .route("/console/keys/{id}/revoke", post(credentials::revoke_key))
        .route("/console/clients", post(credentials::create_client))
        .route(
            "/console/clients/{id}/rotate",
            post(credentials::rotate_client_secret),
        )
        .route(
            "/console/clients/{id}/revoke",
            post(credentials::revoke_client),
        )
        .route("/console/failed-emails", get(outbox::list_failed_emails))
        .route(
            "/console/failed-emails/requeue",
            post(outbox::requeue_email),
        )
        // The console's own 404 (the server's fallback answers JSON).
        .route("/console/{*rest}", get(not_found).post(not_found))
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(state)
        .layer(
            ServiceBuilder::new()
                .layer(SetResponseHeaderLayer::overriding(
                    header::CONTENT_SECURITY_POLICY,
                    HeaderValue::from_static(
                        "default-src 'none'; style-src 'self'; img-src 'self'; \
                         form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
                    ),
                ))
                .layer(SetResponseHeaderLayer::overriding(
                    header::X_FRAME_OPTIONS,
                    HeaderValue::from_static("DENY"),
                ))
                .layer(SetResponseHeaderLayer::overriding(
                    header::CACHE_CONTROL,
                    HeaderValue::from_static("no-store"),
                ))
                .layer(SetResponseHeaderLayer::overriding(
                    header::REFERRER_POLICY,
                    HeaderValue::from_static("no-referrer"),
                ))
                .layer(SetResponseHeaderLayer::overriding(
                    header::X_CONTENT_TYPE_OPTIONS,
                    HeaderValue::from_static("nosniff"),
                )),
        )
}

async fn style_sheet() -> Response {
    (
        [(header::CONTENT_TYPE, "text/css; charset=utf-8")],
        include_str!("../../../../templates/pages/console/console.css"),
    )
        .into_response()
}

async fn icon() -> Response {
    (
        [(header::CONTENT_TYPE, "image/svg+xml")],
        include_str!("../../../../templates/pages/console/icon.svg"),
    )
        .into_response()
}

/// A method the page does not take (its `Allow` header says which it does).
async fn method_not_allowed(
    session: Option<Signed>,
    State(state): State<PortfolioState>,
) -> Response {
    message(
        &state,
        session.as_ref().map(|s| &s.0),
        StatusCode::METHOD_NOT_ALLOWED,
        "Not this way",
        "This page is opened (GET) or sent from its form (POST), not so.",
    )
    .await
}

async fn not_found(session: Option<Signed>, State(state): State<PortfolioState>) -> Response {
    message(
        &state,
        session.as_ref().map(|s| &s.0),
        StatusCode::NOT_FOUND,
        "Not here",
        "The console has no such page.",
    )
    .await
}

/// A request with a session in force. A page asked for without one is sent
/// to sign in; an action (a POST) without one is a 401 page.
pub(crate) struct Signed(pub(crate) Session);

impl FromRequestParts<PortfolioState> for Signed {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &PortfolioState,
    ) -> Result<Self, Response> {
        let jar = CookieJar::from_headers(&parts.headers);
        let token = jar.get(SESSION_COOKIE).map(|c| c.value().to_owned());
        let session = match token {
            Some(token) => reads::console::session(&state.db, &token)
                .await
                .map_err(fault)?,
            None => None,
        };
        match session {
            Some(session) => Ok(Signed(session)),
            None if parts.method == Method::GET => {
                Err(Redirect::to("/console/sign-in").into_response())
            }
            None => Err(message(
                state,
                None,
                StatusCode::UNAUTHORIZED,
                "Signed out",
                "This needs a session: sign in again.",
            )
            .await),
        }
    }
}

impl axum::extract::OptionalFromRequestParts<PortfolioState> for Signed {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &PortfolioState,
    ) -> Result<Option<Self>, Response> {
        let jar = CookieJar::from_headers(&parts.headers);
        let Some(token) = jar.get(SESSION_COOKIE).map(|c| c.value().to_owned()) else {
            return Ok(None);
        };
        Ok(reads::console::session(&state.db, &token)
            .await
            .map_err(fault)?
            .map(Signed))
    }
}

/// A form of a session's page (the request's last extractor): the session
/// and the form's fields, once its CSRF token (the `csrf` field) is the
/// session's; anything else is a 403 page (no session: as [`Signed`]).
pub(crate) struct Form {
    pub(crate) session: Session,
    pub(crate) fields: Vec<(String, String)>,
}

impl FromRequest<PortfolioState> for Form {
    type Rejection = Response;

    async fn from_request(request: Request, state: &PortfolioState) -> Result<Self, Response> {
        let (mut parts, body) = request.into_parts();
        let Signed(session) = Signed::from_request_parts(&mut parts, state).await?;
        let Ok(body) = Bytes::from_request(Request::from_parts(parts, body), state).await else {
            let text = "The form could not be read: send it again from the page.";
            return Err(message(
                state,
                Some(&session),
                StatusCode::BAD_REQUEST,
                "Refused",
                text,
            )
            .await);
        };
        let fields: Vec<(String, String)> = url::form_urlencoded::parse(&body)
            .map(|(name, value)| (name.into_owned(), value.into_owned()))
            .collect();
        let csrf = fields
            .iter()
            .find(|(name, _)| name == "csrf")
            .map(|(_, value)| value.as_bytes())
            .unwrap_or_default();
        if bool::from(csrf.ct_eq(session.csrf_token.as_bytes())) {
            return Ok(Form { session, fields });
        }
        Err(message(
            state,
            Some(&session),
            StatusCode::FORBIDDEN,
            "Refused",
            "This form did not come from this session's page (its CSRF token is wrong). \
             Reload the page and try again.",
        )
        .await)
    }
}

impl Form {
    /// The first value of field `name`.
    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(field, _)| field == name)
            .map(|(_, value)| value.as_str())
    }

    /// Every value of field `name`.
    pub(crate) fn all(&self, name: &str) -> Vec<&str> {
        self.fields
            .iter()
            .filter(|(field, _)| field == name)
            .map(|(_, value)| value.as_str())
            .collect()
    }
}

/// The console page `template` with `context`, the site and the session.
pub(crate) async fn page(
    state: &PortfolioState,
    session: Option<&Session>,
    status: StatusCode,
    template: &str,
    context: minijinja::Value,
) -> Response {
    let site = match reads::newsletter::site(&state.db, &state.public_url).await {
        Ok(site) => site,
        Err(failure) => return fault(failure),
    };
    let csrf = session.map(|s| s.csrf_token.clone());
    let signed_in_as = session.map(|s| s.signed_in_as.clone());
    match templates::render(template, context! { site, csrf, signed_in_as, ..context }) {
        Ok(html) => (
            status,
            [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
            html,
        )
            .into_response(),
        Err(e) => fault(Failure::fault("console page", e)),
    }
}

/// The page `template` of what a read gave (its context), or the page of
/// its failure.
pub(crate) async fn page_of(
    state: &PortfolioState,
    session: &Session,
    template: &str,
    read: Result<minijinja::Value, Failure>,
) -> Response {
    match read {
        Ok(context) => page(state, Some(session), StatusCode::OK, template, context).await,
        Err(failure) => failure_page(state, Some(session), failure).await,
    }
}

/// Where a list of `total` items, `per_page` a page, stands at page
/// `page` (from 1): for the page's links.
#[derive(Debug, serde::Serialize)]
pub(crate) struct Paging {
    page: i64,
    pages: i64,
    previous: Option<i64>,
    next: Option<i64>,
}

impl Paging {
    pub(crate) fn new(page: i64, total: i64, per_page: i64) -> Self {
        let pages = ((total + per_page - 1) / per_page).max(1);
        Paging {
            page,
            pages,
            previous: (page > 1).then(|| page - 1),
            next: (page < pages).then(|| page + 1),
        }
    }

    /// The page a request asks for (`?page=`, from 1; 1 when it says none).
    pub(crate) fn asked(uri: &axum::http::Uri, per_page: i64) -> i64 {
        url::form_urlencoded::parse(uri.query().unwrap_or_default().as_bytes())
            .find(|(name, _)| name == "page")
            .and_then(|(_, n)| n.parse::<i64>().ok())
            .unwrap_or(1)
            .clamp(1, i64::MAX / per_page)
    }
}

/// A page that says one thing.
pub(crate) async fn message(
    state: &PortfolioState,
    session: Option<&Session>,
    status: StatusCode,
    title: &str,
    text: &str,
) -> Response {
    page(
        state,
        session,
        status,
        "pages/console/message.html",
        context! { title, text },
    )
    .await
}

/// A failure as a page: what the caller may know of it, with its status.
pub(crate) async fn failure_page(
    state: &PortfolioState,
    session: Option<&Session>,
    failure: Failure,
) -> Response {
    // A rule of a field broken: the page names each field and its problem.
    let problems = match &failure {
        Failure::Invalid { fields, .. } => fields
            .iter()
            .map(|(field, problem)| format!(" {field}: {problem}."))
            .collect::<String>(),
        _ => String::new(),
    };
    let retry_after = match &failure {
        Failure::Busy { retry_after, .. } => Some(*retry_after),
        _ => None,
    };
    let error = crate::http::error::Error::from(failure.clone());
    let status = error.status();
    if status.is_server_error() {
        return fault(failure);
    }
    let title = status.canonical_reason().unwrap_or("Refused");
    let text = format!("{}.{problems}", error.message().trim_end_matches('.'));
    let mut page = message(state, session, status, title, &text).await;
    // Too many attempts: when to come back, as the API says it.
    if let Some(seconds) = retry_after {
        page.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    }
    page
}

/// A fault of the server's: logged here with its cause (the page is marked
/// rendered, so the service's renderer, which logs faults, never sees it),
/// and a short page that says only that.
fn fault(failure: Failure) -> Response {
    tracing::error!(error = %failure, "console");
    let status = crate::http::error::Error::from(failure).status();
    let mut response = (
        status,
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        "<!doctype html><title>Error</title><p>Something went wrong on the server; it is logged.</p>",
    )
        .into_response();
    crate::http::error::mark_rendered(&mut response);
    response
}

/// After an action: back to `path` (303: the browser GETs it), or the
/// page of its failure.
pub(crate) async fn then_back<T>(
    state: &PortfolioState,
    session: &Session,
    path: &str,
    done: Result<T, Failure>,
) -> Response {
    match done {
        Ok(_) => see_other(path),
        Err(failure) => failure_page(state, Some(session), failure).await,
    }
}

/// Back to `path` after an action (303: the browser GETs it).
pub(crate) fn see_other(path: &str) -> Response {
    Redirect::to(path).into_response()
}
