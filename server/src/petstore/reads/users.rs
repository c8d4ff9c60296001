//! Users: one as a caller may see them, and the session a bearer token
//! names, from the sessions' cache or looked up once.

use chrono::Utc;

use crate::access::sessions::{CachedSession, Known, SessionCache};
use crate::config::AuthMode;
use crate::core::failure::Failure;
use crate::petstore::db;
use crate::petstore::model::{Principal, User};
use crate::storage::{Database, StoreError};

/// User `username` as `viewer` may see them: whole in auth mode `open`, or
/// to the user themselves (or an admin key); otherwise without the names,
/// email and phone.
pub(crate) async fn user(
    db: &Database,
    mode: AuthMode,
    username: &str,
    viewer: Option<&Principal>,
) -> Result<User, Failure> {
    let stored = db::users::get(db, username)
        .await?
        .ok_or_else(|| Failure::not_found(format!("user {username:?} not found")))?;
    let shown_whole =
        mode == AuthMode::Open || viewer.is_some_and(|viewer| viewer.may_act_for(stored.id));
    Ok(if shown_whole {
        stored.user
    } else {
        stored.user.without_private_fields()
    })
}

/// Whether `token` has the shape of the tokens [`ops::sessions::start`](crate::petstore::ops::sessions::start) makes (32
/// random bytes in unpadded URL-safe base64): others are refused without a
/// lookup.
fn looks_like_a_session_token(token: &str) -> bool {
    token.len() == 43
        && token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// The session `token` (whose SHA-256 is `token_hash`) names, if it is in
/// force: from the cache, or looked up once.
pub(crate) async fn session(
    db: &Database,
    sessions: &SessionCache,
    token: &str,
    token_hash: &str,
) -> Result<Option<CachedSession>, StoreError> {
    if !looks_like_a_session_token(token) {
        return Ok(None);
    }
    let now = Utc::now().timestamp();
    match sessions.get(token_hash) {
        Known::Session(session) => return Ok((session.expires_at >= now).then_some(session)),
        Known::Unknown => return Ok(None),
        Known::NotSeen => {}
    }
    let generation = sessions.generation();
    let found = db::users::session(db, token_hash, now).await?;
    sessions.remember_found(generation, token_hash.to_owned(), found.clone());
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::secret;

    #[test]
    fn session_tokens_have_one_shape() {
        assert!(looks_like_a_session_token(&secret::token::<32>()));
        assert!(!looks_like_a_session_token("short"));
        assert!(!looks_like_a_session_token(&"a".repeat(42)));
        assert!(!looks_like_a_session_token(&format!("{}=", "a".repeat(42))));
    }
}
