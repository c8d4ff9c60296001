//! `/oauth/authorize`: the pet store's authorization endpoint for the
//! implicit grant (RFC 6749 section 4.2), the `authorizationUrl` of the
//! document's `petstore_auth`. `GET` shows a small sign-in page for pet
//! store users; `POST` (the page's form) checks the name and password and
//! sends the browser back to the registered redirect URI with the token in
//! the fragment (`#access_token=...&token_type=Bearer&...`). The token is a
//! pet store session with the scopes asked for.
//!
//! Only a registered redirect URI is ever sent a token or an error (the
//! operator's list, or by default Swagger UI's `oauth2-redirect.html` on
//! this server); a request naming another is refused on the page itself.
//!
//! The form carries a token tied to it (login CSRF: another site's page
//! must not sign a browser in as the attacker): the page sets it in a
//! `SameSite=Strict` cookie and a hidden field, and a sign-in whose field
//! does not match its cookie is refused (403). Another site can neither read
//! the field nor send the cookie.
//! These are pages for a browser: their answers are HTML, but a wrong
//! method, which the service's errors answer.

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::core::failure::Failure;
use crate::http::error::Error;
use crate::http::extract::{ClientAddress, field, single_fields};
use crate::http::html::{harden, page};
use crate::petstore::api::auth::PetScope;
use crate::petstore::ops;
use crate::petstore::state::PetstoreState;

/// Where the endpoint is served.
pub(crate) const AUTHORIZE_PATH: &str = "/oauth/authorize";

/// Swagger UI's page that receives the token.
const SWAGGER_REDIRECT: &str = "/oauth2-redirect.html";

/// The cookie and the form field of the sign-in form's token.
const CSRF_COOKIE: &str = "petstore_signin";
const CSRF_FIELD: &str = "csrf_token";

/// How long a sign-in form may be left open (seconds).
const FORM_TTL_SECS: u32 = 1800;

/// The parameters the endpoint reads (others are ignored).
const PARAMETERS: [&str; 9] = [
    CSRF_FIELD,
    "response_type",
    "client_id",
    "redirect_uri",
    "scope",
    "state",
    "username",
    "password",
    "action",
];

/// The longest `client_id` and `state` worth carrying.
const MAX_PARAM_CHARS: usize = 500;

/// The authorization endpoint's routes (outside `/v2`, where the
/// document's `authorizationUrl` points).
pub(crate) fn router(state: PetstoreState) -> Router {
    Router::new()
        .route(AUTHORIZE_PATH, get(show_sign_in).post(sign_in))
        .with_state(state)
}

/// An authorization request, checked as far as it can be before a redirect
/// URI is trusted.
struct AuthorizationRequest {
    client_id: String,
    redirect_uri: String,
    scopes: Vec<PetScope>,
    state: Option<String>,
}

/// Why a request cannot go on: shown on the page (no trusted redirect URI
/// yet), or sent to the redirect URI as RFC 6749's error.
enum Refusal {
    Page(StatusCode, String),
    Redirect {
        redirect_uri: String,
        error: &'static str,
        description: String,
        state: Option<String>,
    },
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        match self {
            Refusal::Page(status, message) => page(status, error_page(&message)),
            Refusal::Redirect {
                redirect_uri,
                error,
                description,
                state,
            } => {
                let mut fragment = form_urlencoded::Serializer::new(String::new());
                fragment.append_pair("error", error);
                fragment.append_pair("error_description", &description);
                if let Some(state) = &state {
                    fragment.append_pair("state", state);
                }
                redirect(&format!("{redirect_uri}#{}", fragment.finish()))
            }
        }
    }
}

/// The redirect URIs a token may go to: the operator's list, or Swagger
/// UI's on this server's public URL (`--public-url`, or the bound address).
/// Never one built from the request's `Host`, which the client chooses.
fn registered(state: &PetstoreState) -> Vec<String> {
    if !state.config.oauth_redirect_uris.is_empty() {
        return state.config.oauth_redirect_uris.clone();
    }
    let docs = crate::http::docs::SWAGGER_UI_PATH;
    vec![format!("{}{docs}{SWAGGER_REDIRECT}", state.public_url)]
}

fn check_request(
    state: &PetstoreState,
    fields: &[(String, String)],
) -> Result<AuthorizationRequest, Refusal> {
    let bad = |message: &str| Refusal::Page(StatusCode::BAD_REQUEST, message.to_owned());
    let client_id = field(fields, "client_id").ok_or_else(|| bad("client_id is required"))?;
    let state_param = field(fields, "state");
    if client_id.chars().count() > MAX_PARAM_CHARS
        || state_param.is_some_and(|s| s.chars().count() > MAX_PARAM_CHARS)
    {
        return Err(bad("client_id or state is too long"));
    }
    let registered = registered(state);
    let redirect_uri = match field(fields, "redirect_uri") {
        None => registered.first().cloned().unwrap_or_default(),
        Some(uri) if registered.iter().any(|r| r == uri) => uri.to_owned(),
        Some(_) => return Err(bad("the redirect_uri is not registered with this server")),
    };
    let state_param = state_param.map(str::to_owned);
    let refuse = |error: &'static str, description: String| Refusal::Redirect {
        redirect_uri: redirect_uri.clone(),
        error,
        description,
        state: state_param.clone(),
    };
    match field(fields, "response_type") {
        Some("token") => {}
        other => {
            return Err(refuse(
                "unsupported_response_type",
                format!("response_type must be token, not {other:?}"),
            ));
        }
    }
    let scopes = match field(fields, "scope") {
        None => PetScope::ALL.to_vec(),
        Some(text) => {
            let mut scopes = Vec::new();
            for name in text.split(' ').filter(|n| !n.is_empty()) {
                let scope = PetScope::parse(name)
                    .ok_or_else(|| refuse("invalid_scope", format!("unknown scope {name:?}")))?;
                if !scopes.contains(&scope) {
                    scopes.push(scope);
                }
            }
            if scopes.is_empty() {
                PetScope::ALL.to_vec()
            } else {
                scopes
            }
        }
    };
    Ok(AuthorizationRequest {
        client_id: client_id.to_owned(),
        redirect_uri,
        scopes,
        state: state_param,
    })
}

/// Shows the sign-in page.
pub(crate) async fn show_sign_in(State(state): State<PetstoreState>, uri: Uri) -> Response {
    let fields = match single_fields(uri.query().unwrap_or_default().as_bytes(), &PARAMETERS) {
        Ok(fields) => fields,
        Err(name) => {
            return Refusal::Page(StatusCode::BAD_REQUEST, format!("{name} is given twice"))
                .into_response();
        }
    };
    match check_request(&state, &fields) {
        Ok(request) => {
            let csrf = crate::core::secret::token::<32>();
            let mut response = page(StatusCode::OK, sign_in_page(&request, &csrf, None));
            let secure = if state.public_url.starts_with("https:") {
                "; Secure"
            } else {
                ""
            };
            let cookie = format!(
                "{CSRF_COOKIE}={csrf}; Path={AUTHORIZE_PATH}; Max-Age={FORM_TTL_SECS}; \
                 HttpOnly; SameSite=Strict{secure}"
            );
            if let Ok(cookie) = HeaderValue::from_str(&cookie) {
                response.headers_mut().insert(header::SET_COOKIE, cookie);
            }
            response
        }
        Err(refusal) => refusal.into_response(),
    }
}

/// The form's token as its cookie holds it, if the request carries one.
fn csrf_cookie(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == CSRF_COOKIE)
        .map(|(_, value)| value)
}

/// Whether the form's field matches its cookie (compared in constant time).
fn form_is_ours(headers: &HeaderMap, fields: &[(String, String)]) -> bool {
    use subtle::ConstantTimeEq as _;
    match (csrf_cookie(headers), field(fields, CSRF_FIELD)) {
        (Some(cookie), Some(sent)) if !cookie.is_empty() => {
            bool::from(cookie.as_bytes().ct_eq(sent.as_bytes()))
        }
        _ => false,
    }
}

/// Signs in (the page's form), or cancels.
pub(crate) async fn sign_in(
    State(state): State<PetstoreState>,
    ClientAddress(address): ClientAddress,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if !crate::http::extract::has_media_type(&headers, "application/x-www-form-urlencoded") {
        return Refusal::Page(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "the sign-in form is sent as application/x-www-form-urlencoded".to_owned(),
        )
        .into_response();
    }
    let fields = match single_fields(&body, &PARAMETERS) {
        Ok(fields) => fields,
        Err(name) => {
            return Refusal::Page(StatusCode::BAD_REQUEST, format!("{name} is given twice"))
                .into_response();
        }
    };
    let request = match check_request(&state, &fields) {
        Ok(request) => request,
        Err(refusal) => return refusal.into_response(),
    };
    if !form_is_ours(&headers, &fields) {
        return Refusal::Page(
            StatusCode::FORBIDDEN,
            "this sign-in form has expired or was not sent from this server's page; open the \
             sign-in page again"
                .to_owned(),
        )
        .into_response();
    }
    let csrf = field(&fields, CSRF_FIELD).unwrap_or_default().to_owned();
    if field(&fields, "action") == Some("cancel") {
        return Refusal::Redirect {
            redirect_uri: request.redirect_uri,
            error: "access_denied",
            description: "the user declined".to_owned(),
            state: request.state,
        }
        .into_response();
    }
    let (username, password) = (
        field(&fields, "username").unwrap_or_default(),
        field(&fields, "password").unwrap_or_default(),
    );
    let user_id =
        match ops::sessions::check_password(state.ops(), username, password, address).await {
            Ok(Some(id)) => id,
            Ok(None) => {
                return page(
                    StatusCode::UNAUTHORIZED,
                    sign_in_page(&request, &csrf, Some("Wrong username or password.")),
                );
            }
            Err(Failure::Busy {
                message,
                per_caller: true,
                retry_after,
            }) => {
                let mut response = page(
                    StatusCode::TOO_MANY_REQUESTS,
                    sign_in_page(&request, &csrf, Some(&message)),
                );
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from(retry_after));
                return response;
            }
            Err(failure) => return Error::from(failure).into_response(),
        };
    let scopes: Vec<&str> = request.scopes.iter().map(|s| s.as_str()).collect();
    let scope = scopes.join(" ");
    let token = match ops::sessions::start(state.ops(), user_id, Some(&scope)).await {
        Ok((token, _)) => token,
        Err(failure) => return Error::from(failure).into_response(),
    };
    let expires_in = state.config.session_ttl_secs;
    let mut fragment = form_urlencoded::Serializer::new(String::new());
    fragment
        .append_pair("access_token", &token)
        .append_pair("token_type", "Bearer")
        .append_pair("expires_in", &expires_in.to_string())
        .append_pair("scope", &scope);
    if let Some(state) = &request.state {
        fragment.append_pair("state", state);
    }
    redirect(&format!("{}#{}", request.redirect_uri, fragment.finish()))
}

/// 303 to `location`, which is a registered redirect URI.
fn redirect(location: &str) -> Response {
    match HeaderValue::from_str(location) {
        Ok(location) => {
            let mut response =
                (StatusCode::SEE_OTHER, [(header::LOCATION, location)]).into_response();
            harden(&mut response);
            response
        }
        Err(e) => Error::internal("a redirect that is not a header value", e).into_response(),
    }
}

/// Text made safe to put in HTML (content or a quoted attribute).
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:26rem;margin:3rem auto;padding:0 1rem}\
label{display:block;margin:.8rem 0 .2rem}input{width:100%;padding:.4rem;box-sizing:border-box}\
button{margin:1rem .5rem 0 0;padding:.5rem 1rem}.error{color:#b00020}";

fn sign_in_page(request: &AuthorizationRequest, csrf: &str, error: Option<&str>) -> String {
    let hidden = |name: &str, value: &str| {
        format!(
            "<input type=\"hidden\" name=\"{name}\" value=\"{}\">",
            escape(value)
        )
    };
    let scopes: Vec<&str> = request.scopes.iter().map(|s| s.as_str()).collect();
    let scope = scopes.join(" ");
    let mut hidden_fields = vec![
        hidden(CSRF_FIELD, csrf),
        hidden("response_type", "token"),
        hidden("client_id", &request.client_id),
        hidden("redirect_uri", &request.redirect_uri),
        hidden("scope", &scope),
    ];
    if let Some(state) = &request.state {
        hidden_fields.push(hidden("state", state));
    }
    let error = error
        .map(|e| format!("<p class=\"error\" role=\"alert\">{}</p>", escape(e)))
        .unwrap_or_default();
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>Sign in to the Pet Store</title><style>{STYLE}</style></head><body>\
         <h1>Sign in to the Pet Store</h1>\
         <p><strong>{client}</strong> asks for access to your pets ({scope}).</p>{error}\
         <form method=\"post\" action=\"{AUTHORIZE_PATH}\">{hidden}\
         <label for=\"username\">Username</label>\
         <input id=\"username\" name=\"username\" autocomplete=\"username\" required>\
         <label for=\"password\">Password</label>\
         <input id=\"password\" name=\"password\" type=\"password\" autocomplete=\"current-password\" required>\
         <button type=\"submit\" name=\"action\" value=\"sign_in\">Sign in</button>\
         <button type=\"submit\" name=\"action\" value=\"cancel\" formnovalidate>Cancel</button>\
         </form></body></html>",
        client = escape(&request.client_id),
        scope = escape(&scope),
        hidden = hidden_fields.join(""),
    )
}

fn error_page(message: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>Cannot sign in</title><style>{STYLE}</style></head><body>\
         <h1>Cannot sign in</h1><p class=\"error\">{}</p>\
         <p>The link that brought you here is not one this server accepts.</p></body></html>",
        escape(message)
    )
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn what_a_client_sends_cannot_become_markup() {
        assert_eq!(
            escape("<script>\"x\" & 'y'</script>"),
            "&lt;script&gt;&quot;x&quot; &amp; &#39;y&#39;&lt;/script&gt;"
        );
    }
}
