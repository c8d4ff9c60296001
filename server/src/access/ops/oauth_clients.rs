//! OAuth clients: register one (its secret is shown once), revoke one (its
//! tokens stop working at once).

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{Actor, Context};
use crate::access::db as access_db;
use crate::access::keys::name_problem;
use crate::access::tokens::{self, OAuthClient};
use crate::config::Scope;
use crate::core::failure::Failure;

/// A client just registered, with its secret, shown this once.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub(crate) struct IssuedOAuthClient {
    pub(crate) client: OAuthClient,
    /// Give it, with the client id, to `POST /api/oauth/token`; it is not kept.
    pub(crate) client_secret: String,
}

/// Registers a client with a name and at least one scope.
pub(crate) async fn register(
    ctx: Context<'_>,
    by: Actor<'_>,
    name: &str,
    scopes: Vec<Scope>,
) -> Result<IssuedOAuthClient, Failure> {
    by.may_grant(&scopes)?;
    let mut problems = Vec::new();
    if let Some(problem) = name_problem(name) {
        problems.push(("name".to_owned(), problem));
    }
    if scopes.is_empty() {
        problems.push(("scopes".to_owned(), "give at least one scope".to_owned()));
    }
    if !problems.is_empty() {
        return Err(Failure::invalid_fields(problems));
    }
    let mut scopes = scopes;
    scopes.sort();
    scopes.dedup();
    let issued = tokens::register(name.trim(), scopes);
    access_db::create_client(ctx.db, &issued.stored).await?;
    Ok(IssuedOAuthClient {
        client: issued.stored.client,
        client_secret: issued.secret,
    })
}

/// Revokes client `client_id` and its tokens; the client as it is now.
pub(crate) async fn revoke(
    ctx: Context<'_>,
    by: Actor<'_>,
    client_id: &str,
) -> Result<OAuthClient, Failure> {
    let missing = || Failure::not_found(format!("no client {client_id:?}"));
    let stored = access_db::get_client(ctx.db, client_id)
        .await?
        .ok_or_else(missing)?;
    by.may_revoke(&stored.client.scopes)?;
    if !access_db::revoke_client(ctx.db, client_id, crate::core::clock::now()).await? {
        return Err(Failure::conflict(format!(
            "the client {client_id:?} was revoked already"
        )));
    }
    if let Some(access) = ctx.access {
        access.tokens.forget_client(client_id);
    }
    let client = access_db::get_client(ctx.db, client_id)
        .await?
        .ok_or_else(missing)?;
    Ok(client.client)
}

/// Gives client `client_id` a new secret, shown this once: the old one stops
/// working at once (the tokens it got work until they expire). The caller
/// must hold every scope of the client, as to revoke it.
pub(crate) async fn rotate_secret(
    ctx: Context<'_>,
    by: Actor<'_>,
    client_id: &str,
) -> Result<IssuedOAuthClient, Failure> {
    let missing = || Failure::not_found(format!("no client {client_id:?} in force"));
    let stored = access_db::get_client(ctx.db, client_id)
        .await?
        .filter(|stored| stored.client.revoked_at.is_none())
        .ok_or_else(missing)?;
    by.may_revoke(&stored.client.scopes)?;
    let secret = crate::core::secret::token::<32>();
    if !access_db::replace_client_secret(
        ctx.db,
        client_id,
        &crate::core::secret::sha256_hex(&secret),
    )
    .await?
    {
        return Err(missing());
    }
    Ok(IssuedOAuthClient {
        client: stored.client,
        client_secret: secret,
    })
}
