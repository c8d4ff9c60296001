//! The console's sessions, as a request's cookie names them.

use crate::core::clock::now_ms;
use crate::core::failure::Failure;
use crate::core::secret;
use crate::portfolio::db;
use crate::storage::Database;

/// A session in force, as a request's cookie names it.
#[derive(Debug, Clone)]
pub(crate) struct Session {
    /// What every form of the session carries back.
    pub(crate) csrf_token: String,
    /// `operator` (a printed link) or `client:<id>`.
    pub(crate) signed_in_as: String,
    /// The SHA-256 of its token, to end it.
    pub(crate) token_hash: String,
}

/// The session of `token`, if it is in force.
pub(crate) async fn session(db: &Database, token: &str) -> Result<Option<Session>, Failure> {
    if token.is_empty() || token.len() > 100 {
        return Ok(None);
    }
    let token_hash = secret::sha256_hex(token);
    Ok(db::console::session(db, &token_hash, now_ms())
        .await?
        .map(|row| Session {
            csrf_token: row.csrf_token,
            signed_in_as: row.signed_in_as,
            token_hash,
        }))
}
