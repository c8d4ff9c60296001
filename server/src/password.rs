//! Password hashing with argon2id, off the async threads (it is slow on
//! purpose).

use std::sync::OnceLock;

use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};

use crate::error::Error;

/// The argon2id hash of a password (PHC string format, salt included).
pub async fn hash(password: String) -> Result<String, Error> {
    tokio::task::spawn_blocking(move || hash_now(password.as_bytes()))
        .await
        .map_err(|e| Error::internal("password hashing task failed", e))?
        .map_err(|e| Error::internal("cannot hash a password", e))
}

/// Whether `password` matches `hash`. Without a hash (no such user) a dummy
/// hash is checked all the same, so that a wrong username takes as long as
/// a wrong password; the answer is then always false.
pub async fn verify(password: String, hash: Option<String>) -> Result<bool, Error> {
    tokio::task::spawn_blocking(move || {
        let known = hash.is_some();
        let hash = hash.unwrap_or_else(|| dummy_hash().to_owned());
        let Ok(parsed) = PasswordHash::new(&hash) else {
            return false;
        };
        let matches = Argon2::default()
            .verify_password(password.as_bytes(), &parsed)
            .is_ok();
        known && matches
    })
    .await
    .map_err(|e| Error::internal("password check task failed", e))
}

fn hash_now(password: &[u8]) -> Result<String, argon2::password_hash::Error> {
    let salt = SaltString::encode_b64(&crate::secret::random_bytes::<16>())?;
    Ok(Argon2::default()
        .hash_password(password, &salt)?
        .to_string())
}

/// A hash of a password nobody has.
fn dummy_hash() -> &'static str {
    static DUMMY: OnceLock<String> = OnceLock::new();
    DUMMY.get_or_init(|| hash_now(b"no such user").unwrap_or_default())
}
