//! The error responses every operation of a service shares, added to the
//! document the annotations produce in one place (both services use it), so
//! that each handler's annotation lists only the statuses particular to it.

use utoipa::openapi::path::{Operation, ParameterIn};
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

/// Any operation that takes an `Idempotency-Key` (in either service) can
/// find its key busy or used for another request.
const KEYED: [(&str, &str); 2] = [
    (
        "409",
        "A request with this Idempotency-Key is still being processed; retry after Retry-After",
    ),
    (
        "422",
        "A field breaks its rule, or this Idempotency-Key was used with a different request",
    ),
];

/// What a service's errors look like and when they happen.
#[derive(Debug)]
pub(crate) struct ErrorResponses<'a> {
    /// Statuses any operation can answer, with their descriptions.
    pub(crate) always: &'a [(&'a str, &'a str)],
    /// Statuses any operation that reads a body can answer.
    pub(crate) with_body: &'a [(&'a str, &'a str)],
    /// Statuses any operation with a path parameter can answer (the
    /// parameter names something, which may not exist).
    pub(crate) with_path: &'a [(&'a str, &'a str)],
    /// Whether 401 and 403 follow from each operation's security: 401 for
    /// any, 403 for one whose bearer token needs a scope (the portfolio's
    /// way; the pet store documents its own).
    pub(crate) refusals_from_security: bool,
    /// The media types of an error body.
    pub(crate) media_types: &'a [&'a str],
    /// The error body's schema component: its name and schema.
    pub(crate) schema: (&'a str, fn() -> RefOr<Schema>),
}

impl ErrorResponses<'_> {
    /// Adds the error body's schema, the shared statuses to every operation
    /// (and those of a keyed operation, [`KEYED`]), and the error body to
    /// every 4xx/5xx response that has none.
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
            let with_path = if has_path_parameter(operation) {
                self.with_path
            } else {
                &[]
            };
            let keyed: &[_] = if takes_idempotency_key(operation) {
                &KEYED
            } else {
                &[]
            };
            let refusals = if self.refusals_from_security {
                refusals(operation)
            } else {
                Vec::new()
            };
            let responses = &mut operation.responses.responses;
            let shared = [self.always, with_body, with_path, keyed]
                .into_iter()
                .flatten();
            for (status, description) in shared.map(|(s, d)| (*s, (*d).to_owned())).chain(refusals)
            {
                responses.entry(status.to_owned()).or_insert_with(|| {
                    RefOr::T(ResponseBuilder::new().description(description).build())
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

fn has_path_parameter(operation: &Operation) -> bool {
    operation.parameters.iter().flatten().any(|parameter| {
        matches!(parameter, RefOr::T(parameter) if parameter.parameter_in == ParameterIn::Path)
    })
}

fn takes_idempotency_key(operation: &Operation) -> bool {
    operation
        .parameters
        .iter()
        .flatten()
        .any(|parameter| match parameter {
            RefOr::T(parameter) => parameter
                .name
                .eq_ignore_ascii_case(crate::http::idempotency::IDEMPOTENCY_KEY.as_str()),
            RefOr::Ref(_) => false,
        })
}

/// 401 and 403 as the operation's security requirements say: which
/// credentials it takes, and the scope a bearer token needs.
fn refusals(operation: &Operation) -> Vec<(&'static str, String)> {
    // The requirements' fields are private; their JSON is `{scheme: scopes}`.
    let requirements = serde_json::to_value(&operation.security).unwrap_or_default();
    let mut schemes = std::collections::BTreeMap::<String, Vec<String>>::new();
    for requirement in requirements.as_array().into_iter().flatten() {
        for (scheme, scopes) in requirement.as_object().into_iter().flatten() {
            let scopes = scopes.as_array().into_iter().flatten();
            let scopes = scopes.filter_map(|scope| scope.as_str().map(str::to_owned));
            schemes.entry(scheme.clone()).or_default().extend(scopes);
        }
    }
    let (key, token) = (schemes.contains_key("api_key"), schemes.get("oauth"));
    let credential = match (key, token.is_some()) {
        (true, true) => "API key or bearer token",
        (true, false) => "API key",
        (false, true) => "bearer token",
        (false, false) => return Vec::new(),
    };
    let mut answers = vec![("401", format!("No valid {credential}"))];
    if let Some(scope) = token.and_then(|scopes| scopes.first()) {
        let holder = if key { "key" } else { "token" };
        answers.push(("403", format!("The {holder} lacks {scope}")));
    }
    answers
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
