//! The error responses every operation of a service shares, added to the
//! document the annotations produce in one place (both services use it), so
//! that each handler's annotation lists only the statuses particular to it.

use utoipa::openapi::path::Operation;
use utoipa::openapi::response::ResponseBuilder;
use utoipa::openapi::schema::Schema;
use utoipa::openapi::{Content, OpenApi, Ref, RefOr};

/// Any operation can fail on the server's side.
pub(crate) const SERVER_FAULT: (&str, &str) = (
    "500",
    "Something went wrong on the server; the message carries no internals.",
);

/// Any operation that reads a body can be sent too much.
pub(crate) const TOO_LARGE: (&str, &str) = ("413", "The body is larger than the server accepts.");

/// Any operation that reads a body can be sent it too slowly.
pub(crate) const TOO_SLOW: (&str, &str) = (
    "408",
    "The body arrived too slowly (the body-read timeout passed between two of its parts).",
);

/// What a service's errors look like and when they happen.
#[derive(Debug)]
pub(crate) struct ErrorResponses<'a> {
    /// Statuses any operation can answer, with their descriptions.
    pub(crate) always: &'a [(&'a str, &'a str)],
    /// Statuses any operation that reads a body can answer.
    pub(crate) with_body: &'a [(&'a str, &'a str)],
    /// The media types of an error body.
    pub(crate) media_types: &'a [&'a str],
    /// The error body's schema component: its name and schema.
    pub(crate) schema: (&'a str, fn() -> RefOr<Schema>),
}

impl ErrorResponses<'_> {
    /// Adds the error body's schema, the shared statuses to every operation,
    /// and the error body to every 4xx/5xx response that has none.
    pub(crate) fn apply(&self, openapi: &mut OpenApi) {
        let (schema_name, schema) = self.schema;
        openapi
            .components
            .get_or_insert_with(Default::default)
            .schemas
            .entry(schema_name.to_owned())
            .or_insert_with(schema);
        for operation in operations_mut(openapi) {
            let with_body = if operation.request_body.is_some() {
                self.with_body
            } else {
                &[]
            };
            let responses = &mut operation.responses.responses;
            for (status, description) in self.always.iter().chain(with_body) {
                responses.entry((*status).to_owned()).or_insert_with(|| {
                    RefOr::T(ResponseBuilder::new().description(*description).build())
                });
            }
            for (status, response) in responses.iter_mut() {
                let is_error = status.starts_with('4') || status.starts_with('5');
                if let (true, RefOr::T(response)) = (is_error, response)
                    && response.content.is_empty()
                {
                    for media_type in self.media_types {
                        let schema = RefOr::Ref(Ref::from_schema_name(schema_name));
                        response.content.insert(
                            (*media_type).to_owned(),
                            RefOr::T(Content::new(Some(schema))),
                        );
                    }
                }
            }
        }
    }
}

/// Every operation of the document.
pub(crate) fn operations_mut(openapi: &mut OpenApi) -> impl Iterator<Item = &mut Operation> {
    openapi.paths.paths.values_mut().flat_map(|item| {
        [
            &mut item.get,
            &mut item.put,
            &mut item.post,
            &mut item.delete,
            &mut item.patch,
        ]
        .into_iter()
        .flatten()
    })
}
