//! The private operations under `/api/admin/` (DESIGN 4.2): each takes a
//! bearer token ([`super::auth::Private`]) with `admin` or the finer scope
//! it names. One module per resource.
//!
//! A caller can hand out only the scopes it holds itself (a key or client
//! made with `keys:manage` cannot be given `admin`), so that managing keys
//! is not a way to more power.

pub mod api_keys;
pub mod contact_submissions;
pub mod content;
pub mod key_requests;
pub mod oauth_clients;
pub mod outbox;
pub mod subscribers;

use super::auth::Caller;
use crate::config::Scope;
use crate::error::{Error, ErrorCode};

/// 403 unless the caller holds every one of `scopes`, to hand them on.
pub fn may_grant(caller: &Caller, scopes: &[Scope]) -> Result<(), Error> {
    holds_all(caller, scopes, "hand out the scope")
}

/// 403 unless the caller holds every scope of the credential it would
/// revoke: `keys:manage` alone may not end an `admin` key or client.
pub fn may_revoke(caller: &Caller, scopes: &[Scope]) -> Result<(), Error> {
    holds_all(caller, scopes, "revoke a credential with the scope")
}

fn holds_all(caller: &Caller, scopes: &[Scope], to: &str) -> Result<(), Error> {
    match scopes
        .iter()
        .find(|scope| !scope.granted_by(&caller.scopes))
    {
        None => Ok(()),
        Some(scope) => Err(Error::new(
            ErrorCode::Forbidden,
            format!("you cannot {to} {scope}: your token does not hold it"),
        )
        .with_detail("required_scope", scope.as_str())),
    }
}
