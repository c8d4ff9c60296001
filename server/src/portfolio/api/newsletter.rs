//! The newsletter: subscribe (idempotent, the same answer for new and known
//! addresses), confirm (double opt-in), unsubscribe (RFC 8058's one-click
//! POST, or a GET that asks for JSON), subscribe again. The links in the
//! emails answer a browser with pages in the site's name
//! (`server/templates/pages/`), and a client with the documented JSON.

use axum::extract::{FromRequestParts, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use minijinja::context;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::core::failure::Failure;
use crate::core::templates;
use crate::http::error::Error;
use crate::http::extract::{JsonBody, Query};
use crate::http::html;
use crate::http::idempotency::Idempotent;
use crate::portfolio::model::SubscriberStatus;
use crate::portfolio::ops;
use crate::portfolio::ops::newsletter::SubscribeRequest;
use crate::portfolio::reads;
use crate::portfolio::state::PortfolioState;

/// The answer to a subscription: the same whether the address was new,
/// known, or unsubscribed, so that it reveals nothing about who subscribed.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub(crate) struct SubscribeAccepted {
    #[schema(inline)]
    pub(crate) status: AcceptedStatus,
    pub(crate) message: String,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum AcceptedStatus {
    Accepted,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub(crate) struct SubscriptionState {
    #[schema(inline)]
    pub(crate) status: SubscriptionStatus,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum SubscriptionStatus {
    Subscribed,
    Unsubscribed,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct TokenQuery {
    /// The token from the link in the email.
    #[param(min_length = 1, max_length = 100)]
    token: String,
}

/// The token of a newsletter link (`?token=`), if it has one: a link
/// without one is answered as a page or as JSON, as the request asks.
pub(crate) struct LinkToken(Option<String>);

impl<S: Send + Sync> FromRequestParts<S> for LinkToken {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Error> {
        let token = Query::<TokenQuery>::from_request_parts(parts, state)
            .await
            .ok()
            .map(|Query(TokenQuery { token })| token);
        Ok(LinkToken(token))
    }
}

impl LinkToken {
    /// The token; a link without one is a 400.
    fn require(self) -> Result<String, Failure> {
        self.0
            .ok_or_else(|| Failure::malformed("the link has no token"))
    }
}

/// Subscribes to the newsletter; 422 for what is not an email address.
#[utoipa::path(
    post, path = "/api/newsletter",
    tag = "newsletter",
    params(crate::http::idempotency::IdempotencyKeyHeader),
    request_body(content((SubscribeRequest = "application/json"))),
    responses(
        (status = 202, description = "Accepted; the same answer for every address", body = SubscribeAccepted),
    ),
)]
pub(crate) async fn subscribe_newsletter(
    State(state): State<PortfolioState>,
    Idempotent(JsonBody(request)): Idempotent<JsonBody<SubscribeRequest>>,
) -> Result<(StatusCode, axum::Json<SubscribeAccepted>), Error> {
    ops::newsletter::subscribe(state.ops(), &state.config.newsletter, &request).await?;
    Ok((
        StatusCode::ACCEPTED,
        axum::Json(SubscribeAccepted {
            status: AcceptedStatus::Accepted,
            message: "If this address can receive email, a message is on its way.".to_owned(),
        }),
    ))
}

/// Confirms a subscription (double opt-in): a page for a browser, JSON
/// for a client.
#[utoipa::path(
    get, path = "/api/newsletter/confirm",
    tag = "newsletter",
    params(TokenQuery),
    responses(
        (status = 200, description = "Subscribed", content(
            (SubscriptionState = "application/json"),
            (String = "text/html"),
        )),
        (status = 400, description = "The token is missing or has expired"),
        (status = 404, description = "No subscription has this token"),
    ),
)]
pub(crate) async fn confirm_newsletter(
    State(state): State<PortfolioState>,
    headers: HeaderMap,
    token: LinkToken,
) -> Result<Response, Error> {
    let confirmed = match token.require() {
        Ok(token) => ops::newsletter::confirm(state.ops(), &token).await,
        Err(failure) => Err(failure),
    };
    if !html::wants_page(&headers) {
        confirmed?;
        return Ok(json(SubscriptionStatus::Subscribed));
    }
    match confirmed {
        Ok(email) => {
            page(
                &state,
                StatusCode::OK,
                "pages/confirmed.html",
                context! { email },
            )
            .await
        }
        Err(failure) => link_problem(&state, failure, LinkKind::Confirm).await,
    }
}

/// Unsubscribes, for a client that asks for JSON (the documented answer);
/// for anyone else (a browser, and the link scanners of mail filters,
/// which fetch every link of an email) a page whose button POSTs: a GET
/// alone never unsubscribes them.
#[utoipa::path(
    get, path = "/api/newsletter/unsubscribe",
    tag = "newsletter",
    params(TokenQuery),
    responses(
        (status = 200, description = "Unsubscribed (again, if it already was), or the page that asks", content(
            (SubscriptionState = "application/json"),
            (String = "text/html"),
        )),
        (status = 400, description = "The token is missing or malformed"),
        (status = 404, description = "No subscription has this token"),
    ),
)]
pub(crate) async fn unsubscribe_newsletter(
    State(state): State<PortfolioState>,
    headers: HeaderMap,
    token: LinkToken,
) -> Result<Response, Error> {
    if html::asks_for_json(&headers) {
        ops::newsletter::unsubscribe(state.ops(), &token.require()?).await?;
        return Ok(json(SubscriptionStatus::Unsubscribed));
    }
    let holder = match token.require() {
        Ok(token) => reads::newsletter::link_holder(&state.db, &token)
            .await
            .and_then(|holder| {
                holder.ok_or_else(|| Failure::not_found(ops::newsletter::UNKNOWN_UNSUBSCRIBE_LINK))
            })
            .map(|subscriber| (subscriber, token)),
        Err(failure) => Err(failure),
    };
    let (subscriber, token) = match holder {
        Ok(holder) => holder,
        // A problem is a page for a browser, the documented error for others.
        Err(failure) if html::wants_page(&headers) => {
            return link_problem(&state, failure, LinkKind::Unsubscribe).await;
        }
        Err(failure) => return Err(failure.into()),
    };
    let subscribed = subscriber.status != SubscriberStatus::Unsubscribed;
    let links = Links::new(&state.public_url, &token);
    page(
        &state,
        StatusCode::OK,
        "pages/unsubscribe.html",
        context! {
            email => subscriber.email,
            subscribed,
            action => links.unsubscribe,
            resubscribe => links.resubscribe,
        },
    )
    .await
}

/// Unsubscribes in one click (RFC 8058): what a mail client POSTs to the
/// `List-Unsubscribe` URL, and the unsubscribe page's button, which gets
/// a page back.
pub(crate) async fn unsubscribe_newsletter_one_click(
    State(state): State<PortfolioState>,
    headers: HeaderMap,
    token: LinkToken,
) -> Result<Response, Error> {
    let unsubscribed = match token.require() {
        Ok(token) => ops::newsletter::unsubscribe(state.ops(), &token)
            .await
            .map(|email| (email, token)),
        Err(failure) => Err(failure),
    };
    if !html::wants_page(&headers) {
        unsubscribed?;
        return Ok(json(SubscriptionStatus::Unsubscribed));
    }
    match unsubscribed {
        Ok((email, token)) => {
            let links = Links::new(&state.public_url, &token);
            page(
                &state,
                StatusCode::OK,
                "pages/unsubscribed.html",
                context! { email, resubscribe => links.resubscribe },
            )
            .await
        }
        Err(failure) => link_problem(&state, failure, LinkKind::Unsubscribe).await,
    }
}

/// Subscribes again, from the page an unsubscribe link leads to: no
/// confirmation is asked (the link came in an email to the address) and no
/// email is sent.
#[utoipa::path(
    post, path = "/api/newsletter/resubscribe",
    tag = "newsletter",
    params(TokenQuery),
    responses(
        (status = 200, description = "Subscribed (again, if it already was)", content(
            (SubscriptionState = "application/json"),
            (String = "text/html"),
        )),
        (status = 400, description = "The token is missing or malformed"),
        (status = 404, description = "No subscription has this token"),
    ),
)]
pub(crate) async fn resubscribe_newsletter(
    State(state): State<PortfolioState>,
    headers: HeaderMap,
    token: LinkToken,
) -> Result<Response, Error> {
    let resubscribed = match token.require() {
        Ok(token) => ops::newsletter::resubscribe(state.ops(), &token).await,
        Err(failure) => Err(failure),
    };
    if !html::wants_page(&headers) {
        resubscribed?;
        return Ok(json(SubscriptionStatus::Subscribed));
    }
    match resubscribed {
        Ok(email) => {
            page(
                &state,
                StatusCode::OK,
                "pages/resubscribed.html",
                context! { email },
            )
            .await
        }
        Err(failure) => link_problem(&state, failure, LinkKind::Unsubscribe).await,
    }
}

/// The documented JSON answer of a newsletter link.
fn json(status: SubscriptionStatus) -> Response {
    axum::Json(SubscriptionState { status }).into_response()
}

/// Where a subscriber page's buttons POST.
struct Links {
    unsubscribe: String,
    resubscribe: String,
}

impl Links {
    fn new(public_url: &str, token: &str) -> Self {
        let token: String = url::form_urlencoded::byte_serialize(token.as_bytes()).collect();
        Links {
            unsubscribe: format!("{public_url}/api/newsletter/unsubscribe?token={token}"),
            resubscribe: format!("{public_url}/api/newsletter/resubscribe?token={token}"),
        }
    }
}

/// The page `template`, in the site's name, with `context`.
async fn page(
    state: &PortfolioState,
    status: StatusCode,
    template: &str,
    context: minijinja::Value,
) -> Result<Response, Error> {
    let site = reads::newsletter::site(&state.db, &state.public_url).await?;
    let html = templates::render(template, context! { site, ..context })
        .map_err(|e| Error::internal("a subscriber page", e))?;
    Ok(html::page(status, html))
}

/// Which link a problem page speaks of.
#[derive(Debug, Clone, Copy)]
enum LinkKind {
    Confirm,
    Unsubscribe,
}

/// The page for a link that did not work: what is wrong, and what to do,
/// with the status the JSON answer would have.
async fn link_problem(
    state: &PortfolioState,
    failure: Failure,
    kind: LinkKind,
) -> Result<Response, Error> {
    let (title, problem, remedy) = match (&failure, kind) {
        (Failure::NotFound(_), LinkKind::Confirm) => (
            "This link was used already",
            "No subscription waits for this confirmation link: it was used already, or it was \
             changed on its way.",
            "If you confirmed before, you are subscribed and there is nothing more to do. If not, \
             subscribe again for a new link.",
        ),
        (Failure::NotFound(_), LinkKind::Unsubscribe) => (
            "This link is not known",
            "No subscription has this unsubscribe link: it was changed on its way, or the \
             subscription was erased.",
            "Open the link in the newest email you got from the newsletter, or write to the \
             site's owner.",
        ),
        (Failure::Malformed(message), LinkKind::Confirm) if message.contains("expired") => (
            "This link has expired",
            "Confirmation links work for a limited time, and this one's is over.",
            "Subscribe again for a new link.",
        ),
        (Failure::Malformed(_), _) => (
            "This link is incomplete",
            "The link is missing its token, or has a malformed one.",
            "Open the whole link from the email: some mail programs cut long links in two.",
        ),
        _ => return Err(failure.into()),
    };
    let status = Error::from(failure).status();
    page(
        state,
        status,
        "pages/link_problem.html",
        context! { title, problem, remedy },
    )
    .await
}
