//! Signing in (by a printed one-time link, or as an OAuth client that holds
//! `admin`) and out. A link opened in the browser shows a button: the link
//! is used up by its POST, not by a GET a mail scanner or a preview could
//! send. Failed attempts count per client address, as at the token
//! endpoint, and too many are refused for a while.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum_extra::extract::CookieJar;
use axum_extra::extract::cookie::{Cookie, SameSite};
use minijinja::context;

use super::{Form, SESSION_COOKIE, failure_page, page, see_other};
use crate::access::ops::tokens::PresentedClient;
use crate::http::extract::ClientAddress;
use crate::portfolio::ops;
use crate::portfolio::ops::console::NewSession;
use crate::portfolio::state::PortfolioState;

/// The sign-in page: with a link's token, a button that uses it; without,
/// the form for an OAuth client (and how to get a link).
pub(crate) async fn show_sign_in(State(state): State<PortfolioState>, uri: Uri) -> Response {
    let token = url::form_urlencoded::parse(uri.query().unwrap_or_default().as_bytes())
        .find(|(name, _)| name == "token")
        .map(|(_, token)| token.into_owned());
    page(
        &state,
        None,
        StatusCode::OK,
        "pages/console/sign_in.html",
        context! { token },
    )
    .await
}

/// Signs in by the form's `token` (a link's) or `client_id` and
/// `client_secret`, sets the session's cookie, and goes to the dashboard.
pub(crate) async fn sign_in(
    State(state): State<PortfolioState>,
    ClientAddress(address): ClientAddress,
    headers: HeaderMap,
    jar: CookieJar,
    body: Bytes,
) -> Response {
    let fields: Vec<(String, String)> = url::form_urlencoded::parse(&body)
        .map(|(name, value)| (name.into_owned(), value.into_owned()))
        .collect();
    let field = |name: &str| {
        fields
            .iter()
            .find(|(field, _)| field == name)
            .map(|(_, value)| value.clone())
            .filter(|value| !value.is_empty())
    };
    let opened = match (field("token"), field("client_id"), field("client_secret")) {
        (Some(token), _, _) => {
            let failures = state.token_service();
            ops::console::sign_in_with_link(
                &state.db,
                failures.failures,
                address,
                state.config.oauth.failed_client_auth_per_minute,
                &token,
            )
            .await
        }
        (None, Some(id), Some(secret)) => {
            let client = PresentedClient {
                credentials: Ok((id, secret)),
                address,
            };
            ops::console::sign_in_with_client(state.token_service(), client).await
        }
        _ => Err(crate::core::failure::Failure::malformed(
            "sign in with the link the server printed, or a client id and secret",
        )),
    };
    match opened {
        Ok(session) => {
            let jar = jar.add(session_cookie(&session, is_https(&headers, &state)));
            (jar, see_other("/console/")).into_response()
        }
        Err(failure) => failure_page(&state, None, failure).await,
    }
}

/// Ends the session and drops its cookie.
pub(crate) async fn sign_out(
    State(state): State<PortfolioState>,
    jar: CookieJar,
    Form { session, .. }: Form,
) -> Response {
    if let Err(failure) = ops::console::sign_out(&state.db, &session.token_hash).await {
        return failure_page(&state, Some(&session), failure).await;
    }
    let jar = jar.remove(Cookie::build(SESSION_COOKIE).path("/console"));
    (jar, see_other("/console/sign-in")).into_response()
}

/// The cookie of a new session: sent only to the console, never to
/// scripts, never from another site, and only over HTTPS when the server
/// is reached by it. It lasts as long as the browser does; the session
/// ends on the server at its time anyway.
fn session_cookie(session: &NewSession, secure: bool) -> Cookie<'static> {
    Cookie::build((SESSION_COOKIE, session.token.clone()))
        .path("/console")
        .http_only(true)
        .same_site(SameSite::Strict)
        .secure(secure)
        .build()
}

/// Whether the browser reached the server over HTTPS: its public URL says
/// so, or the proxy in front of it does.
fn is_https(headers: &HeaderMap, state: &PortfolioState) -> bool {
    state.public_url.starts_with("https://")
        || headers
            .get("x-forwarded-proto")
            .is_some_and(|proto| proto.as_bytes().eq_ignore_ascii_case(b"https"))
}
