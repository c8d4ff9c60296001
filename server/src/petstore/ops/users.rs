//! Users: create one or a list (all or none), replace, delete. A caller
//! changes only their own account, unless it holds an admin key; a caller
//! who may not learns nothing of whether the user exists.

use super::Context;
use crate::core::failure::{Failure, OnConflict as _};
use crate::petstore::db;
use crate::petstore::model::{Principal, StoredUser, User, check_password, requested_id};

fn not_found(username: &str) -> Failure {
    Failure::not_found(format!("user {username:?} not found"))
}

fn username_taken(user: &User) -> Failure {
    Failure::conflict(format!("the username {:?} is taken", user.username))
}

/// The hash of a password, if one was given (and it keeps the auth mode's
/// rule).
async fn hash_if_given(
    ctx: Context<'_>,
    password: Option<&str>,
) -> Result<Option<String>, Failure> {
    match password {
        Some(given) => {
            check_password(ctx.config.auth_mode, given)?;
            Ok(Some(ctx.hasher.hash(given.to_owned()).await?))
        }
        None => Ok(None),
    }
}

/// Creates users, all or none (the first conflict rolls back the rest);
/// the last as stored, without its password.
pub(crate) async fn create(ctx: Context<'_>, users: Vec<User>) -> Result<User, Failure> {
    // Every password is checked before any is hashed.
    for password in users.iter().filter_map(|user| user.password.as_deref()) {
        check_password(ctx.config.auth_mode, password)?;
    }
    let mut hashes = Vec::with_capacity(users.len());
    for user in &users {
        hashes.push(hash_if_given(ctx, user.password.as_deref()).await?);
    }
    let mut tx = ctx.db.begin_write().await?;
    tx.changes_nothing_cached();
    let mut last = None;
    for (user, hash) in users.into_iter().zip(hashes) {
        let id = db::users::insert(tx.conn(), requested_id(user.id), &user, hash.as_deref())
            .await
            .on_conflict(|_| username_taken(&user))?;
        last = Some(user.public(id));
    }
    tx.commit().await?;
    last.ok_or_else(|| Failure::invalid("the list must hold at least one user"))
}

/// The user named `username`, if `caller` may change it: anyone in `open`
/// mode (no caller), else the user or an admin key.
async fn account_for(
    ctx: Context<'_>,
    caller: Option<&Principal>,
    username: &str,
) -> Result<StoredUser, Failure> {
    let stored = db::users::get(ctx.db, username).await?;
    match (caller, stored) {
        (None, Some(stored)) => Ok(stored),
        (Some(caller), Some(stored)) if caller.may_act_for(stored.id) => Ok(stored),
        (None | Some(Principal::Key { admin: true }), None) => Err(not_found(username)),
        (Some(_), _) => Err(Failure::Refused {
            message: format!(
                "only the user {username:?} (a session, a token or HTTP Basic of theirs) \
                 or an api_key with the scope admin may do this"
            ),
            scope: None,
        }),
    }
}

/// Replaces the user `username` (a new username included). Without a
/// password the old one stays; with one, the user's other sessions end
/// (`keep`, the one this request came with, if any, goes on).
pub(crate) async fn replace(
    ctx: Context<'_>,
    caller: Option<&Principal>,
    username: &str,
    user: User,
    keep: Option<&str>,
) -> Result<User, Failure> {
    let id = account_for(ctx, caller, username).await?.id;
    let new_hash = hash_if_given(ctx, user.password.as_deref()).await?;
    let mut tx = ctx.db.begin_write().await?;
    tx.changes_nothing_cached();
    let replaced = db::users::replace(tx.conn(), id, &user, new_hash.as_deref(), keep)
        .await
        .on_conflict(|_| Failure::conflict(format!("the username {:?} is taken", user.username)))?;
    if !replaced {
        return Err(not_found(username));
    }
    tx.commit().await?;
    // A new name or password: the old pair verifies no more.
    ctx.access.logins.forget_user(id);
    if new_hash.is_some() {
        ctx.access.sessions.forget_user(id, keep);
    }
    Ok(user.public(id))
}

/// Deletes the user `username`, and its sessions.
pub(crate) async fn delete(
    ctx: Context<'_>,
    caller: Option<&Principal>,
    username: &str,
) -> Result<(), Failure> {
    let id = account_for(ctx, caller, username).await?.id;
    let mut tx = ctx.db.begin_write().await?;
    tx.changes_nothing_cached();
    if !db::users::delete(tx.conn(), id).await? {
        return Err(not_found(username));
    }
    tx.commit().await?;
    ctx.access.logins.forget_user(id);
    ctx.access.sessions.forget_user(id, None);
    Ok(())
}
