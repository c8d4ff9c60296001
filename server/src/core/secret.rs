//! Random secrets and their digests: session and link tokens, nonces, and
//! the SHA-256 that is stored in place of a token.

use base64::Engine as _;
use rand::RngCore as _;
use sha2::{Digest as _, Sha256};

/// `n` random bytes from the operating system's generator.
pub(crate) fn random_bytes<const N: usize>() -> [u8; N] {
    let mut bytes = [0_u8; N];
    rand::rng().fill_bytes(&mut bytes);
    bytes
}

/// A random token of `N` bytes, URL-safe base64 without padding (fit for
/// links and headers).
pub(crate) fn token<const N: usize>() -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(random_bytes::<N>())
}

/// A random nonce of `N` bytes, in lower-case hex.
pub(crate) fn hex_nonce<const N: usize>() -> String {
    hex(&random_bytes::<N>())
}

/// The SHA-256 digest of a secret, as kept in memory for comparison.
pub(crate) fn sha256(secret: &str) -> [u8; 32] {
    Sha256::digest(secret.as_bytes()).into()
}

/// The SHA-256 digest of a secret in lower-case hex, as stored in place of
/// the secret.
pub(crate) fn sha256_hex(secret: &str) -> String {
    hex(&sha256(secret))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_url_safe_and_differ() {
        let (a, b) = (token::<32>(), token::<32>());
        assert_ne!(a, b);
        assert_eq!(a.len(), 43, "32 bytes in unpadded base64");
        assert!(
            a.bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
        );
        assert_eq!(hex_nonce::<16>().len(), 32);
    }

    #[test]
    fn digests_are_sha256() {
        assert_eq!(
            sha256_hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
