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
    match scopes
        .iter()
        .find(|scope| !scope.granted_by(&caller.scopes))
    {
        None => Ok(()),
        Some(scope) => Err(Error::new(
            ErrorCode::Forbidden,
            format!("you cannot hand out the scope {scope}: your token does not hold it"),
        )
        .with_detail("required_scope", scope.as_str())),
    }
}
