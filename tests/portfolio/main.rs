//! The portfolio service end to end, through the SDK.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod access;
mod analytics;
mod content;
mod docs;
mod example;
mod hardening;
mod mail;
mod oauth;
mod rate_limit;
mod social;
mod support;
