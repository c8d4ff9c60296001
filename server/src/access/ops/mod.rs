//! The credentials' operations, for both services and the operator's CLI:
//! API keys made, rotated and revoked, OAuth clients registered and
//! revoked, bearer tokens issued and revoked, and the lists of keys and
//! clients. Each owns its transaction and fails with a
//! [`Failure`](crate::core::failure::Failure).

pub(crate) mod api_keys;
pub(crate) mod oauth_clients;
pub(crate) mod tokens;

use crate::access::Access;
use crate::access::db as access_db;
use crate::access::keys::ApiKey;
use crate::access::tokens::OAuthClient;
use crate::config::Scope;
use crate::core::failure::Failure;
use crate::storage::Database;

/// What the credentials' operations work on.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Context<'a> {
    pub(crate) db: &'a Database,
    /// The server's caches of keys and tokens, told of a change at once
    /// (none at the CLI: a running server reloads within a second).
    pub(crate) access: Option<&'a Access>,
}

impl<'a> Context<'a> {
    /// The CLI's: the database alone.
    pub(crate) fn offline(db: &'a Database) -> Self {
        Context { db, access: None }
    }
}

/// Every API key, or those of one service.
pub(crate) async fn list_keys(
    ctx: Context<'_>,
    service: Option<crate::access::Service>,
) -> Result<Vec<ApiKey>, Failure> {
    let stored = access_db::list_keys(ctx.db, service).await?;
    Ok(stored.into_iter().map(|stored| stored.key).collect())
}

/// Every OAuth client.
pub(crate) async fn list_clients(ctx: Context<'_>) -> Result<Vec<OAuthClient>, Failure> {
    let stored = access_db::list_clients(ctx.db).await?;
    Ok(stored.into_iter().map(|stored| stored.client).collect())
}

/// Who asks for a change to credentials.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Actor<'a> {
    /// The operator at the CLI, who may do anything.
    Operator,
    /// A caller with a token holding these scopes: it hands out, and
    /// revokes, only what it holds itself, so that managing keys is not a
    /// way to more power (`keys:manage` cannot make an `admin` key).
    Holding(&'a [Scope]),
}

impl Actor<'_> {
    /// Refused unless the actor holds every one of `scopes`, to hand them on.
    pub(crate) fn may_grant(self, scopes: &[Scope]) -> Result<(), Failure> {
        self.holds_all(scopes, "hand out the scope")
    }

    /// Refused unless the actor holds every scope of the credential it
    /// would revoke: `keys:manage` alone may not end an `admin` key.
    pub(crate) fn may_revoke(self, scopes: &[Scope]) -> Result<(), Failure> {
        self.holds_all(scopes, "revoke a credential with the scope")
    }

    fn holds_all(self, scopes: &[Scope], to: &str) -> Result<(), Failure> {
        let Actor::Holding(held) = self else {
            return Ok(());
        };
        match scopes.iter().find(|scope| !scope.granted_by(held)) {
            None => Ok(()),
            Some(scope) => Err(Failure::Refused {
                message: format!("you cannot {to} {scope}: your token does not hold it"),
                scope: Some(scope.as_str()),
            }),
        }
    }
}
