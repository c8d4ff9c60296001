//! Access levels: API keys with scopes.
//!
//! Until the full key and token system lands, the keys are those the operator
//! lists in the configuration (`[[portfolio.api_keys]]`). Only a SHA-256 of each
//! is kept in memory, and a presented key is compared with every one in
//! constant time, so neither timing nor an early exit tells how close a guess was.

use std::collections::BTreeSet;
use std::marker::PhantomData;

use axum::extract::FromRequestParts;
use axum::http::HeaderMap;
use axum::http::request::Parts;
use subtle::ConstantTimeEq as _;

use super::PortfolioState;
use crate::config::{ConfiguredApiKey, Scope};
use crate::error::{Error, ErrorCode};
use crate::secret::sha256;

/// The header that carries an API key.
pub const API_KEY_HEADER: &str = "X-API-Key";

/// The caller of a protected operation whose key has the scope `P` needs,
/// checked from the headers alone: as an extractor it runs before the
/// body's, so a request without the right credential is refused (401 or
/// 403) whatever its body is, and the body is not read.
#[derive(Debug)]
pub struct Authorized<P>(pub Caller, PhantomData<P>);

impl<P: Permission> FromRequestParts<PortfolioState> for Authorized<P> {
    type Rejection = Error;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &PortfolioState,
    ) -> Result<Self, Self::Rejection> {
        let caller = state.keys.authorize(&parts.headers, P::SCOPE)?;
        Ok(Authorized(caller, PhantomData))
    }
}

/// A scope as a type, for [`Authorized`].
pub trait Permission: Send + Sync + 'static {
    const SCOPE: Scope;
}

macro_rules! permissions {
    ($($name:ident),* $(,)?) => {
        $(
            #[doc = concat!("Needs the scope `Scope::", stringify!($name), "`.")]
            #[derive(Debug)]
            pub struct $name;

            impl Permission for $name {
                const SCOPE: Scope = Scope::$name;
            }
        )*
    };
}

permissions!(
    ContextRead,
    ContactWrite,
    AnalyticsRead,
    SocialPublish,
    SubscribersNotify
);

/// Who made a request, once its key was checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub key_name: String,
}

struct KeyEntry {
    name: String,
    digest: [u8; 32],
    scopes: BTreeSet<Scope>,
}

/// The keys the server accepts.
pub struct ApiKeys {
    keys: Vec<KeyEntry>,
}

impl std::fmt::Debug for ApiKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiKeys")
            .field("count", &self.keys.len())
            .finish()
    }
}

impl ApiKeys {
    pub fn new(configured: &[ConfiguredApiKey]) -> Self {
        let keys = configured
            .iter()
            .map(|k| KeyEntry {
                name: k.name.clone(),
                digest: sha256(&k.key),
                scopes: k.scopes.iter().copied().collect(),
            })
            .collect();
        Self { keys }
    }

    /// The name of the known key the request carries, if any (for analytics).
    pub fn identify(&self, headers: &HeaderMap) -> Option<String> {
        let presented = headers.get(API_KEY_HEADER)?.to_str().ok()?.trim();
        self.find(&sha256(presented))
            .map(|entry| entry.name.clone())
    }

    /// The entry whose digest matches, compared with every entry in constant
    /// time, without leaving early.
    fn find(&self, presented: &[u8; 32]) -> Option<&KeyEntry> {
        let mut found = None;
        for entry in &self.keys {
            if bool::from(entry.digest.ct_eq(presented)) {
                found = Some(entry);
            }
        }
        found
    }

    /// The caller, if the request carries a known key that has `scope`:
    /// 401 (`details.required_header`) without a known key, 403
    /// (`details.required_scope`) when the key lacks the scope.
    pub fn authorize(&self, headers: &HeaderMap, scope: Scope) -> Result<Caller, Error> {
        let presented = headers
            .get(API_KEY_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(str::trim);
        let unauthorized = |message: &'static str| {
            Error::new(ErrorCode::Unauthorized, message)
                .with_detail("required_header", API_KEY_HEADER)
        };
        let presented = match presented {
            Some(key) if !key.is_empty() => sha256(key),
            _ => {
                return Err(unauthorized(
                    "this operation needs an API key in the X-API-Key header",
                ));
            }
        };
        let entry = self
            .find(&presented)
            .ok_or_else(|| unauthorized("the API key is not valid"))?;
        if !entry.scopes.contains(&scope) && !entry.scopes.contains(&Scope::Admin) {
            return Err(Error::new(
                ErrorCode::Forbidden,
                format!("the API key lacks the scope {}", scope.as_str()),
            )
            .with_detail("required_scope", scope.as_str()));
        }
        Ok(Caller {
            key_name: entry.name.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn keys() -> ApiKeys {
        ApiKeys::new(&[
            ConfiguredApiKey {
                name: "reader".into(),
                key: "k-read".into(),
                scopes: vec![Scope::ContextRead],
            },
            ConfiguredApiKey {
                name: "root".into(),
                key: "k-admin".into(),
                scopes: vec![Scope::Admin],
            },
        ])
    }

    fn with_key(key: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(
            API_KEY_HEADER,
            HeaderValue::from_str(key).unwrap_or(HeaderValue::from_static("")),
        );
        headers
    }

    #[test]
    fn keys_and_scopes_are_checked() {
        let keys = keys();
        let ok = keys.authorize(&with_key("k-read"), Scope::ContextRead);
        assert_eq!(ok.ok().map(|c| c.key_name), Some("reader".to_owned()));
        let missing = keys.authorize(&HeaderMap::new(), Scope::ContextRead).err();
        assert_eq!(
            missing.map(|e| e.details()["required_header"].clone()),
            Some("X-API-Key".into())
        );
        let wrong = keys
            .authorize(&with_key("k-reed"), Scope::ContextRead)
            .err();
        assert_eq!(wrong.map(|e| e.code()), Some(ErrorCode::Unauthorized));
        let scope = keys
            .authorize(&with_key("k-read"), Scope::ContactWrite)
            .err();
        assert_eq!(
            scope.map(|e| e.details()["required_scope"].clone()),
            Some("contact:write".into())
        );
        assert!(
            keys.authorize(&with_key("k-admin"), Scope::ContactWrite)
                .is_ok(),
            "admin may do anything"
        );
    }
}
