//! The pet store's security (DESIGN 4.1). In auth mode `open` (the
//! default, upstream's behaviour) nothing is checked. In `enforce`, each
//! operation takes what the official document assigns it:
//!
//! - `petstore_auth`: a bearer token, from `/oauth/authorize` (the implicit
//!   flow, [`super::authorize`]) or a `loginUser` session (which carries
//!   both scopes), with the scopes the operation lists;
//! - `basic`: a pet store user's name and password, wherever
//!   `petstore_auth` is (failures count as failed logins);
//! - `api_key`: a pet store key from the operator's CLI, in the `api_key`
//!   header, where the document lists it.
//!
//! A missing or bad credential is 401 with a `WWW-Authenticate` challenge
//! for each scheme the operation takes; a token without the scope 403.
//! Credentials in the query string are refused.

use std::marker::PhantomData;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderValue, header};
use base64::Engine as _;
use chrono::Utc;

use super::PetstoreState;
use super::db;
use crate::access::Service;
use crate::access::keys::Verdict;
use crate::config::AuthMode;
use crate::error::{Error, ErrorCode};
use crate::extract::{client_address, sent_by_a_script};
use crate::secret;

/// The header of the pet store's API key.
pub const API_KEY_HEADER: &str = "api_key";

/// The realm of the pet store's challenges.
const REALM: &str = "petstore";

/// The scopes of `petstore_auth`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PetScope {
    ReadPets,
    WritePets,
}

impl PetScope {
    pub const ALL: [PetScope; 2] = [PetScope::WritePets, PetScope::ReadPets];

    pub fn as_str(self) -> &'static str {
        match self {
            PetScope::ReadPets => "read:pets",
            PetScope::WritePets => "write:pets",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == text)
    }
}

/// What an operation takes in `enforce` mode.
pub trait Security: Send + Sync + 'static {
    /// An `api_key`.
    const API_KEY: bool;
    /// A `petstore_auth` token with these scopes (or Basic); none: neither.
    const OAUTH: Option<&'static [PetScope]>;
}

macro_rules! security {
    ($(#[$doc:meta])* $name:ident, api_key: $key:expr, oauth: $oauth:expr) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $name;

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

/// Proof that a request may call an operation of security `S` (always, in
/// `open` mode). As an extractor it reads the headers alone, so a refused
/// request's body is not read.
#[derive(Debug)]
pub struct Authorized<S>(PhantomData<S>);

impl<S: Security> FromRequestParts<PetstoreState> for Authorized<S> {
    type Rejection = Error;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &PetstoreState,
    ) -> Result<Self, Self::Rejection> {
        if state.config.auth_mode == AuthMode::Open {
            return Ok(Authorized(PhantomData));
        }
        check::<S>(parts, state)
            .await
            .map_err(|error| with_challenges::<S>(error, parts))?;
        Ok(Authorized(PhantomData))
    }
}

/// A 401 (any other error as it is) with a challenge for each scheme `S`
/// takes.
fn with_challenges<S: Security>(mut error: Error, parts: &Parts) -> Error {
    if error.code() != ErrorCode::Unauthorized {
        return error;
    }
    let mut challenges = Vec::new();
    if S::OAUTH.is_some() {
        challenges.push(format!("Bearer realm=\"{REALM}\""));
        // A browser would ask for a password in a dialog of its own.
        if !sent_by_a_script(&parts.headers) {
            challenges.push(format!("Basic realm=\"{REALM}\""));
        }
    }
    if S::API_KEY {
        challenges.push(format!(
            "ApiKey realm=\"{REALM}\", header=\"{API_KEY_HEADER}\""
        ));
    }
    for challenge in challenges {
        if let Ok(value) = HeaderValue::from_str(&challenge) {
            error = error.with_header(header::WWW_AUTHENTICATE, value);
        }
    }
    error
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

async fn check<S: Security>(parts: &Parts, state: &PetstoreState) -> Result<(), Error> {
    if let Some(query) = parts.uri.query() {
        let in_query = form_urlencoded::parse(query.as_bytes()).find(|(name, _)| {
            matches!(
                name.to_ascii_lowercase().as_str(),
                "api_key" | "apikey" | "access_token"
            )
        });
        if let Some((name, _)) = in_query {
            return Err(unauthorized(format!(
                "credentials are refused in the query string ({name}=...): send {}",
                accepted::<S>()
            )));
        }
    }
    let authorization = parts.headers.get(header::AUTHORIZATION);
    let api_key = parts.headers.get(API_KEY_HEADER);
    match (authorization, api_key) {
        (Some(value), _) if S::OAUTH.is_some() => {
            check_authorization::<S>(value, parts, state).await
        }
        (_, Some(value)) if S::API_KEY => check_api_key(value, state),
        (None, None) => Err(unauthorized(format!(
            "this operation needs {}",
            accepted::<S>()
        ))),
        _ => Err(unauthorized(format!(
            "this operation takes {}",
            accepted::<S>()
        ))),
    }
}

fn check_api_key(value: &HeaderValue, state: &PetstoreState) -> Result<(), Error> {
    let verdict = value
        .to_str()
        .map(|key| state.access.keys.verify(key.trim(), Service::Petstore))
        .unwrap_or(Verdict::Unknown);
    match verdict {
        Verdict::Valid { .. } => Ok(()),
        Verdict::NoLongerValid => Err(unauthorized("the api_key is revoked or expired")),
        Verdict::Unknown => Err(unauthorized("the api_key is not valid")),
    }
}

async fn check_authorization<S: Security>(
    value: &HeaderValue,
    parts: &Parts,
    state: &PetstoreState,
) -> Result<(), Error> {
    let Some((scheme, credentials)) = value.to_str().ok().and_then(|v| v.split_once(' ')) else {
        return Err(unauthorized(
            "the Authorization header must be Bearer <token> or Basic <credentials>",
        ));
    };
    let credentials = credentials.trim();
    if scheme.eq_ignore_ascii_case("bearer") {
        let now = Utc::now().timestamp();
        let session = db::users::session(&state.db, &secret::sha256_hex(credentials), now).await?;
        let Some(session) = session else {
            return Err(unauthorized("the bearer token is not valid or has expired"));
        };
        let held: Vec<PetScope> = match &session.scopes {
            None => PetScope::ALL.to_vec(),
            Some(text) => text.split(' ').filter_map(PetScope::parse).collect(),
        };
        let needed = S::OAUTH.unwrap_or_default();
        if let Some(missing) = needed.iter().find(|scope| !held.contains(scope)) {
            return Err(Error::new(
                ErrorCode::Forbidden,
                format!("the token lacks the scope {}", missing.as_str()),
            )
            .with_detail("required_scope", missing.as_str()));
        }
        return Ok(());
    }
    if scheme.eq_ignore_ascii_case("basic") {
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(credentials)
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok());
        let Some((username, password)) = decoded.as_deref().and_then(|d| d.split_once(':')) else {
            return Err(unauthorized("the Basic credentials are malformed"));
        };
        let address = client_address(&parts.extensions);
        return match check_password(state, username, password, address).await? {
            Some(_) => Ok(()),
            None => Err(unauthorized("invalid username/password supplied")),
        };
    }
    Err(unauthorized(
        "the Authorization header must be Bearer <token> or Basic <credentials>",
    ))
}

/// The id of the user whose name and password these are, or none. Failures
/// are limited per username and per client address (429 past the limit),
/// and an unknown user costs as much as a wrong password.
pub async fn check_password(
    state: &PetstoreState,
    username: &str,
    password: &str,
    address: Option<std::net::IpAddr>,
) -> Result<Option<i64>, Error> {
    let callers = vec![
        format!("user:{username}"),
        format!(
            "address:{}",
            address.map_or_else(String::new, |a| a.to_string())
        ),
    ];
    let attempt = state
        .failed_logins
        .attempt(
            callers,
            state.config.failed_logins_per_minute,
            Utc::now().timestamp(),
        )
        .await
        .map_err(|retry_after| {
            Error::new(
                ErrorCode::RateLimited,
                format!("too many failed logins; retry in {retry_after} s"),
            )
            .with_retry_after(retry_after)
        })?;
    let stored = db::users::get(&state.db, username).await?;
    let (user_id, hash) = match stored {
        Some(stored) => (Some(stored.id), stored.password_hash),
        None => (None, None),
    };
    match (
        state.hasher.verify(password.to_owned(), hash).await?,
        user_id,
    ) {
        (true, Some(id)) => {
            attempt.succeeded().await;
            Ok(Some(id))
        }
        _ => {
            attempt.failed();
            Ok(None)
        }
    }
}

/// A session for `user_id` (a `loginUser` login, or a token of the
/// implicit flow with `scopes`): the token, given once, and when it ends.
pub async fn start_session(
    state: &PetstoreState,
    user_id: i64,
    scopes: Option<&str>,
) -> Result<(String, chrono::DateTime<Utc>), Error> {
    let token = secret::token::<32>();
    let ttl = chrono::Duration::seconds(
        i64::try_from(state.config.session_ttl_secs).unwrap_or(i64::MAX / 2),
    );
    let now = Utc::now();
    let expires = now + ttl;
    db::users::create_session(
        &state.db,
        &db::users::NewSession {
            token_hash: &secret::sha256_hex(&token),
            user_id,
            expires_at: expires.timestamp(),
            scopes,
        },
        now.timestamp(),
    )
    .await?;
    Ok((token, expires))
}
