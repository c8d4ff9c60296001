//! The private operations under `/api/admin/`: each takes a
//! bearer token ([`super::auth::Private`]) with `admin` or the finer scope
//! it names. One module per resource.
//!
//! A caller can hand out only the scopes it holds itself (a key or client
//! made with `keys:manage` cannot be given `admin`), so that managing keys
//! is not a way to more power: [`Actor`](crate::access::ops::Actor).

pub(crate) mod api_keys;
pub(crate) mod contact_submissions;
pub(crate) mod content;
pub(crate) mod key_requests;
pub(crate) mod oauth_clients;
pub(crate) mod outbox;
pub(crate) mod subscribers;
