//! Pet store users' credentials, cached so that checking them costs no
//! database round trip and no password hash per request:
//!
//! - [`SessionCache`]: `loginUser` sessions and the implicit flow's tokens,
//!   by the SHA-256 of the token (as stored). A session made here is cached
//!   when it is made; one made by another replica is looked up once. A token
//!   that names no session is remembered as unknown (a bounded set), so a
//!   client repeating a made-up token costs no query per request: a real
//!   token is random, so it cannot be in that set before it is made.
//! - [`RememberedLogins`]: a username and password that verified, for a
//!   short time, keyed by an HMAC of the pair under a key of this process
//!   (the password itself is never kept), so that a client sending HTTP
//!   Basic on every request pays one argon2 verification, not one each.
//!
//! A password change, a rename, a deletion or a logout forgets what it
//! touches here at once, and bumps the access version, which makes every
//! other replica drop both caches within a second ([`super::Access::refresh`]).

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, RwLock};

use hmac::{Hmac, Mac as _};
use sha2::Sha256;

pub(crate) use super::model::CachedSession;
use crate::core::clock::now_ms;

/// At most this many sessions (and as many unknown tokens) are cached; past
/// it the cache starts afresh.
const SESSIONS_CAPACITY: usize = 100_000;
const UNKNOWN_CAPACITY: usize = 10_000;

/// How long a verified username and password are remembered.
pub(crate) const REMEMBER_LOGIN_MS: i64 = 60_000;
/// At most this many remembered logins; past it the expired ones go, and
/// if that is not enough, all.
const LOGINS_CAPACITY: usize = 10_000;

/// What the cache knows of a token (by its hash).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Known {
    Session(CachedSession),
    /// Looked up before and not found.
    Unknown,
    /// Not seen: look it up.
    NotSeen,
}

/// Sessions by their token's hash, and hashes that name none.
#[derive(Debug, Default)]
pub(crate) struct SessionCache {
    sessions: RwLock<HashMap<String, CachedSession>>,
    unknown: Mutex<HashSet<String>>,
    /// Counts what ended sessions, so that a lookup that raced an ending
    /// is not cached (see [`SessionCache::generation`]).
    endings: AtomicU64,
}

impl SessionCache {
    /// What is known of the token whose SHA-256 (hex) is `token_hash`.
    pub(crate) fn get(&self, token_hash: &str) -> Known {
        let sessions = self
            .sessions
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(session) = sessions.get(token_hash) {
            return Known::Session(session.clone());
        }
        drop(sessions);
        if lock(&self.unknown).contains(token_hash) {
            return Known::Unknown;
        }
        Known::NotSeen
    }

    /// Where the endings stand: read it before looking a session up, and
    /// pass it to [`remember_found`](Self::remember_found).
    pub(crate) fn generation(&self) -> u64 {
        self.endings.load(Ordering::SeqCst)
    }

    /// Caches what a lookup found (`None`: no session), unless something
    /// ended sessions since `generation`: the row read may predate it.
    pub(crate) fn remember_found(
        &self,
        generation: u64,
        token_hash: String,
        found: Option<CachedSession>,
    ) {
        if self.generation() != generation {
            return;
        }
        match found {
            Some(session) => self.remember(token_hash, session),
            None => self.remember_unknown(token_hash),
        }
    }

    /// Caches a session made here.
    pub(crate) fn remember(&self, token_hash: String, session: CachedSession) {
        let mut sessions = self.write();
        if sessions.len() >= SESSIONS_CAPACITY {
            sessions.clear();
        }
        sessions.insert(token_hash, session);
    }

    /// Notes a token that names no session.
    fn remember_unknown(&self, token_hash: String) {
        let mut unknown = lock(&self.unknown);
        if unknown.len() >= UNKNOWN_CAPACITY {
            unknown.clear();
        }
        unknown.insert(token_hash);
    }

    /// Ends one session (a logout).
    pub(crate) fn forget(&self, token_hash: &str) {
        self.write().remove(token_hash);
    }

    /// Ends every session of a user but `keep` (a password change, or the
    /// user's deletion with none kept).
    pub(crate) fn forget_user(&self, user_id: i64, keep: Option<&str>) {
        self.write()
            .retain(|hash, session| session.user_id != user_id || Some(hash.as_str()) == keep);
    }

    /// Drops everything (another process changed something).
    pub(crate) fn clear(&self) {
        self.write().clear();
        lock(&self.unknown).clear();
    }

    /// The sessions, to change: whatever is changed counts as an ending.
    fn write(&self) -> std::sync::RwLockWriteGuard<'_, HashMap<String, CachedSession>> {
        self.endings.fetch_add(1, Ordering::SeqCst);
        self.sessions
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A login that verified: whose, and until when (Unix milliseconds).
#[derive(Debug, Clone, Copy)]
struct Remembered {
    user_id: i64,
    until_ms: i64,
}

/// Usernames and passwords that verified a moment ago, by an HMAC of the
/// pair.
pub(crate) struct RememberedLogins {
    /// The HMAC key: random, this process's own, never written anywhere.
    key: [u8; 32],
    logins: Mutex<HashMap<[u8; 32], Remembered>>,
}

impl std::fmt::Debug for RememberedLogins {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RememberedLogins").finish_non_exhaustive()
    }
}

impl Default for RememberedLogins {
    fn default() -> Self {
        RememberedLogins {
            key: crate::core::secret::random_bytes::<32>(),
            logins: Mutex::default(),
        }
    }
}

impl RememberedLogins {
    fn mac(&self, username: &str, password: &str) -> [u8; 32] {
        // The name's length first, so that no other pair makes the same input.
        let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(&self.key) else {
            return [0; 32];
        };
        mac.update(&(username.len() as u64).to_be_bytes());
        mac.update(username.as_bytes());
        mac.update(password.as_bytes());
        mac.finalize().into_bytes().into()
    }

    /// The user whose name and password these are, if they verified within
    /// [`REMEMBER_LOGIN_MS`].
    pub(crate) fn recall(&self, username: &str, password: &str) -> Option<i64> {
        let mac = self.mac(username, password);
        let now = now_ms();
        lock(&self.logins)
            .get(&mac)
            .filter(|login| login.until_ms > now)
            .map(|login| login.user_id)
    }

    /// Remembers that these verified as `user_id`'s.
    pub(crate) fn remember(&self, username: &str, password: &str, user_id: i64) {
        let mac = self.mac(username, password);
        let now = now_ms();
        let mut logins = lock(&self.logins);
        if logins.len() >= LOGINS_CAPACITY {
            logins.retain(|_, login| login.until_ms > now);
            if logins.len() >= LOGINS_CAPACITY {
                logins.clear();
            }
        }
        logins.insert(
            mac,
            Remembered {
                user_id,
                until_ms: now + REMEMBER_LOGIN_MS,
            },
        );
    }

    /// Forgets every login of a user (a password change, a rename, a deletion).
    pub(crate) fn forget_user(&self, user_id: i64) {
        lock(&self.logins).retain(|_, login| login.user_id != user_id);
    }

    /// Forgets everything (another process changed a user).
    pub(crate) fn clear(&self) {
        lock(&self.logins).clear();
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remembered_login_is_recalled_by_its_exact_pair_only() {
        let logins = RememberedLogins::default();
        logins.remember("user1", "secret-1", 7);
        assert_eq!(logins.recall("user1", "secret-1"), Some(7));
        assert_eq!(logins.recall("user1", "secret-2"), None);
        assert_eq!(
            logins.recall("user", "1secret-1"),
            None,
            "the pair, not the concatenation"
        );
        logins.forget_user(7);
        assert_eq!(logins.recall("user1", "secret-1"), None);
    }

    #[test]
    fn the_password_is_not_kept() {
        let logins = RememberedLogins::default();
        logins.remember("user1", "a-very-recognisable-password", 7);
        let debug = format!("{logins:?}");
        assert!(!debug.contains("recognisable"), "{debug}");
        let keys: Vec<[u8; 32]> = lock(&logins.logins).keys().copied().collect();
        assert!(
            !keys[0].windows(8).any(|w| w == b"a-very-r"),
            "only a keyed hash is kept"
        );
    }

    #[test]
    fn a_password_change_ends_the_other_sessions_only() {
        let cache = SessionCache::default();
        let session = |user_id| CachedSession {
            user_id,
            scopes: None,
            expires_at: i64::MAX,
        };
        cache.remember("a".into(), session(1));
        cache.remember("b".into(), session(1));
        cache.remember("c".into(), session(2));
        cache.forget_user(1, Some("a"));
        assert!(matches!(cache.get("a"), Known::Session(_)));
        assert_eq!(cache.get("b"), Known::NotSeen);
        assert!(matches!(cache.get("c"), Known::Session(_)));
        cache.remember_found(cache.generation(), "d".into(), None);
        assert_eq!(cache.get("d"), Known::Unknown);
        cache.clear();
        assert_eq!(cache.get("d"), Known::NotSeen);
    }
}
