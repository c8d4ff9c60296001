//! The portfolio's handlers, one module per resource, the admin
//! operations under `/api/admin/`, and the extractors that judge
//! credentials. A handler reads the request, calls a read or an operation,
//! and renders.

pub(crate) mod admin;
pub(crate) mod analytics;
pub(crate) mod auth;
/// The owner's console: pages for people, not the API.
pub(crate) mod console;
pub(crate) mod contact;
pub(crate) mod content;
pub(crate) mod health;
pub(crate) mod key_requests;
pub(crate) mod newsletter;
pub(crate) mod notify;
pub(crate) mod oauth;
pub(crate) mod paging;
pub(crate) mod social;
pub(crate) mod static_files;
