//! OAuth access tokens: a registered client gets one by the client
//! credentials grant (RFC 6749 section 4.4) and revokes its own (RFC 7009).
//! The handlers (`portfolio/oauth.rs`) read OAuth's form and the client's
//! credentials and write OAuth's answers; what is checked, counted and
//! stored is here. A refusal is OAuth's own ([`OAuthError`]) or, for what
//! OAuth does not define (a rate limit, the database), the service's
//! [`Failure`].

use std::net::IpAddr;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::access::Access;
use crate::access::db::{self as access_db, StoredClient};
use crate::access::tokens::{self, TokenVerdict};
use crate::config::{OAuthConfig, Scope};
use crate::core::failure::Failure;
use crate::limits::Limiter;
use crate::storage::{Database, StoreError};
use crate::telemetry::metrics::{self, AuthFailure, Limit};

/// The longest client id and secret worth comparing.
const MAX_CLIENT_ID_CHARS: usize = 100;
const MAX_SECRET_CHARS: usize = 200;

/// The error codes of RFC 6749 section 5.2 and RFC 7009 section 2.2.1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum OAuthErrorCode {
    InvalidRequest,
    InvalidClient,
    InvalidGrant,
    UnauthorizedClient,
    UnsupportedGrantType,
    InvalidScope,
    UnsupportedTokenType,
}

/// An error of the token and revocation endpoints, in OAuth's format.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub(crate) struct OAuthError {
    pub(crate) error: OAuthErrorCode,
    /// What went wrong, for the developer.
    pub(crate) error_description: String,
}

impl OAuthError {
    pub(crate) fn new(error: OAuthErrorCode, description: impl Into<String>) -> Self {
        OAuthError {
            error,
            error_description: description.into(),
        }
    }

    pub(crate) fn invalid_request(description: impl Into<String>) -> Self {
        Self::new(OAuthErrorCode::InvalidRequest, description)
    }

    pub(crate) fn invalid_client(description: impl Into<String>) -> Self {
        Self::new(OAuthErrorCode::InvalidClient, description)
    }
}

/// Why a token or revocation request failed: in OAuth's terms, or (a rate
/// limit, the database) in the portfolio's.
#[derive(Debug)]
pub(crate) enum Refusal {
    OAuth(OAuthError),
    Service(Failure),
}

impl From<OAuthError> for Refusal {
    fn from(error: OAuthError) -> Self {
        Refusal::OAuth(error)
    }
}

impl From<Failure> for Refusal {
    fn from(failure: Failure) -> Self {
        Refusal::Service(failure)
    }
}

impl From<StoreError> for Refusal {
    fn from(error: StoreError) -> Self {
        Refusal::Service(error.into())
    }
}

/// A token issued (RFC 6749 section 5.1).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub(crate) struct TokenResponse {
    /// Send it as `Authorization: Bearer <access_token>`.
    pub(crate) access_token: String,
    /// Always `Bearer`.
    pub(crate) token_type: String,
    /// Seconds until it expires.
    pub(crate) expires_in: u64,
    /// The scopes it carries, space-separated.
    pub(crate) scope: String,
}

/// The client a request says it is: its id and secret, or why they could
/// not be read (checked after the request's own fields, so that a request
/// wrong in both learns of its fields first), and where it came from.
#[derive(Debug)]
pub(crate) struct PresentedClient {
    pub(crate) credentials: Result<(String, String), OAuthError>,
    pub(crate) address: Option<IpAddr>,
}

/// What the token endpoints work with: the server's alone (the CLI issues
/// no tokens).
#[derive(Debug, Clone, Copy)]
pub(crate) struct TokenService<'a> {
    pub(crate) db: &'a Database,
    /// The token cache, told of a token at once.
    pub(crate) access: &'a Access,
    /// Counts failed client authentications.
    pub(crate) failures: &'a Limiter,
    /// A token's lifetime, and how many failures the limiter allows.
    pub(crate) config: OAuthConfig,
}

/// Issues a token by the client credentials grant, with the scopes asked
/// for (space-separated; none: all of the client's).
pub(crate) async fn issue(
    service: TokenService<'_>,
    grant_type: Option<&str>,
    scope: Option<&str>,
    client: PresentedClient,
) -> Result<TokenResponse, Refusal> {
    match grant_type {
        None => return Err(OAuthError::invalid_request("grant_type is required").into()),
        Some("client_credentials") => {}
        Some(other) => {
            return Err(OAuthError::new(
                OAuthErrorCode::UnsupportedGrantType,
                format!("the grant type {other:?} is not supported; use client_credentials"),
            )
            .into());
        }
    }
    let client = authenticate(service, client).await?;
    let scopes = requested_scopes(&client, scope)?;
    let ttl_secs = service.config.token_ttl_secs.max(1);
    let issued = tokens::mint(
        &client.client.client_id,
        scopes,
        i64::try_from(ttl_secs.saturating_mul(1000)).unwrap_or(i64::MAX),
    );
    access_db::insert_token(service.db, &issued.stored).await?;
    service.access.tokens.remember(&issued.stored);
    Ok(TokenResponse {
        access_token: issued.token,
        token_type: "Bearer".to_owned(),
        expires_in: ttl_secs,
        scope: Scope::join(&issued.stored.scopes),
    })
}

/// Revokes a token of the client's. A token unknown, expired or revoked
/// already is no error (RFC 7009 section 2.2); another client's is.
pub(crate) async fn revoke(
    service: TokenService<'_>,
    token: Option<&str>,
    client: PresentedClient,
) -> Result<(), Refusal> {
    let Some(token) = token else {
        return Err(OAuthError::invalid_request("token is required").into());
    };
    let client = authenticate(service, client).await?;
    match service.access.tokens.verify(service.db, token).await? {
        TokenVerdict::Valid { client_id, id, .. } => {
            if client_id != client.client.client_id {
                return Err(OAuthError::new(
                    OAuthErrorCode::UnauthorizedClient,
                    "the token was issued to another client",
                )
                .into());
            }
            service.access.revoke_token(service.db, &id).await?;
        }
        TokenVerdict::NoLongerValid | TokenVerdict::Unknown => {}
    }
    Ok(())
}

/// The registered client the request authenticates as. Failures are
/// limited per client id and address, and (higher) per client id and per
/// address ([`Limiter::failure_callers`]); past a limit the answer is 429
/// whatever the credentials.
pub(crate) async fn authenticate(
    service: TokenService<'_>,
    client: PresentedClient,
) -> Result<StoredClient, Refusal> {
    let (client_id, secret) = client.credentials?;
    let callers = Limiter::failure_callers(
        &format!("client:{client_id}"),
        client.address,
        service.config.failed_client_auth_per_minute,
    );
    let now = crate::core::clock::now().timestamp();
    let _turn = service.failures.turn(&callers[0].0).await;
    service
        .failures
        .refuse_after_failures(&callers, now)
        .await
        .map_err(|retry_after| {
            metrics::rate_limited(Limit::ClientAuthenticationFailures);
            Failure::Busy {
                message: format!(
                    "too many failed client authentications; retry in {retry_after} s"
                )
                .into(),
                per_caller: true,
                retry_after,
            }
        })?;
    let stored = if client_id.chars().count() <= MAX_CLIENT_ID_CHARS
        && secret.chars().count() <= MAX_SECRET_CHARS
    {
        access_db::get_client(service.db, &client_id).await?
    } else {
        None
    };
    // The same answer, after the same work, whether the client is unknown,
    // revoked, or the secret wrong: nothing to learn about which ids exist.
    if tokens::client_secret_matches(stored.as_ref(), &secret)
        && let Some(stored) = stored
    {
        return Ok(stored);
    }
    metrics::authentication_failed("portfolio", AuthFailure::ClientCredentials);
    service.failures.count_failure(&callers, now).await;
    Err(OAuthError::invalid_client("client authentication failed").into())
}

/// The scopes a token request asks for (space-separated), each one the
/// client may have; none asked: all of the client's.
fn requested_scopes(client: &StoredClient, scope: Option<&str>) -> Result<Vec<Scope>, OAuthError> {
    let invalid = |description: String| OAuthError::new(OAuthErrorCode::InvalidScope, description);
    let mut scopes = Vec::new();
    for name in scope
        .unwrap_or_default()
        .split(' ')
        .filter(|name| !name.is_empty())
    {
        let scope: Scope = name
            .parse()
            .map_err(|_| invalid(format!("unknown scope {name:?}")))?;
        if !scope.granted_by(&client.client.scopes) {
            return Err(invalid(format!(
                "the client may not have the scope {scope}"
            )));
        }
        if !scopes.contains(&scope) {
            scopes.push(scope);
        }
    }
    if scopes.is_empty() {
        return Ok(client.client.scopes.clone());
    }
    Ok(scopes)
}
