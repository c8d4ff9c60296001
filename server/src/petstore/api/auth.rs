//! The pet store's security. In auth mode `open` (the
//! default, upstream's behaviour) nothing is checked. In `enforce`, each
//! operation takes what the official document assigns it:
//!
//! - `petstore_auth`: a bearer token, from `/oauth/authorize` (the implicit
//!   flow, [`crate::petstore::api::authorize`]) or a `loginUser` session (which carries
//!   both scopes), with the scopes the operation lists;
//! - `basic`: a pet store user's name and password, wherever
//!   `petstore_auth` is (failures count as failed logins);
//! - `api_key`: a pet store key from the operator's CLI, in the `api_key`
//!   header, where the document lists it.
//!
//! The user operations (`updateUser`, `deleteUser`, and the private fields
//! of `getUserByName`) take the user's own credentials (a session or
//! implicit-flow token of that user, of any scope, or Basic) or an
//! `api_key` with the scope `admin`: [`Principal::may_act_for`].
//!
//! A missing or bad credential is 401 with a `WWW-Authenticate` challenge
//! for each scheme the operation takes; a token without the scope 403.
//! Credentials in the query string are refused. What a request presents is
//! checked once, by [`authenticate`], a step of its own at the service's
//! edge before the rate limit, and left in its extensions as [`Presented`];
//! the extractors judge it against what their operation takes. Sessions and
//! verified passwords are cached ([`crate::access::sessions`]): a request
//! with either costs no database query or password hash once seen.

use std::marker::PhantomData;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderName};

use crate::access::Service;
use crate::access::keys::Verdict;
use crate::config::{AuthMode, Scope};
use crate::core::secret;
use crate::http::challenges::{self, Challenge};
use crate::http::credentials::{self, Authorization};
use crate::http::error::{Error, ErrorCode};
use crate::http::extract::client_address;
use crate::petstore::ops;
use crate::petstore::reads::users;
use crate::petstore::state::PetstoreState;
use crate::telemetry::metrics::{self, AuthFailure};

/// The header of the pet store's API key.
pub(crate) const API_KEY_HEADER: &str = "api_key";

/// The headers that carry the pet store's credentials: who a caller is,
/// for idempotency keys.
pub(crate) static CREDENTIAL_HEADERS: [HeaderName; 2] = [
    axum::http::header::AUTHORIZATION,
    HeaderName::from_static(API_KEY_HEADER),
];

/// The realm of the pet store's challenges.
const REALM: &str = "petstore";

pub(crate) use crate::petstore::model::{PetScope, Principal};

/// What an operation takes in `enforce` mode.
pub(crate) trait Security: Send + Sync + 'static {
    /// An `api_key`.
    const API_KEY: bool;
    /// A `petstore_auth` token with these scopes (or Basic); none: neither.
    const OAUTH: Option<&'static [PetScope]>;
}

macro_rules! security {
    ($(#[$doc:meta])* $name:ident, api_key: $key:expr, oauth: $oauth:expr) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub(crate) struct $name;

        impl Security for $name {
            const API_KEY: bool = $key;
            const OAUTH: Option<&'static [PetScope]> = $oauth;
        }
    };
}

security!(
    /// Pet operations: `petstore_auth` (both scopes) or Basic.
    Pets,
    api_key: false,
    oauth: Some(&[PetScope::WritePets, PetScope::ReadPets])
);
security!(
    /// getPetById: `api_key`, or `petstore_auth` (both scopes) or Basic.
    PetsOrKey,
    api_key: true,
    oauth: Some(&[PetScope::WritePets, PetScope::ReadPets])
);
security!(
    /// A pet's image: `api_key`, or `petstore_auth` (`read:pets`) or Basic.
    PetImages,
    api_key: true,
    oauth: Some(&[PetScope::ReadPets])
);
security!(
    /// getInventory: `api_key`.
    Inventory,
    api_key: true,
    oauth: None
);
security!(
    /// The user operations: a token of the user's (any scope), Basic, or an
    /// `api_key` (which acts for a user only with the scope `admin`).
    UserAccount,
    api_key: true,
    oauth: Some(&[])
);

/// Proof that a request may call an operation of security `S`, and who
/// made it (`None` in `open` mode, where nothing is checked). As an
/// extractor it reads the headers alone, so a refused request's body is
/// not read.
#[derive(Debug)]
pub(crate) struct Authorized<S>(pub(crate) Option<Principal>, pub PhantomData<S>);

impl<S: Security> FromRequestParts<PetstoreState> for Authorized<S> {
    type Rejection = Error;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &PetstoreState,
    ) -> Result<Self, Self::Rejection> {
        let principal = match state.config.auth_mode {
            AuthMode::Open => None,
            AuthMode::Enforce => Some(
                identify::<S>(parts, state)
                    .await
                    .and_then(|principal| {
                        principal.ok_or_else(|| {
                            unauthorized(format!("this operation needs {}", accepted::<S>()))
                        })
                    })
                    .and_then(|principal| has_scopes::<S>(principal))
                    .map_err(|error| with_challenges::<S>(error, &parts.headers))?,
            ),
        };
        Ok(Authorized(principal, PhantomData))
    }
}

/// The caller of an operation whose credential is optional (getUserByName,
/// which shows private fields only to the user): `None` in `open` mode or
/// without a credential; a credential presented must be valid.
#[derive(Debug)]
pub(crate) struct Viewer(pub(crate) Option<Principal>);

impl FromRequestParts<PetstoreState> for Viewer {
    type Rejection = Error;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &PetstoreState,
    ) -> Result<Self, Self::Rejection> {
        let viewer = match state.config.auth_mode {
            AuthMode::Open => None,
            AuthMode::Enforce => identify::<UserAccount>(parts, state)
                .await
                .map_err(|error| with_challenges::<UserAccount>(error, &parts.headers))?,
        };
        Ok(Viewer(viewer))
    }
}

/// A 401 (any other error as it is) with a challenge for each scheme `S`
/// takes.
fn with_challenges<S: Security>(error: Error, headers: &HeaderMap) -> Error {
    if error.code() != ErrorCode::Unauthorized {
        return error;
    }
    let mut challenges = Vec::new();
    if S::OAUTH.is_some() {
        challenges.push(Challenge::bearer(REALM));
        challenges.push(Challenge::Basic { realm: REALM });
    }
    if S::API_KEY {
        challenges.push(Challenge::ApiKey {
            realm: REALM,
            header: API_KEY_HEADER,
        });
    }
    challenges::challenge(error, &challenges, headers)
}

fn unauthorized(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::Unauthorized, message.into())
}

/// What `S` takes, in words, for messages.
fn accepted<S: Security>() -> &'static str {
    match (S::API_KEY, S::OAUTH.is_some()) {
        (true, true) => "an api_key header, a bearer token or HTTP Basic",
        (true, false) => "an api_key header",
        (false, true) => "a bearer token or HTTP Basic",
        (false, false) => "nothing",
    }
}

/// What a pet store request presents, checked once by [`authenticate`]
/// (in `enforce` mode), for the extractors to judge against what each
/// operation takes.
#[derive(Debug, Clone)]
pub(crate) struct Presented {
    /// A query parameter that carries a credential (refused).
    in_query: Option<String>,
    /// What `Authorization` (Bearer or Basic) names, if it was sent.
    user: Option<Result<Principal, Error>>,
    /// What `api_key` names, if it was sent.
    key: Option<Result<Principal, Error>>,
}

impl Presented {
    /// Reads and checks what a request presents: the session or implicit
    /// token (from the cache, or looked up once), the Basic pair
    /// (remembered, or verified under the failed-login limits), the key.
    async fn check(parts: &Parts, state: &PetstoreState) -> Presented {
        let user = match credentials::authorization(&parts.headers) {
            Some(authorization) => {
                let address = client_address(&parts.extensions);
                Some(user(authorization, state, address).await)
            }
            None => None,
        };
        let key = credentials::header_text(&parts.headers, API_KEY_HEADER)
            .map(|key| key_principal(key, state));
        Presented {
            in_query: credentials::secret_in_query(&parts.uri),
            user,
            key,
        }
    }

    /// The principal of the credential `S` takes, if the request presents
    /// one (`None`: nothing at all); an error for a credential refused.
    fn principal<S: Security>(&self) -> Result<Option<Principal>, Error> {
        if let Some(name) = &self.in_query {
            return Err(unauthorized(format!(
                "credentials are refused in the query string ({name}=...): send {}",
                accepted::<S>()
            )));
        }
        match (&self.user, &self.key) {
            (Some(user), _) if S::OAUTH.is_some() => user.clone().map(Some),
            (_, Some(key)) if S::API_KEY => key.clone().map(Some),
            (None, None) => Ok(None),
            _ => Err(unauthorized(format!(
                "this operation takes {}",
                accepted::<S>()
            ))),
        }
    }
}

/// Whether the pet store's authentication step looks at a request at all
/// (`enforce` mode): in `open` mode credentials are not looked at.
pub(crate) fn checks_credentials(state: &PetstoreState) -> bool {
    state.config.auth_mode != AuthMode::Open
}

/// The pet store's authentication step, at the service's edge before the
/// rate limit (`app::PetstoreEdge`): in `enforce` mode, checks what
/// `request` presents, once, and leaves it ([`Presented`]) in its
/// extensions for the extractors. It refuses nothing: each operation's
/// extractor decides what it needs.
pub(crate) async fn authenticate(
    state: &PetstoreState,
    request: axum::extract::Request,
) -> axum::extract::Request {
    if !checks_credentials(state) {
        return request;
    }
    let (parts, body) = request.into_parts();
    let presented = Presented::check(&parts, state).await;
    let mut request = axum::extract::Request::from_parts(parts, body);
    request.extensions_mut().insert(presented);
    request
}

/// The principal of a request's credential that `S` takes: from what the
/// authentication step found (or checked now, for a request that did not
/// pass it).
async fn identify<S: Security>(
    parts: &Parts,
    state: &PetstoreState,
) -> Result<Option<Principal>, Error> {
    match parts.extensions.get::<Presented>() {
        Some(presented) => presented.principal::<S>(),
        None => Presented::check(parts, state).await.principal::<S>(),
    }
}

/// `principal`, if it holds the scopes `S` needs.
fn has_scopes<S: Security>(principal: Principal) -> Result<Principal, Error> {
    if let Principal::User { scopes, .. } = &principal {
        let needed = S::OAUTH.unwrap_or_default();
        if let Some(missing) = needed.iter().find(|scope| !scopes.contains(scope)) {
            return Err(Error::new(
                ErrorCode::Forbidden,
                format!("the token lacks the scope {}", missing.as_str()),
            )
            .with_detail("required_scope", missing.as_str()));
        }
    }
    Ok(principal)
}

fn key_principal(key: Option<&str>, state: &PetstoreState) -> Result<Principal, Error> {
    // A header that is there but not text matches nothing.
    let verdict = key.map_or(Verdict::Unknown, |key| {
        state.access.keys.verify(key, Service::Petstore)
    });
    match verdict {
        Verdict::Valid { scopes, .. } => Ok(Principal::Key {
            admin: scopes.contains(&Scope::Admin),
        }),
        Verdict::NoLongerValid => {
            metrics::authentication_failed("petstore", AuthFailure::RevokedApiKey);
            Err(unauthorized("the api_key is revoked or expired"))
        }
        Verdict::Unknown => {
            metrics::authentication_failed("petstore", AuthFailure::UnknownApiKey);
            Err(unauthorized("the api_key is not valid"))
        }
    }
}

async fn user(
    authorization: Authorization<'_>,
    state: &PetstoreState,
    address: Option<std::net::IpAddr>,
) -> Result<Principal, Error> {
    match authorization {
        Authorization::Bearer(token) => {
            let token_hash = secret::sha256_hex(token);
            let Some(session) =
                users::session(state.reads().db, &state.access.sessions, token, &token_hash)
                    .await?
            else {
                metrics::authentication_failed("petstore", AuthFailure::InvalidToken);
                return Err(unauthorized("the bearer token is not valid or has expired"));
            };
            let scopes = match &session.scopes {
                None => PetScope::ALL.to_vec(),
                Some(text) => text.split(' ').filter_map(PetScope::parse).collect(),
            };
            Ok(Principal::User {
                id: session.user_id,
                scopes,
                session: Some(token_hash),
            })
        }
        Authorization::Basic { username, password } => {
            match ops::sessions::check_password(state.ops(), &username, &password, address).await? {
                Some(id) => Ok(Principal::User {
                    id,
                    scopes: PetScope::ALL.to_vec(),
                    session: None,
                }),
                None => Err(unauthorized("invalid username/password supplied")),
            }
        }
        Authorization::MalformedBasic => {
            metrics::authentication_failed("petstore", AuthFailure::Malformed);
            Err(unauthorized("the Basic credentials are malformed"))
        }
        Authorization::Other => {
            metrics::authentication_failed("petstore", AuthFailure::Malformed);
            Err(unauthorized(
                "the Authorization header must be Bearer <token> or Basic <credentials>",
            ))
        }
    }
}

/// The SHA-256 of the session token a request carries (Bearer), if any.
pub(crate) fn session_of(headers: &HeaderMap) -> Option<String> {
    match credentials::authorization(headers)? {
        Authorization::Bearer(token) => Some(secret::sha256_hex(token)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_user_acts_for_themselves_and_an_admin_key_for_anyone() {
        let user = Principal::User {
            id: 3,
            scopes: vec![PetScope::ReadPets],
            session: None,
        };
        assert!(user.may_act_for(3));
        assert!(!user.may_act_for(4));
        assert!(Principal::Key { admin: true }.may_act_for(4));
        assert!(!Principal::Key { admin: false }.may_act_for(4));
    }
}
