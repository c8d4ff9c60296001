//! How both services speak HTTP, and nothing of either service: serving
//! connections (TCP, TLS), each service's edge, errors rendered in a
//! service's format, extractors, credentials as requests carry them, CORS,
//! compression, the request and body deadlines, what is noted of every
//! request, idempotency keys, and the documents and their helpers.

pub(crate) mod challenges;
pub(crate) mod compression;
pub(crate) mod cors;
pub(crate) mod credentials;
pub(crate) mod deadline;
pub mod docs;
pub(crate) mod document_rules;
pub(crate) mod edge;
pub(crate) mod error;
pub(crate) mod extract;
pub(crate) mod idempotency;
pub(crate) mod limit_headers;
pub(crate) mod observe;
pub(crate) mod openapi_errors;
pub mod paths;
pub(crate) mod serve;
pub(crate) mod service_state;
pub(crate) mod strict_json;
pub(crate) mod tls;
