//! How both services speak HTTP, and nothing of either service: serving
//! connections (TCP, TLS), each service's edge, errors rendered in a
//! service's format, extractors, credentials as requests carry them, CORS,
//! compression, the request and body deadlines, where a list's next page is, what is noted of every
//! request, idempotency keys, pages for people, and the documents and their helpers.

pub(crate) mod accept;
pub(crate) mod challenges;
pub(crate) mod compression;
pub(crate) mod cors;
pub(crate) mod credentials;
pub(crate) mod deadline;
pub(crate) mod deprecation;
pub mod docs;
pub(crate) mod document_rules;
pub(crate) mod edge;
pub(crate) mod error;
pub(crate) mod extract;
pub(crate) mod html;
pub(crate) mod idempotency;
pub(crate) mod limit_headers;
pub(crate) mod next_page;
pub(crate) mod observe;
pub(crate) mod openapi_errors;
pub mod paths;
pub(crate) mod serve;
pub(crate) mod service_state;
pub(crate) mod strict_json;
pub(crate) mod tls;

use std::sync::Arc;
use std::time::Duration;

use crate::config::HttpConfig;
use crate::limits::shared_counters::SharedCounters;

/// The header each service's answers name its document's version in.
pub(crate) const API_VERSION: axum::http::HeaderName =
    axum::http::HeaderName::from_static("api-version");

/// What each service's HTTP layers take from the server: how long a
/// request may run, how long idempotency keys' answers are kept, the body
/// limit, and the replicas' shared counters (Redis) for rate limits.
#[derive(Debug, Clone)]
pub(crate) struct ServiceHttp {
    pub(crate) request_timeout: Duration,
    pub(crate) keys_kept: Duration,
    pub(crate) max_body_bytes: usize,
    pub(crate) shared_counters: Option<Arc<SharedCounters>>,
}

impl ServiceHttp {
    pub(crate) fn new(config: &HttpConfig, shared_counters: Option<Arc<SharedCounters>>) -> Self {
        ServiceHttp {
            request_timeout: Duration::from_secs(config.request_timeout_secs),
            keys_kept: config.idempotency_keys_kept(),
            max_body_bytes: config.max_body_bytes,
            shared_counters,
        }
    }
}
