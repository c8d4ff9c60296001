//! The portfolio's storage: every SQL string of the service. As in the pet
//! store, functions take the [`crate::storage::Database`] when they are a
//! transaction of their own, or a connection when the caller composes them
//! in one (a subscription and its email commit together); they return the
//! domain's types ([`super::model`]) and [`crate::storage::StoreError`].

pub(crate) mod analytics;
pub(crate) mod contact;
pub(crate) mod content;
pub(crate) mod key_requests;
pub(crate) mod notifications;
pub(crate) mod publications;
pub(crate) mod subscribers;
