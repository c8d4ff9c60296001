//! The pet store end to end: the real server, driven through the SDK (and,
//! for XML, form and multipart bodies, through raw HTTP).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod accounts;
mod auth;
mod authorize;
mod caching;
mod connections;
mod contract;
mod contract_check;
mod docs;
mod example;
mod generated_clients;
mod hardening;
mod hosts;
mod idempotency;
mod images;
mod login_limits;
mod negotiation;
mod operation;
mod pages;
mod pets;
mod rate_limit;
mod read_caches;
mod regenerate;
mod sdk;
mod sdk_hooks;
mod store;
mod support;
mod text_policy;
mod tls;
mod users;
