//! OAuth 2.0 for the portfolio: clients the operator registers, and the
//! bearer tokens the token endpoint issues to them (the client credentials
//! grant, RFC 6749 section 4.4).
//!
//! Client secrets and tokens are 256-bit random strings of which only a
//! SHA-256 is stored. A token reads `pt_<id>_<secret>`: the id finds it, the
//! secret is compared in constant time. Verifying a token this process has
//! seen costs no database round trip; one issued by another process is
//! looked up once by its id and then cached. A revocation made here updates
//! the cache at once; one made elsewhere bumps the access version, and
//! [`super::Access::refresh`] drops the cache (tokens are looked up again as
//! they are used).

use std::collections::HashMap;
use std::sync::RwLock;
use std::sync::atomic::{AtomicU64, Ordering};

use subtle::ConstantTimeEq as _;

use super::db;
pub(crate) use super::model::{OAuthClient, StoredToken, client_secret_matches, mint, register};
use super::model::{TOKEN_PREFIX, digest_from_hex};
use crate::config::Scope;
use crate::core::clock::now_ms;
use crate::core::secret::sha256;
use crate::storage::{Database, StoreError};

/// At most this many tokens are cached; past it the cache starts afresh
/// (tokens are then looked up again as they are used).
const CACHE_CAPACITY: usize = 100_000;

/// The id and secret of a string that looks like one of our tokens.
pub(crate) fn parse(presented: &str) -> Option<(&str, &str)> {
    let rest = presented.strip_prefix(TOKEN_PREFIX)?;
    let (id, token_secret) = rest.split_once('_')?;
    let well_formed =
        id.len() == 16 && id.bytes().all(|b| b.is_ascii_hexdigit()) && !token_secret.is_empty();
    well_formed.then_some((id, token_secret))
}

/// What a presented bearer token turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TokenVerdict {
    /// A token in force: its client, its id and its scopes.
    Valid {
        client_id: String,
        id: String,
        scopes: Vec<Scope>,
    },
    /// A token that was good once: revoked (or its client was), or expired.
    NoLongerValid,
    /// Not a token of ours.
    Unknown,
}

#[derive(Debug, Clone)]
struct CachedToken {
    client_id: String,
    digest: [u8; 32],
    scopes: Vec<Scope>,
    expires_at_ms: i64,
    revoked: bool,
}

impl CachedToken {
    fn from_stored(token: &StoredToken) -> Option<Self> {
        Some(CachedToken {
            client_id: token.client_id.clone(),
            digest: digest_from_hex(&token.secret_hash)?,
            scopes: token.scopes.clone(),
            expires_at_ms: token.expires_at_ms,
            revoked: token.revoked_at_ms.is_some(),
        })
    }
}

/// At most this many ids of tokens that do not exist are remembered.
const UNKNOWN_CAPACITY: usize = 10_000;

/// The tokens this process has seen.
#[derive(Debug, Default)]
pub(crate) struct TokenStore {
    cache: RwLock<HashMap<String, CachedToken>>,
    /// Ids looked up and not found: a client repeating a made-up token of
    /// the right shape costs no query per request. (A real token's id is
    /// random, so it cannot be here before the token is made.)
    unknown: std::sync::Mutex<std::collections::HashSet<String>>,
    /// Counts revocations, so that a lookup that raced one is not cached.
    revocations: AtomicU64,
}

impl TokenStore {
    /// Takes a token issued here into the cache.
    pub(crate) fn remember(&self, token: &StoredToken) {
        if let Some(cached) = CachedToken::from_stored(token) {
            self.insert(token.id.clone(), cached);
        }
    }

    /// Ends a token revoked here, at once.
    pub(crate) fn forget(&self, id: &str) {
        self.revocations.fetch_add(1, Ordering::SeqCst);
        if let Some(token) = self.write().get_mut(id) {
            token.revoked = true;
        }
    }

    /// Ends every token of a client revoked here, at once.
    pub(crate) fn forget_client(&self, client_id: &str) {
        self.revocations.fetch_add(1, Ordering::SeqCst);
        for token in self.write().values_mut() {
            if token.client_id == client_id {
                token.revoked = true;
            }
        }
    }

    /// Drops every cached token (another process revoked something).
    pub(crate) fn clear(&self) {
        self.revocations.fetch_add(1, Ordering::SeqCst);
        self.write().clear();
        self.unknown_ids().clear();
    }

    fn unknown_ids(&self) -> std::sync::MutexGuard<'_, std::collections::HashSet<String>> {
        self.unknown
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Drops the tokens that expired before `now`.
    pub(crate) fn sweep(&self, now: i64) {
        self.write().retain(|_, token| token.expires_at_ms > now);
    }

    /// What `presented` is: a token in force, one no longer in force, or
    /// nothing of ours. A token not seen before is looked up by its id.
    pub(crate) async fn verify(
        &self,
        db: &Database,
        presented: &str,
    ) -> Result<TokenVerdict, StoreError> {
        let Some((id, token_secret)) = parse(presented) else {
            return Ok(TokenVerdict::Unknown);
        };
        let cached = self
            .cache
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(id)
            .cloned();
        let token = match cached {
            Some(token) => token,
            None => {
                if self.unknown_ids().contains(id) {
                    return Ok(TokenVerdict::Unknown);
                }
                let revocations = self.revocations.load(Ordering::SeqCst);
                let Some(found) = db::get_token(db, id)
                    .await?
                    .as_ref()
                    .and_then(CachedToken::from_stored)
                else {
                    let mut unknown = self.unknown_ids();
                    if unknown.len() >= UNKNOWN_CAPACITY {
                        unknown.clear();
                    }
                    unknown.insert(id.to_owned());
                    return Ok(TokenVerdict::Unknown);
                };
                // A revocation that came while the row was read may not be
                // in it: then the row is used this once, not cached.
                if self.revocations.load(Ordering::SeqCst) == revocations {
                    self.insert(id.to_owned(), found.clone());
                }
                found
            }
        };
        if !bool::from(token.digest.ct_eq(&sha256(token_secret))) {
            return Ok(TokenVerdict::Unknown);
        }
        if token.revoked || token.expires_at_ms <= now_ms() {
            return Ok(TokenVerdict::NoLongerValid);
        }
        Ok(TokenVerdict::Valid {
            client_id: token.client_id,
            id: id.to_owned(),
            scopes: token.scopes,
        })
    }

    fn insert(&self, id: String, token: CachedToken) {
        let mut cache = self.write();
        if cache.len() >= CACHE_CAPACITY {
            cache.clear();
        }
        cache.insert(id, token);
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, HashMap<String, CachedToken>> {
        self.cache
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_look_like_ours_and_nothing_else_does() {
        let issued = mint("pc_1", vec![Scope::Admin], 60_000);
        assert!(parse(&issued.token).is_some());
        assert_eq!(issued.token.len(), 3 + 16 + 1 + 43);
        assert!(parse("pt_short_x").is_none());
        assert!(parse("pk_0123456789abcdef_x").is_none());
        assert!(parse("pt_0123456789abcdef_").is_none());
        assert!(!issued.stored.secret_hash.contains(&issued.token[20..]));
    }

    #[tokio::test]
    async fn a_cached_token_verifies_by_its_secret_until_it_is_revoked() {
        let db = Database::connect("sqlite::memory:").await.unwrap();
        let store = TokenStore::default();
        let issued = mint("pc_1", vec![Scope::Admin], 60_000);
        store.remember(&issued.stored);
        let valid = store.verify(&db, &issued.token).await.unwrap();
        assert!(matches!(valid, TokenVerdict::Valid { ref client_id, .. } if client_id == "pc_1"));
        let mut wrong = issued.token.clone();
        wrong.pop();
        wrong.push(if issued.token.ends_with('A') {
            'B'
        } else {
            'A'
        });
        assert_eq!(
            store.verify(&db, &wrong).await.unwrap(),
            TokenVerdict::Unknown
        );
        store.forget_client("pc_1");
        assert_eq!(
            store.verify(&db, &issued.token).await.unwrap(),
            TokenVerdict::NoLongerValid
        );
        let expired = mint("pc_1", vec![Scope::Admin], -1);
        store.remember(&expired.stored);
        assert_eq!(
            store.verify(&db, &expired.token).await.unwrap(),
            TokenVerdict::NoLongerValid
        );
    }

    /// A made-up token of the right shape is looked up once; then it is
    /// refused from memory (here: the database is gone, and the answer is
    /// still `Unknown`, not an error).
    #[tokio::test]
    async fn an_unknown_token_costs_one_lookup() {
        let db = Database::connect("sqlite::memory:").await.unwrap();
        let store = TokenStore::default();
        let made_up = "pt_0123456789abcdef_made-up";
        assert_eq!(
            store.verify(&db, made_up).await.unwrap(),
            TokenVerdict::Unknown
        );
        db.close().await;
        assert_eq!(
            store.verify(&db, made_up).await.unwrap(),
            TokenVerdict::Unknown
        );
        store.clear();
        assert!(
            store.verify(&db, made_up).await.is_err(),
            "looked up again after a clear"
        );
    }

    #[test]
    fn a_client_secret_is_compared_whole() {
        let issued = register("backend", vec![Scope::ContextRead]);
        assert!(client_secret_matches(Some(&issued.stored), &issued.secret));
        assert!(!client_secret_matches(
            Some(&issued.stored),
            &issued.secret[1..]
        ));
        assert!(!client_secret_matches(None, &issued.secret));
        let mut revoked = issued.stored.clone();
        revoked.client.revoked_at = Some(chrono::Utc::now());
        assert!(!client_secret_matches(Some(&revoked), &issued.secret));
    }
}
