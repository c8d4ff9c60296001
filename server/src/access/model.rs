//! The credentials' own types and rules, which storage, the caches and the
//! operations share: API keys (made, named, given a life), OAuth clients
//! and their tokens, pet store sessions. No storage, no HTTP.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use subtle::ConstantTimeEq as _;
use utoipa::ToSchema;

use crate::config::Scope;
use crate::core::clock::now_ms;
use crate::core::secret::{self, sha256};

/// The service a credential opens.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema, clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Service {
    Portfolio,
    Petstore,
}

impl Service {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Service::Portfolio => "portfolio",
            Service::Petstore => "petstore",
        }
    }

    pub(crate) fn parse(text: &str) -> Option<Self> {
        match text {
            "portfolio" => Some(Service::Portfolio),
            "petstore" => Some(Service::Petstore),
            _ => None,
        }
    }
}

/// Keys made by the server start with this.
pub(crate) const KEY_PREFIX: &str = "pk_";

/// An API key as the operator sees it (never its secret).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub(crate) struct ApiKey {
    /// The public part of the key: `pk_<id>_...`.
    pub(crate) id: String,
    /// The service it opens.
    pub(crate) service: Service,
    /// Who the key belongs to; shown in analytics.
    pub(crate) name: String,
    /// What it may do (the portfolio's scopes; a pet store key none, or
    /// `admin`: it may act for any pet store user).
    #[schema(value_type = Vec<String>)]
    pub(crate) scopes: Vec<Scope>,
    pub(crate) created_at: DateTime<Utc>,
    /// When it stops working; none: never.
    pub(crate) expires_at: Option<DateTime<Utc>>,
    pub(crate) revoked_at: Option<DateTime<Utc>>,
    /// When it was last used (written a second or so late).
    pub(crate) last_used_at: Option<DateTime<Utc>>,
    /// The key that replaced it, if it was rotated.
    pub(crate) rotated_to: Option<String>,
}

impl ApiKey {
    /// Whether it opens doors at `now`: not revoked, not expired.
    pub(crate) fn in_force(&self, now: DateTime<Utc>) -> bool {
        self.revoked_at.is_none() && self.expires_at.is_none_or(|at| at > now)
    }
}

/// A new key: what is stored, and the key itself, shown once.
#[derive(Debug)]
pub(crate) struct IssuedKey {
    pub(crate) stored: StoredKey,
    /// `pk_<id>_<secret>`: give it to its owner; it is not kept.
    pub(crate) key: String,
}

/// Makes a new key (not yet stored).
pub(crate) fn issue(
    service: Service,
    name: &str,
    scopes: Vec<Scope>,
    expires_at: Option<DateTime<Utc>>,
) -> IssuedKey {
    let id = secret::hex_nonce::<6>();
    let key_secret = secret::token::<32>();
    IssuedKey {
        key: format!("{KEY_PREFIX}{id}_{key_secret}"),
        stored: StoredKey {
            key: ApiKey {
                id,
                service,
                name: name.to_owned(),
                scopes,
                created_at: crate::core::clock::now(),
                expires_at,
                revoked_at: None,
                last_used_at: None,
                rotated_to: None,
            },
            secret_hash: secret::sha256_hex(&key_secret),
        },
    }
}

/// Longest name of a key, a client or a request.
pub(crate) const MAX_NAME_CHARS: usize = 100;

/// Longest life a new key may be given.
pub(crate) const MAX_EXPIRES_IN_DAYS: u32 = 3650;

/// What the operator asks for when making a key.
#[derive(Debug, Clone)]
pub(crate) struct NewKey {
    pub(crate) service: Service,
    pub(crate) name: String,
    pub(crate) scopes: Vec<Scope>,
    pub(crate) expires_in_days: Option<u32>,
}

impl NewKey {
    /// The problems with it, by field: a name, scopes for a portfolio key;
    /// for a pet store key none but `admin` (which lets its `api_key` act
    /// for any pet store user); a sensible expiry.
    pub(crate) fn problems(&self) -> Vec<(String, String)> {
        let mut problems = Vec::new();
        if let Some(problem) = name_problem(&self.name) {
            problems.push(("name".to_owned(), problem));
        }
        match self.service {
            Service::Portfolio if self.scopes.is_empty() => {
                problems.push(("scopes".to_owned(), "give at least one scope".to_owned()));
            }
            Service::Petstore if self.scopes.iter().any(|s| *s != Scope::Admin) => problems.push((
                "scopes".to_owned(),
                "a pet store key takes no scope but admin".to_owned(),
            )),
            _ => {}
        }
        if let Some(days) = self.expires_in_days
            && !(1..=MAX_EXPIRES_IN_DAYS).contains(&days)
        {
            problems.push((
                "expires_in_days".to_owned(),
                format!("must be from 1 to {MAX_EXPIRES_IN_DAYS}"),
            ));
        }
        problems
    }

    /// When a key made at `now` expires.
    pub(crate) fn expires_at(&self, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        self.expires_in_days
            .map(|days| now + chrono::Duration::days(i64::from(days)))
    }
}

/// What is wrong with a name for a key, a client or a request, if anything.
///
/// [`NAME_PATTERN`] says the same for the documents.
pub(crate) fn name_problem(name: &str) -> Option<String> {
    if name.trim().is_empty() {
        Some("must not be empty".to_owned())
    } else if name.chars().count() > MAX_NAME_CHARS {
        Some(format!("must be at most {MAX_NAME_CHARS} characters"))
    } else if name.chars().any(char::is_control) {
        Some("must not hold control characters".to_owned())
    } else {
        None
    }
}

/// The documents' `pattern` for names: not only white space (Unicode's
/// `White_Space`, which `str::trim` removes), no control characters.
#[cfg(test)]
pub(crate) const NAME_PATTERN: &str = r"^[^\u0000-\u001F\u007F-\u009F]*[^\u0000-\u0020\u007F-\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000][^\u0000-\u001F\u007F-\u009F]*$";

/// Who a key or a client is for: 1 to 100 characters, not only white
/// space, no control characters (the schema of [`name_problem`]'s rule).
#[derive(utoipa::ToSchema)]
#[allow(dead_code)] // Named in schemas, never built.
#[schema(
    min_length = 1,
    max_length = 100,
    pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\u0000-\u0020\u007F-\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000][^\u0000-\u001F\u007F-\u009F]*$"
)]
pub(crate) struct Name(String);

/// The 32 bytes a stored hex digest stands for.
pub(crate) fn digest_from_hex(hex: &str) -> Option<[u8; 32]> {
    let mut digest = [0_u8; 32];
    if hex.len() != 64 {
        return None;
    }
    for (i, byte) in digest.iter_mut().enumerate() {
        *byte = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(digest)
}

/// Tokens start with this.
pub(crate) const TOKEN_PREFIX: &str = "pt_";

/// Client ids start with this.
pub(crate) const CLIENT_PREFIX: &str = "pc_";

/// An OAuth client as the operator sees it (never its secret).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub(crate) struct OAuthClient {
    /// What the client gives as `client_id`.
    pub(crate) client_id: String,
    /// Who the client is; for the operator.
    pub(crate) name: String,
    /// The most its tokens may carry.
    #[schema(value_type = Vec<String>)]
    pub(crate) scopes: Vec<Scope>,
    pub(crate) created_at: DateTime<Utc>,
    /// When it was revoked; its tokens ended then.
    pub(crate) revoked_at: Option<DateTime<Utc>>,
}

/// A new client: what is stored, and its secret, shown once.
#[derive(Debug)]
pub(crate) struct IssuedClient {
    pub(crate) stored: StoredClient,
    /// Give it to the client's owner; it is not kept.
    pub(crate) secret: String,
}

/// Makes a new client (not yet stored).
pub(crate) fn register(name: &str, scopes: Vec<Scope>) -> IssuedClient {
    let secret = secret::token::<32>();
    IssuedClient {
        stored: StoredClient {
            client: OAuthClient {
                client_id: format!("{CLIENT_PREFIX}{}", secret::hex_nonce::<8>()),
                name: name.to_owned(),
                scopes,
                created_at: crate::core::clock::now(),
                revoked_at: None,
            },
            secret_hash: secret::sha256_hex(&secret),
        },
        secret,
    }
}

/// Whether `presented` is the secret of `client` (a client in force). An
/// unknown client costs the same comparison as a known one.
pub(crate) fn client_secret_matches(client: Option<&StoredClient>, presented: &str) -> bool {
    let stored = client
        .filter(|c| c.client.revoked_at.is_none())
        .and_then(|c| digest_from_hex(&c.secret_hash));
    let matches = stored.unwrap_or_default().ct_eq(&sha256(presented)).into();
    matches && stored.is_some()
}

/// A bearer token as stored.
#[derive(Debug, Clone)]
pub(crate) struct StoredToken {
    pub(crate) id: String,
    pub(crate) secret_hash: String,
    pub(crate) client_id: String,
    pub(crate) scopes: Vec<Scope>,
    pub(crate) created_at_ms: i64,
    pub(crate) expires_at_ms: i64,
    pub(crate) revoked_at_ms: Option<i64>,
}

/// A new token: what is stored, and the token itself, given to the client.
#[derive(Debug)]
pub(crate) struct IssuedToken {
    pub(crate) stored: StoredToken,
    pub(crate) token: String,
}

/// Makes a token for `client_id` carrying `scopes`, good for `ttl_ms`.
pub(crate) fn mint(client_id: &str, scopes: Vec<Scope>, ttl_ms: i64) -> IssuedToken {
    let id = secret::hex_nonce::<8>();
    let token_secret = secret::token::<32>();
    let now = now_ms();
    IssuedToken {
        token: format!("{TOKEN_PREFIX}{id}_{token_secret}"),
        stored: StoredToken {
            id,
            secret_hash: secret::sha256_hex(&token_secret),
            client_id: client_id.to_owned(),
            scopes,
            created_at_ms: now,
            expires_at_ms: now.saturating_add(ttl_ms),
            revoked_at_ms: None,
        },
    }
}

/// A key as stored: what the operator sees, and the hash of its secret.
#[derive(Debug, Clone)]
pub(crate) struct StoredKey {
    pub(crate) key: ApiKey,
    pub(crate) secret_hash: String,
}

/// A client as stored: what the operator sees, and the hash of its secret.
#[derive(Debug, Clone)]
pub(crate) struct StoredClient {
    pub(crate) client: OAuthClient,
    pub(crate) secret_hash: String,
}

/// A session in force, as cached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CachedSession {
    pub(crate) user_id: i64,
    /// Space-separated; none: both scopes (a `loginUser` session).
    pub(crate) scopes: Option<String>,
    /// Unix seconds.
    pub(crate) expires_at: i64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_schema_says_the_pattern() {
        use utoipa::PartialSchema as _;
        let schema = serde_json::to_value(Name::schema()).unwrap();
        assert_eq!(schema["pattern"], NAME_PATTERN);
    }

    #[test]
    fn the_name_pattern_says_what_name_problem_checks() {
        let pattern = regex::Regex::new(NAME_PATTERN).unwrap();
        for name in [
            "Acme",
            " a ",
            "a\u{feff}",
            "\u{feff}",
            "tab\there",
            " ",
            "\u{3000}",
            "\u{a0}x",
            "\u{85}",
            "x\u{1}",
            "x\u{7f}",
            "\u{9f}y",
            "",
            "\u{2028}",
            "\u{200b}",
            "日本",
        ] {
            assert_eq!(
                name_problem(name).is_none(),
                pattern.is_match(name),
                "{name:?}: {:?}",
                name_problem(name)
            );
        }
    }
}
