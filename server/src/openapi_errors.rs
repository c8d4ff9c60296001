//! The error responses every operation of a service shares, added to the
//! document the annotations produce in one place (both services use it).

use utoipa::openapi::path::Operation;
use utoipa::openapi::response::ResponseBuilder;
use utoipa::openapi::{Content, OpenApi, Ref, RefOr};

/// What a service's errors look like and when they happen.
#[derive(Debug)]
pub struct ErrorResponses<'a> {
    /// Statuses any operation can answer, with their descriptions.
    pub always: &'a [(&'a str, &'a str)],
    /// Statuses any operation that reads a body can answer.
    pub with_body: &'a [(&'a str, &'a str)],
    /// The media types of an error body; each carries `schema`.
    pub media_types: &'a [&'a str],
    /// The name of the error body's schema component.
    pub schema: &'a str,
}

impl ErrorResponses<'_> {
    /// Adds the shared statuses to every operation, and the error body to
    /// every 4xx/5xx response that has none.
    pub fn apply(&self, openapi: &mut OpenApi) {
        for item in openapi.paths.paths.values_mut() {
            let operations: [&mut Option<Operation>; 5] = [
                &mut item.get,
                &mut item.put,
                &mut item.post,
                &mut item.delete,
                &mut item.patch,
            ];
            for operation in operations.into_iter().flatten() {
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
                            let schema = RefOr::Ref(Ref::from_schema_name(self.schema));
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
}
