//! The portfolio service end to end, through the SDK.

mod analytics;
mod content;
mod docs;
mod example;
mod mail;
mod social;
mod support;
