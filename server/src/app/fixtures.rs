//! What the end-to-end tests set up in a server's database directly, as
//! the operator would, rather than through the API: an OAuth client (the
//! CLI's `clients create`), and a token that has expired (which the API
//! cannot make).

use crate::access::ops::{self, Actor, Context};
use crate::config::Scope;
use crate::storage::Database;

/// Registers an OAuth client with `scopes` in the database at
/// `database_url`: its id and secret.
pub async fn register_oauth_client(
    database_url: &str,
    scopes: &[Scope],
) -> anyhow::Result<(String, String)> {
    let db = Database::connect(database_url).await?;
    let registered = register_in(&db, "test client", scopes).await;
    db.close().await;
    registered
}

/// A running server's database ([`Server::operator`](crate::Server::operator)),
/// for what the operator sets up beside the API.
#[derive(Clone)]
pub struct Operator {
    db: Database,
}

impl std::fmt::Debug for Operator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Operator").finish_non_exhaustive()
    }
}

impl Operator {
    pub(super) fn of(db: Database) -> Self {
        Operator { db }
    }

    /// Registers an OAuth client named `name` with `scopes`, as the CLI's
    /// `clients create` does: its id and secret.
    pub async fn register_oauth_client(
        &self,
        name: &str,
        scopes: &[Scope],
    ) -> anyhow::Result<(String, String)> {
        register_in(&self.db, name, scopes).await
    }

    /// A token of a link that signs in to the owner's console once, as
    /// `petstore-portfolio console-link` makes it.
    pub async fn console_sign_in_token(&self) -> anyhow::Result<String> {
        Ok(crate::portfolio::ops::console::issue_sign_in_link(&self.db).await?)
    }
}

async fn register_in(
    db: &Database,
    name: &str,
    scopes: &[Scope],
) -> anyhow::Result<(String, String)> {
    let issued =
        ops::oauth_clients::register(Context::offline(db), Actor::Operator, name, scopes.to_vec())
            .await?;
    Ok((issued.client.client_id, issued.client_secret))
}

/// Stores a bearer token of `client_id` with `scopes` that expired a
/// second ago: the token.
pub async fn insert_expired_token(
    database_url: &str,
    client_id: &str,
    scopes: &[Scope],
) -> anyhow::Result<String> {
    let expired = crate::access::tokens::mint(client_id, scopes.to_vec(), -1000);
    let db = Database::connect(database_url).await?;
    let inserted = crate::access::db::insert_token(&db, &expired.stored).await;
    db.close().await;
    inserted?;
    Ok(expired.token)
}
