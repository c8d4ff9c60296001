//! API keys: create, rotate (the old key keeps working for a while),
//! revoke. A caller with a token hands out only the scopes it holds
//! ([`Actor`]); the operator at the CLI may do anything.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{Actor, Context};
use crate::access::db as access_db;
use crate::access::keys::{self, ApiKey, IssuedKey, NewKey};
use crate::core::failure::Failure;

/// How long a rotated key keeps working unless asked (hours), and the most.
pub(crate) const DEFAULT_OLD_KEY_HOURS: u32 = 24;
pub(crate) const MAX_OLD_KEY_HOURS: u32 = 720;

/// A key just made, shown this once.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub(crate) struct IssuedApiKey {
    pub(crate) api_key: ApiKey,
    /// The key itself (`pk_<id>_<secret>`); it is not kept.
    pub(crate) key: String,
}

impl From<IssuedKey> for IssuedApiKey {
    fn from(issued: IssuedKey) -> Self {
        IssuedApiKey {
            api_key: issued.stored.key,
            key: issued.key,
        }
    }
}

/// A rotation: the replacement, shown once, and until when the old key works.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub(crate) struct RotatedApiKey {
    pub(crate) replaced: String,
    pub(crate) old_key_valid_until: chrono::DateTime<chrono::Utc>,
    pub(crate) new: IssuedApiKey,
}

/// Makes and stores a key.
pub(crate) async fn create(
    ctx: Context<'_>,
    by: Actor<'_>,
    new: &NewKey,
) -> Result<IssuedKey, Failure> {
    let problems = new.problems();
    if !problems.is_empty() {
        return Err(Failure::invalid_fields(problems));
    }
    by.may_grant(&new.scopes)?;
    let issued = keys::create(ctx.db, new).await?;
    if let Some(access) = ctx.access {
        access.keys.remember(&issued.stored);
    }
    Ok(issued)
}

/// Replaces key `id` with a new one of the same name, scopes and service;
/// the old one keeps working `old_key_valid_for_hours`.
pub(crate) async fn rotate(
    ctx: Context<'_>,
    by: Actor<'_>,
    id: &str,
    old_key_valid_for_hours: u32,
) -> Result<RotatedApiKey, Failure> {
    if old_key_valid_for_hours > MAX_OLD_KEY_HOURS {
        return Err(Failure::malformed(format!(
            "old_key_valid_for_hours is at most {MAX_OLD_KEY_HOURS}"
        )));
    }
    let not_in_force = || Failure::not_found(format!("no key {id:?} in force"));
    let old = access_db::get_key(ctx.db, id)
        .await?
        .ok_or_else(not_in_force)?;
    by.may_grant(&old.key.scopes)?;
    let old_valid_until =
        crate::core::clock::now() + chrono::Duration::hours(i64::from(old_key_valid_for_hours));
    let issued = keys::rotate(ctx.db, id, old_valid_until)
        .await?
        .ok_or_else(|| {
            Failure::not_found(format!(
                "no key {id:?} in force (or it was rotated already)"
            ))
        })?;
    if let Some(access) = ctx.access {
        access.keys.rotated(id, &issued.stored, old_valid_until);
    }
    Ok(RotatedApiKey {
        replaced: id.to_owned(),
        old_key_valid_until: old_valid_until,
        new: issued.into(),
    })
}

/// Revokes key `id`, which stops working at once (within a second on the
/// other servers); the key as it is now.
pub(crate) async fn revoke(ctx: Context<'_>, by: Actor<'_>, id: &str) -> Result<ApiKey, Failure> {
    let missing = || Failure::not_found(format!("no key {id:?}"));
    let stored = access_db::get_key(ctx.db, id).await?.ok_or_else(missing)?;
    by.may_revoke(&stored.key.scopes)?;
    if !access_db::revoke_key(ctx.db, id, crate::core::clock::now()).await? {
        return Err(Failure::conflict(format!(
            "the key {id:?} was revoked already"
        )));
    }
    if let Some(access) = ctx.access {
        access.keys.forget(id);
    }
    let key = access_db::get_key(ctx.db, id).await?.ok_or_else(missing)?;
    Ok(key.key)
}
