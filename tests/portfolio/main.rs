//! The portfolio service end to end, through the SDK.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod access;
mod admin;
mod analytics;
mod console;
mod content;
mod deprecation;
mod docs;
mod example;
mod hardening;
mod idempotency;
mod key_requests;
mod mail;
mod oauth;
mod pages;
mod rate_limit;
mod sdk;
mod social;
mod subscriber_pages;
mod support;
mod text_policy;
