//! The private operations under `/api/admin/` (DESIGN 4.2): each takes a
//! bearer token ([`super::auth::Private`]) with `admin` or the finer scope
//! it names. One module per resource.
//!
//! A caller can hand out only the scopes it holds itself (a key or client
//! made with `keys:manage` cannot be given `admin`), so that managing keys
//! is not a way to more power: [`Actor`](crate::portfolio::ops::Actor).

pub mod api_keys;
pub mod contact_submissions;
pub mod content;
pub mod key_requests;
pub mod oauth_clients;
pub mod outbox;
pub mod subscribers;
