//! The portfolio's access levels, each an extractor naming the
//! scope it needs:
//!
//! - public operations take nothing;
//! - [`Protected`] ones an API key (`X-API-Key`);
//! - [`Authenticated`] ones an API key or a bearer token
//!   (`Authorization: Bearer`, from `POST /api/oauth/token`);
//! - [`Private`] ones (the admin operations) a bearer token.
//!
//! A missing or bad credential is 401 with `WWW-Authenticate` (RFC 6750 for
//! bearer tokens) and `details.required_header`; a good one without the
//! scope 403 with `details.required_scope`. A credential in the query
//! string is refused, whatever else the request carries: it would end up
//! in logs and browser histories. Headers and the query are read by
//! [`crate::http::credentials`], as the pet store's are.
//!
//! What a request presents is checked once, by [`authenticate`], a step of
//! its own at the service's edge before the rate limit (which counts the
//! caller it found), and left in the request's extensions as [`Presented`]
//! and [`KeyName`]; the extractors read it there. They take the headers
//! alone, so a request without the right credential is refused before its
//! body is read.

use std::marker::PhantomData;
use std::sync::Arc;

use axum::extract::Request;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderName, Uri, header};

use crate::access::keys::Verdict;
use crate::access::tokens::TokenVerdict;
use crate::access::{Access, Service};
use crate::config::Scope;
use crate::http::challenges::{self, Challenge};
use crate::http::credentials::{self, Authorization, header_text};
use crate::http::error::{Error, ErrorCode};
use crate::portfolio::state::PortfolioState;
use crate::telemetry::metrics::{self, AuthFailure};

/// The header that carries an API key.
pub(crate) const API_KEY_HEADER: &str = "X-API-Key";

/// The headers that carry the portfolio's credentials: who a caller is,
/// for idempotency keys.
pub(crate) static CREDENTIAL_HEADERS: [HeaderName; 2] =
    [header::AUTHORIZATION, HeaderName::from_static("x-api-key")];

/// The realm of the portfolio's challenges.
const REALM: &str = "portfolio";

/// What a request carries, checked.
#[derive(Debug, Clone, Default)]
pub(crate) struct Presented {
    /// The `X-API-Key` header's key, checked.
    key: Option<Verdict>,
    /// The bearer token, checked (or why it could not be: the database).
    bearer: Option<Result<TokenVerdict, Error>>,
    /// An `Authorization` header that is not a bearer token.
    other_authorization: bool,
    /// The name of a query parameter that carries a credential.
    in_query: Option<String>,
}

impl Presented {
    /// Reads and checks the credentials of a request.
    pub(crate) async fn check(access: &Access, headers: &HeaderMap, uri: &Uri) -> Self {
        // A header that is there but not text (odd bytes) is a credential
        // that matches nothing, not a missing one.
        let key = header_text(headers, API_KEY_HEADER).map(|key| match key {
            Some(key) => access.keys.verify(key, Service::Portfolio),
            None => Verdict::Unknown,
        });
        let (bearer, other_authorization) =
            match header_text(headers, header::AUTHORIZATION.as_str()) {
                None => (None, false),
                Some(None) => (Some(Ok(TokenVerdict::Unknown)), false),
                Some(Some(_)) => match credentials::authorization(headers) {
                    Some(Authorization::Bearer(token)) => (
                        Some(access.verify_token(token).await.map_err(Error::from)),
                        false,
                    ),
                    _ => (None, true),
                },
            };
        let in_query = credentials::secret_in_query(uri);
        Presented {
            key,
            bearer,
            other_authorization,
            in_query,
        }
    }

    /// Whom to count the request against (rate limits, analytics): the name
    /// of a valid key, or `client:<id>` for a valid token.
    pub(crate) fn identity(&self) -> Option<String> {
        if let Some(Ok(TokenVerdict::Valid { client_id, .. })) = &self.bearer {
            return Some(format!("client:{client_id}"));
        }
        match &self.key {
            Some(Verdict::Valid { name, .. }) => Some(name.clone()),
            _ => None,
        }
    }
}

/// Whom a request counts as (rate limits, analytics): the name of its valid
/// key, or `client:<id>` for a valid token (`None`: anonymous), left in its
/// extensions by [`authenticate`].
#[derive(Debug, Clone)]
pub(crate) struct KeyName(pub(crate) Option<String>);

/// What the authentication step needs.
#[derive(Debug, Clone)]
pub(crate) struct Authentication {
    pub(crate) access: Arc<Access>,
}

/// The portfolio's authentication step: checks what `request` presents,
/// once, and leaves it ([`Presented`], [`KeyName`]) in its extensions for
/// the rate limit, the extractors and analytics. It refuses nothing: each
/// operation's extractor decides what it needs.
pub(crate) async fn authenticate(authentication: &Authentication, mut request: Request) -> Request {
    let presented =
        Presented::check(&authentication.access, request.headers(), request.uri()).await;
    let key_name = KeyName(presented.identity());
    request.extensions_mut().insert(presented);
    request.extensions_mut().insert(key_name);
    request
}

/// Which credentials an operation takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    /// An API key.
    Protected,
    /// An API key or a bearer token.
    Authenticated,
    /// A bearer token.
    Private,
}

impl Level {
    fn takes_keys(self) -> bool {
        self != Level::Private
    }

    fn takes_tokens(self) -> bool {
        self != Level::Protected
    }

    fn headers(self) -> &'static [&'static str] {
        match self {
            Level::Protected => &[API_KEY_HEADER],
            Level::Authenticated => &[API_KEY_HEADER, "Authorization"],
            Level::Private => &["Authorization"],
        }
    }

    /// 401: what is missing or wrong, with a challenge for each accepted
    /// credential (`bearer_error`: RFC 6750's `error` for the bearer one).
    fn unauthorized(self, message: impl Into<String>, bearer_error: Option<&str>) -> Error {
        let message = message.into();
        let headers = self.headers();
        let error = Error::new(ErrorCode::Unauthorized, message.clone())
            .with_detail("required_header", headers[0])
            .with_detail("accepted_headers", headers.to_vec());
        let mut challenges = Vec::new();
        if self.takes_keys() {
            challenges.push(Challenge::ApiKey {
                realm: REALM,
                header: API_KEY_HEADER,
            });
        }
        if self.takes_tokens() {
            challenges.push(Challenge::Bearer {
                realm: REALM,
                error: bearer_error,
                description: bearer_error.map(|_| message.as_str()),
                scope: None,
            });
        }
        // No Basic challenge here, so no request to tell a script by.
        challenges::challenge(error, &challenges, &HeaderMap::new())
    }

    /// The caller, if `presented` has a credential this level takes, in
    /// force, with `scope`.
    fn authorize(self, presented: &Presented, scope: Scope) -> Result<Caller, Error> {
        if let Some(name) = &presented.in_query {
            let instead = match self {
                Level::Protected => "send the API key in the X-API-Key header",
                Level::Authenticated => {
                    "send an API key in the X-API-Key header, or a token in Authorization: Bearer"
                }
                Level::Private => "send the token in Authorization: Bearer",
            };
            return Err(self.unauthorized(
                format!("credentials are refused in the query string ({name}=...): {instead}"),
                Some("invalid_request"),
            ));
        }
        let caller = match (&presented.bearer, &presented.key) {
            (Some(bearer), _) if self.takes_tokens() => token_caller(self, bearer.clone()?)?,
            (_, Some(key)) if self.takes_keys() => key_caller(self, key)?,
            _ => return Err(self.missing(presented)),
        };
        if !scope.granted_by(&caller.scopes) {
            let error = Error::new(
                ErrorCode::Forbidden,
                format!("the {} lacks the scope {scope}", caller.credential.what()),
            )
            .with_detail("required_scope", scope.as_str());
            return Err(match caller.credential {
                Credential::Bearer { .. } => challenges::challenge(
                    error,
                    &[Challenge::Bearer {
                        realm: REALM,
                        error: Some("insufficient_scope"),
                        description: None,
                        scope: Some(scope.as_str()),
                    }],
                    &HeaderMap::new(),
                ),
                Credential::ApiKey { .. } => error,
            });
        }
        Ok(caller)
    }

    /// 401 for a request without a credential this level takes.
    fn missing(self, presented: &Presented) -> Error {
        let message = match self {
            Level::Protected if presented.bearer.is_some() => {
                "this operation takes an API key in the X-API-Key header, not a bearer token"
            }
            Level::Protected => "this operation needs an API key in the X-API-Key header",
            Level::Authenticated => {
                "this operation needs an API key in the X-API-Key header or a bearer token \
                 (Authorization: Bearer)"
            }
            Level::Private if presented.key.is_some() => {
                "this operation takes a bearer token (Authorization: Bearer, from \
                 POST /api/oauth/token), not an API key"
            }
            Level::Private => {
                "this operation needs a bearer token (Authorization: Bearer, from \
                 POST /api/oauth/token)"
            }
        };
        let message = if presented.other_authorization && self.takes_tokens() {
            format!("{message}; the Authorization header must use the Bearer scheme")
        } else {
            message.to_owned()
        };
        self.unauthorized(message, None)
    }
}

fn key_caller(level: Level, verdict: &Verdict) -> Result<Caller, Error> {
    match verdict {
        Verdict::Valid { name, id, scopes } => Ok(Caller {
            name: name.clone(),
            scopes: scopes.clone(),
            credential: Credential::ApiKey { id: id.clone() },
        }),
        Verdict::NoLongerValid => {
            metrics::authentication_failed("portfolio", AuthFailure::RevokedApiKey);
            Err(level.unauthorized("the API key is revoked or expired", None))
        }
        Verdict::Unknown => {
            metrics::authentication_failed("portfolio", AuthFailure::UnknownApiKey);
            Err(level.unauthorized("the API key is not valid", None))
        }
    }
}

fn token_caller(level: Level, verdict: TokenVerdict) -> Result<Caller, Error> {
    match verdict {
        TokenVerdict::Valid {
            client_id,
            id,
            scopes,
        } => Ok(Caller {
            name: format!("client:{client_id}"),
            scopes,
            credential: Credential::Bearer {
                client_id,
                token_id: id,
            },
        }),
        TokenVerdict::NoLongerValid => {
            metrics::authentication_failed("portfolio", AuthFailure::InvalidToken);
            Err(level.unauthorized(
                "the bearer token is revoked or expired",
                Some("invalid_token"),
            ))
        }
        TokenVerdict::Unknown => {
            metrics::authentication_failed("portfolio", AuthFailure::InvalidToken);
            Err(level.unauthorized("the bearer token is not valid", Some("invalid_token")))
        }
    }
}

/// Who made a request, once their credential was checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Caller {
    /// The key's name, or `client:<id>`.
    pub(crate) name: String,
    /// What the credential may do.
    pub(crate) scopes: Vec<Scope>,
    pub(crate) credential: Credential,
}

/// The credential a caller used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Credential {
    /// An API key (no id: one from the configuration file).
    ApiKey { id: Option<String> },
    /// A bearer token of an OAuth client.
    Bearer { client_id: String, token_id: String },
}

impl Credential {
    fn what(&self) -> &'static str {
        match self {
            Credential::ApiKey { .. } => "API key",
            Credential::Bearer { .. } => "bearer token",
        }
    }
}

/// Documents what the levels do on every operation that asks for a
/// credential: its 401 carries `WWW-Authenticate`.
pub(crate) fn document(openapi: &mut utoipa::openapi::OpenApi) {
    use utoipa::openapi::RefOr;
    use utoipa::openapi::header::HeaderBuilder;
    use utoipa::openapi::schema::{ObjectBuilder, Type};
    for operation in crate::http::openapi_errors::operations_mut(openapi) {
        let secured = operation
            .security
            .as_ref()
            .is_some_and(|requirements| !requirements.is_empty());
        if !secured {
            continue;
        }
        if let Some(RefOr::T(response)) = operation.responses.responses.get_mut("401") {
            response.headers.insert(
                "WWW-Authenticate".to_owned(),
                RefOr::T(
                    HeaderBuilder::new()
                        .schema(Some(ObjectBuilder::new().schema_type(Type::String)))
                        .description(Some(
                            "A challenge for each credential the operation takes: \
                         `ApiKey realm=\"portfolio\", header=\"X-API-Key\"`, \
                         `Bearer realm=\"portfolio\"` (with RFC 6750's `error` when a \
                         token was refused).",
                        ))
                        .build(),
                ),
            );
        }
    }
}

/// What the request presented: from the extensions (the authentication
/// step checked it), or checked now.
async fn presented(parts: &Parts, state: &PortfolioState) -> Presented {
    match parts.extensions.get::<Presented>() {
        Some(presented) => presented.clone(),
        None => Presented::check(&state.access, &parts.headers, &parts.uri).await,
    }
}

macro_rules! access_level {
    ($(#[$doc:meta])* $name:ident, $level:expr) => {
        $(#[$doc])*
        #[derive(Debug)]
        #[allow(dead_code)] // Some handlers need the proof alone, not who called.
        pub(crate) struct $name<P>(pub(crate) Caller, pub(crate) PhantomData<P>);

        impl<P: Permission> FromRequestParts<PortfolioState> for $name<P> {
            type Rejection = Error;

            async fn from_request_parts(
                parts: &mut Parts,
                state: &PortfolioState,
            ) -> Result<Self, Self::Rejection> {
                let caller = $level.authorize(&presented(parts, state).await, P::SCOPE)?;
                Ok($name(caller, PhantomData))
            }
        }
    };
}

access_level!(
    /// The caller of a protected operation: an API key with the scope `P`
    /// names.
    Protected,
    Level::Protected
);
access_level!(
    /// The caller of an authenticated operation: an API key or a bearer
    /// token with the scope `P` names.
    Authenticated,
    Level::Authenticated
);
access_level!(
    /// The caller of a private operation: a bearer token with the scope `P`
    /// names.
    Private,
    Level::Private
);

/// Whether the request carries a credential in force with the scope
/// `admin` (an API key or a bearer token), for public answers that show the
/// operator more (readiness's details). Never a refusal: without one, or
/// with a bad one, it is `false`.
#[derive(Debug)]
pub(crate) struct AdminView(pub bool);

impl FromRequestParts<PortfolioState> for AdminView {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &PortfolioState,
    ) -> Result<Self, Self::Rejection> {
        let presented = presented(parts, state).await;
        Ok(AdminView(
            Level::Authenticated
                .authorize(&presented, Scope::Admin)
                .is_ok(),
        ))
    }
}

/// A scope as a type, for the extractors.
pub(crate) trait Permission: Send + Sync + 'static {
    const SCOPE: Scope;
}

macro_rules! permissions {
    ($($name:ident),* $(,)?) => {
        $(
            #[doc = concat!("Needs the scope `Scope::", stringify!($name), "`.")]
            #[derive(Debug)]
            pub(crate) struct $name;

            impl Permission for $name {
                const SCOPE: Scope = Scope::$name;
            }
        )*
    };
}

permissions!(
    ContextRead,
    ContactWrite,
    AnalyticsRead,
    SocialPublish,
    SubscribersNotify,
    ContentWrite,
    SubscribersRead,
    SubscribersWrite,
    KeysManage,
    Admin,
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::keys;
    use crate::access::tokens;
    use crate::config::ConfiguredApiKey;
    use axum::http::HeaderValue;

    async fn access() -> Access {
        Access::in_memory(&[
            ConfiguredApiKey {
                name: "reader".into(),
                key: "k-read".into(),
                scopes: vec![Scope::ContextRead],
            },
            ConfiguredApiKey {
                name: "root".into(),
                key: "k-admin".into(),
                scopes: vec![Scope::Admin],
            },
        ])
        .await
    }

    async fn check(access: &Access, headers: &[(&str, &str)], uri: &str) -> Presented {
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            map.insert(
                axum::http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_str(value).unwrap(),
            );
        }
        Presented::check(access, &map, &uri.parse().unwrap()).await
    }

    #[tokio::test]
    async fn keys_and_scopes_are_checked() {
        let access = access().await;
        let read = check(&access, &[("x-api-key", "k-read")], "/").await;
        let ok = Level::Protected.authorize(&read, Scope::ContextRead);
        assert_eq!(ok.ok().map(|c| c.name), Some("reader".to_owned()));
        let nothing = check(&access, &[], "/").await;
        let missing = Level::Protected
            .authorize(&nothing, Scope::ContextRead)
            .err();
        assert_eq!(
            missing.map(|e| e.details()["required_header"].clone()),
            Some("X-API-Key".into())
        );
        let reed = check(&access, &[("x-api-key", "k-reed")], "/").await;
        let wrong = Level::Protected.authorize(&reed, Scope::ContextRead).err();
        assert_eq!(wrong.map(|e| e.code()), Some(ErrorCode::Unauthorized));
        let scope = Level::Protected.authorize(&read, Scope::ContactWrite).err();
        assert_eq!(
            scope.map(|e| e.details()["required_scope"].clone()),
            Some("contact:write".into())
        );
        let admin = check(&access, &[("x-api-key", "k-admin")], "/").await;
        assert!(
            Level::Protected
                .authorize(&admin, Scope::ContactWrite)
                .is_ok(),
            "admin may do anything"
        );
        assert!(
            Level::Private.authorize(&admin, Scope::Admin).is_err(),
            "private operations take tokens only"
        );
    }

    #[tokio::test]
    async fn a_credential_in_the_query_is_refused() {
        let access = access().await;
        let presented = check(&access, &[("x-api-key", "k-read")], "/?API_KEY=k-read").await;
        let refused = Level::Protected
            .authorize(&presented, Scope::ContextRead)
            .err()
            .unwrap();
        assert_eq!(refused.code(), ErrorCode::Unauthorized);
        assert!(
            refused.message().contains("X-API-Key header"),
            "{}",
            refused.message()
        );
    }

    #[tokio::test]
    async fn a_key_revoked_here_stops_working_at_once() {
        let access = access().await;
        let issued = keys::issue(Service::Portfolio, "site", vec![Scope::ContactWrite], None);
        access.keys.remember(&issued.stored);
        let headers = [("x-api-key", issued.key.as_str())];
        let presented = check(&access, &headers, "/").await;
        assert!(
            Level::Protected
                .authorize(&presented, Scope::ContactWrite)
                .is_ok()
        );
        access.keys.forget(&issued.stored.key.id);
        let presented = check(&access, &headers, "/").await;
        let refused = Level::Protected
            .authorize(&presented, Scope::ContactWrite)
            .err();
        assert_eq!(
            refused.map(|e| e.message().to_owned()),
            Some("the API key is revoked or expired".to_owned())
        );
    }

    #[tokio::test]
    async fn bearer_tokens_answer_with_rfc_6750_challenges() {
        let access = access().await;
        let issued = tokens::mint("pc_1", vec![Scope::ContentWrite], 60_000);
        access.tokens.remember(&issued.stored);
        let bearer = format!("Bearer {}", issued.token);
        let presented = check(&access, &[("authorization", &bearer)], "/").await;
        let caller = Level::Private
            .authorize(&presented, Scope::ContentWrite)
            .unwrap();
        assert_eq!(caller.name, "client:pc_1");
        let refused = Level::Private
            .authorize(&presented, Scope::KeysManage)
            .err()
            .unwrap();
        assert_eq!(refused.code(), ErrorCode::Forbidden);
        let challenge = format!("{:?}", refused.headers());
        assert!(challenge.contains("insufficient_scope"), "{challenge}");
        let basic = check(&access, &[("authorization", "Basic eDp5")], "/").await;
        let refused = Level::Private
            .authorize(&basic, Scope::Admin)
            .err()
            .unwrap();
        assert!(
            refused.message().contains("Bearer scheme"),
            "{}",
            refused.message()
        );
        let presented = check(&access, &[("authorization", "Bearer pt_nope")], "/").await;
        let refused = Level::Authenticated
            .authorize(&presented, Scope::SocialPublish)
            .err()
            .unwrap();
        let challenge = format!("{:?}", refused.headers());
        assert!(
            challenge.contains("invalid_token") && challenge.contains("ApiKey"),
            "{challenge}"
        );
    }
}
