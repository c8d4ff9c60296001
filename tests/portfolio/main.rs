//! The portfolio service end to end, through the SDK.

mod analytics;
mod content;
mod docs;
mod example;
mod mail;
mod rate_limit;
mod social;
mod support;
