//! API keys: those the operator lists in the configuration (the
//! portfolio's), and those made by the CLI or the admin API for either
//! service, handed out as `pk_<id>_<secret>` with only a SHA-256 of the
//! secret kept.
//!
//! Verifying a key costs no database round trip: the keys in force are
//! cached in memory. A change made here (a revocation, a rotation) updates
//! the cache at once; a change made by another process reaches it through
//! [`super::Access::refresh`]. When keys are last used is counted in memory
//! and written in batches, off the request path.

use secrecy::ExposeSecret as _;
use std::collections::HashMap;
use std::sync::RwLock;
use std::sync::atomic::{AtomicU64, Ordering};

use chrono::{DateTime, Utc};
use subtle::ConstantTimeEq as _;

use super::Service;
use super::db;
pub(crate) use super::model::{
    ApiKey, IssuedKey, KEY_PREFIX, MAX_NAME_CHARS, Name, NewKey, issue, name_problem,
};
use super::model::{StoredKey, digest_from_hex};
use crate::config::{ConfiguredApiKey, Scope};
use crate::core::secret::sha256;
use crate::storage::{Database, StoreError};

/// What a presented key turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// A key in force: its name (for analytics and limits), its id (none for
    /// a configured key) and scopes.
    Valid {
        name: String,
        id: Option<String>,
        scopes: Vec<Scope>,
    },
    /// A key that was good once: revoked, or past its expiry.
    NoLongerValid,
    /// Not a key of ours (or not of this service).
    Unknown,
}

/// A stored key as the cache holds it.
#[derive(Debug, Clone)]
struct CachedKey {
    service: Service,
    name: String,
    secret_digest: [u8; 32],
    scopes: Vec<Scope>,
    expires_at: Option<DateTime<Utc>>,
    revoked: bool,
}

/// A key from the configuration file (the portfolio's).
struct ConfiguredKey {
    name: String,
    digest: [u8; 32],
    scopes: Vec<Scope>,
}

/// The keys the server accepts.
pub(crate) struct KeyStore {
    configured: Vec<ConfiguredKey>,
    stored: RwLock<HashMap<String, CachedKey>>,
    /// Counts the changes made here, so that a reload that raced one does
    /// not undo it.
    changes: AtomicU64,
    /// Keys used since the last write of last-used times: id -> when.
    uses: std::sync::Mutex<HashMap<String, i64>>,
}

impl std::fmt::Debug for KeyStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyStore")
            .field("configured", &self.configured.len())
            .finish_non_exhaustive()
    }
}

/// Makes and stores a key (the caller checked `new`).
pub(crate) async fn create(db: &Database, new: &NewKey) -> Result<IssuedKey, StoreError> {
    let issued = issue(
        new.service,
        new.name.trim(),
        new.scopes.clone(),
        new.expires_at(crate::core::clock::now()),
    );
    db::create_key(db, &issued.stored).await?;
    Ok(issued)
}

/// Replaces key `id` with a new one of the same name, scopes and service;
/// the old one stays valid until `old_valid_until`. `None` if `id` is not a
/// key in force (or was rotated already).
pub(crate) async fn rotate(
    db: &Database,
    id: &str,
    old_valid_until: DateTime<Utc>,
) -> Result<Option<IssuedKey>, StoreError> {
    let now = Utc::now();
    let Some(old) = db::get_key(db, id).await? else {
        return Ok(None);
    };
    if !old.key.in_force(now) || old.key.rotated_to.is_some() {
        return Ok(None);
    }
    // The new key lives as long as the old one had left.
    let new = issue(
        old.key.service,
        &old.key.name,
        old.key.scopes.clone(),
        old.key.expires_at,
    );
    let rotated = db::rotate_key(db, id, &new.stored, old_valid_until, now).await?;
    Ok(rotated.then_some(new))
}

/// The id and secret of a key that looks like one of ours.
fn parse(presented: &str) -> Option<(&str, &str)> {
    let rest = presented.strip_prefix(KEY_PREFIX)?;
    let (id, key_secret) = rest.split_once('_')?;
    (!id.is_empty() && !key_secret.is_empty()).then_some((id, key_secret))
}

impl KeyStore {
    /// The configured keys and the stored ones in force.
    pub(crate) async fn load(
        db: &Database,
        configured: &[ConfiguredApiKey],
    ) -> Result<Self, StoreError> {
        let store = KeyStore {
            configured: configured
                .iter()
                .map(|k| ConfiguredKey {
                    name: k.name.clone(),
                    digest: sha256(k.key.expose_secret()),
                    scopes: k.scopes.clone(),
                })
                .collect(),
            stored: RwLock::default(),
            changes: AtomicU64::new(0),
            uses: std::sync::Mutex::default(),
        };
        store.reload(db).await?;
        Ok(store)
    }

    /// Reloads the stored keys (those no longer in force too, so that their
    /// users are told why they are refused). False if a change made here
    /// meanwhile may be missing from what was read: then nothing is
    /// replaced, and the caller tries again later.
    pub(crate) async fn reload(&self, db: &Database) -> Result<bool, StoreError> {
        let changes = self.changes.load(Ordering::SeqCst);
        let keys: HashMap<String, CachedKey> = db::list_keys(db, None)
            .await?
            .into_iter()
            .filter_map(|k| cached(&k).map(|cached| (k.key.id.clone(), cached)))
            .collect();
        let mut stored = self.write();
        if self.changes.load(Ordering::SeqCst) != changes {
            return Ok(false);
        }
        *stored = keys;
        Ok(true)
    }

    /// Writes when keys were last used (those used since the last call).
    pub(crate) async fn record_uses(&self, db: &Database) -> Result<(), StoreError> {
        let uses: Vec<(String, i64)> = {
            let mut uses = self
                .uses
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            uses.drain().collect()
        };
        db::record_key_uses(db, &uses).await
    }

    /// Takes a key made or rotated here into the cache at once.
    pub(crate) fn remember(&self, key: &StoredKey) {
        self.changes.fetch_add(1, Ordering::SeqCst);
        if let Some(cached) = cached(key) {
            self.write().insert(key.key.id.clone(), cached);
        }
    }

    /// Forgets a key revoked here, at once.
    pub(crate) fn forget(&self, id: &str) {
        self.changes.fetch_add(1, Ordering::SeqCst);
        if let Some(key) = self.write().get_mut(id) {
            key.revoked = true;
        }
    }

    /// Takes a rotation made here into the cache at once: the new key
    /// works, the old one until `old_valid_until`.
    pub(crate) fn rotated(&self, old: &str, new: &StoredKey, old_valid_until: DateTime<Utc>) {
        self.remember(new);
        self.expire_at(old, old_valid_until);
    }

    /// Shortens a rotated key's life in the cache, at once.
    pub(crate) fn expire_at(&self, id: &str, at: DateTime<Utc>) {
        self.changes.fetch_add(1, Ordering::SeqCst);
        if let Some(key) = self.write().get_mut(id) {
            key.expires_at = Some(key.expires_at.map_or(at, |e| e.min(at)));
        }
    }

    /// What `presented` is to `service`: a key in force (and then counted
    /// as used), one no longer in force, or nothing of its. Compared in
    /// constant time.
    pub(crate) fn verify(&self, presented: &str, service: Service) -> Verdict {
        if let Some((id, key_secret)) = parse(presented) {
            let stored = self
                .stored
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .get(id)
                .cloned();
            if let Some(key) = stored
                && bool::from(key.secret_digest.ct_eq(&sha256(key_secret)))
                && key.service == service
            {
                let now = Utc::now();
                if key.revoked || key.expires_at.is_some_and(|at| at <= now) {
                    return Verdict::NoLongerValid;
                }
                self.uses
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .insert(id.to_owned(), now.timestamp_millis());
                return Verdict::Valid {
                    name: key.name,
                    id: Some(id.to_owned()),
                    scopes: key.scopes,
                };
            }
        }
        if service != Service::Portfolio {
            return Verdict::Unknown;
        }
        // Every configured key is compared, without leaving early.
        let digest = sha256(presented);
        let mut found = None;
        for key in &self.configured {
            if bool::from(key.digest.ct_eq(&digest)) {
                found = Some(key);
            }
        }
        match found {
            Some(key) => Verdict::Valid {
                name: key.name.clone(),
                id: None,
                scopes: key.scopes.clone(),
            },
            None => Verdict::Unknown,
        }
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, HashMap<String, CachedKey>> {
        self.stored
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

fn cached(key: &StoredKey) -> Option<CachedKey> {
    Some(CachedKey {
        service: key.key.service,
        name: key.key.name.clone(),
        secret_digest: digest_from_hex(&key.secret_hash)?,
        scopes: key.key.scopes.clone(),
        expires_at: key.key.expires_at,
        revoked: key.key.revoked_at.is_some(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store_with(keys: &[&StoredKey]) -> KeyStore {
        let store = KeyStore {
            configured: vec![ConfiguredKey {
                name: "configured".into(),
                digest: sha256("a-configured-key"),
                scopes: vec![Scope::ContextRead],
            }],
            stored: RwLock::default(),
            changes: AtomicU64::new(0),
            uses: std::sync::Mutex::default(),
        };
        for key in keys {
            store.remember(key);
        }
        store
    }

    #[test]
    fn a_stored_key_verifies_by_its_secret_and_no_other() {
        let issued = issue(Service::Portfolio, "site", vec![Scope::ContactWrite], None);
        let store = store_with(&[&issued.stored]);
        assert!(issued.key.starts_with("pk_"));
        assert_eq!(issued.key.len(), 3 + 12 + 1 + 43, "{}", issued.key);
        assert!(
            matches!(store.verify(&issued.key, Service::Portfolio), Verdict::Valid { ref name, .. } if name == "site")
        );
        let mut wrong = issued.key.clone();
        wrong.pop();
        wrong.push(if issued.key.ends_with('A') { 'B' } else { 'A' });
        assert_eq!(
            store.verify(&wrong, Service::Portfolio),
            Verdict::Unknown,
            "one character off"
        );
        assert!(matches!(
            store.verify("a-configured-key", Service::Portfolio),
            Verdict::Valid { id: None, .. }
        ));
        assert_eq!(store.verify("pk_", Service::Portfolio), Verdict::Unknown);
    }

    #[test]
    fn a_revoked_or_expired_key_is_no_longer_valid() {
        let revoked = issue(Service::Portfolio, "old", vec![Scope::Admin], None);
        let expired = issue(
            Service::Portfolio,
            "brief",
            vec![Scope::Admin],
            Some(Utc::now() - chrono::Duration::milliseconds(1)),
        );
        let store = store_with(&[&revoked.stored, &expired.stored]);
        store.forget(&revoked.stored.key.id);
        assert_eq!(
            store.verify(&revoked.key, Service::Portfolio),
            Verdict::NoLongerValid
        );
        assert_eq!(
            store.verify(&expired.key, Service::Portfolio),
            Verdict::NoLongerValid
        );
    }

    #[test]
    fn a_key_opens_its_own_service_only() {
        let petstore = issue(Service::Petstore, "shop", vec![], None);
        let store = store_with(&[&petstore.stored]);
        assert!(matches!(
            store.verify(&petstore.key, Service::Petstore),
            Verdict::Valid { .. }
        ));
        assert_eq!(
            store.verify(&petstore.key, Service::Portfolio),
            Verdict::Unknown
        );
        assert_eq!(
            store.verify("a-configured-key", Service::Petstore),
            Verdict::Unknown,
            "configured keys are the portfolio's"
        );
    }

    #[test]
    fn the_stored_hash_is_not_the_secret() {
        let issued = issue(Service::Portfolio, "site", vec![], None);
        // The secret is base64url, so it may itself hold a `_`: cut the
        // known prefix rather than splitting at the last `_` (which once left
        // a two-character tail that the hex digest happened to contain).
        let prefix = format!("{KEY_PREFIX}{}_", issued.stored.key.id);
        let key_secret = issued.key.strip_prefix(&prefix).unwrap_or_default();
        assert_eq!(key_secret.len(), 43, "32 bytes, base64url without padding");
        assert!(!issued.stored.secret_hash.contains(key_secret));
        assert_eq!(issued.stored.secret_hash.len(), 64);
    }
}
