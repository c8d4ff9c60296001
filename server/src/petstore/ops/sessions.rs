//! Signing in: a password checked (failures limited per username and per
//! client address, a pair verified lately remembered), and a session
//! started. `loginUser`, HTTP Basic and the implicit flow's sign-in page
//! all come here.

use chrono::Utc;

use super::Context;
use crate::access::model::CachedSession;
use crate::core::failure::Failure;
use crate::core::secret;
use crate::limits::Limiter;
use crate::petstore::db;
use crate::telemetry::metrics::{self, AuthFailure, Limit};

/// The id of the user whose name and password these are, or none.
///
/// A pair that verified within the last minute is recalled without a hash.
/// Otherwise attempts of one username from one address are checked one at
/// a time ([`Limiter::turn`]); failures are limited per username and client
/// address, and
/// (higher) per username and per address ([`Limiter::failure_callers`]):
/// past a limit the answer is 429 before the password is checked. Only
/// failures count. An unknown user costs as much as a wrong password.
pub(crate) async fn check_password(
    ctx: Context<'_>,
    username: &str,
    password: &str,
    address: Option<std::net::IpAddr>,
) -> Result<Option<i64>, Failure> {
    let logins = &ctx.access.logins;
    if let Some(id) = logins.recall(username, password) {
        return Ok(Some(id));
    }
    let callers = Limiter::failure_callers(
        &format!("user:{username}"),
        address,
        ctx.config.failed_logins_per_minute,
    );
    let _turn = ctx.failed_logins.turn(&callers[0].0).await;
    // The attempt before this one may have verified the same pair.
    if let Some(id) = logins.recall(username, password) {
        return Ok(Some(id));
    }
    let now = Utc::now().timestamp();
    ctx.failed_logins
        .refuse_after_failures(&callers, now)
        .await
        .map_err(|retry_after| {
            metrics::rate_limited(Limit::FailedLogins);
            Failure::Busy {
                message: format!("too many failed logins; retry in {retry_after} s").into(),
                per_caller: true,
                retry_after,
            }
        })?;
    let stored = db::users::get(ctx.db, username).await?;
    let (user_id, hash) = match stored {
        Some(stored) => (Some(stored.id), stored.password_hash),
        None => (None, None),
    };
    match (ctx.hasher.verify(password.to_owned(), hash).await?, user_id) {
        (true, Some(id)) => {
            logins.remember(username, password, id);
            Ok(Some(id))
        }
        _ => {
            metrics::authentication_failed("petstore", AuthFailure::WrongPassword);
            ctx.failed_logins.count_failure(&callers, now).await;
            Ok(None)
        }
    }
}

/// Ends the session whose token hashes to `token_hash`, here at once and on
/// the other servers within a second.
pub(crate) async fn end(ctx: Context<'_>, token_hash: &str) -> Result<(), Failure> {
    db::users::end_session(ctx.db, token_hash).await?;
    ctx.access.sessions.forget(token_hash);
    Ok(())
}

/// A session for `user_id` (a `loginUser` login, or a token of the
/// implicit flow with `scopes`): the token, given once, and when it ends.
pub(crate) async fn start(
    ctx: Context<'_>,
    user_id: i64,
    scopes: Option<&str>,
) -> Result<(String, chrono::DateTime<Utc>), Failure> {
    let token = secret::token::<32>();
    let ttl = chrono::Duration::seconds(
        i64::try_from(ctx.config.session_ttl_secs).unwrap_or(i64::MAX / 2),
    );
    let now = Utc::now();
    let expires = now + ttl;
    let token_hash = secret::sha256_hex(&token);
    db::users::create_session(
        ctx.db,
        &db::users::NewSession {
            token_hash: &token_hash,
            user_id,
            expires_at: expires.timestamp(),
            scopes,
        },
        now.timestamp(),
    )
    .await?;
    ctx.access.sessions.remember(
        token_hash,
        CachedSession {
            user_id,
            scopes: scopes.map(str::to_owned),
            expires_at: expires.timestamp(),
        },
    );
    Ok((token, expires))
}
