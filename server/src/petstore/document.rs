//! The pet store's document as the code describes it ([`openapi`], which
//! `cargo xtask check` compares with `openapi/petstore.yaml`): what the
//! handlers' annotations say, with what is true of every operation added
//! (the security schemes, `enforce` mode's credentials and errors, the
//! formats, the shared error answers); and the document a server serves
//! ([`served_document`]).

use utoipa::OpenApi;
use utoipa::openapi::security::{
    ApiKey, ApiKeyValue, Flow, HttpAuthScheme, HttpBuilder, Implicit, OAuth2, Scopes,
    SecurityScheme,
};
use utoipa::openapi::{Content, OpenApi as OpenApiDoc, Ref, RefOr};

use crate::config::{AuthMode, PetstoreConfig};
use crate::http::docs;
use crate::http::openapi_errors::{
    ErrorResponses, SERVER_FAULT, TOO_LARGE, TOO_SLOW, operations_mut,
};
use crate::petstore::{api, model, router, wire};

/// The version of `openapi/petstore.yaml`, which every answer of the pet
/// store names in `API-Version` (a test keeps it equal to the document's).
pub(crate) const DOCUMENT_VERSION: &str = "1.0.27";

/// The pet store's document as a server in auth mode `mode` serves it: in
/// `enforce`, a user's password has the length that mode asks for, so that
/// clients and validators generated from the served document know it.
pub(crate) fn served_document(mode: AuthMode) -> anyhow::Result<serde_json::Value> {
    let mut document = docs::yaml_to_json(docs::PETSTORE_YAML)?;
    if mode == AuthMode::Enforce {
        let password = document
            .pointer_mut("/components/schemas/User/properties/password")
            .and_then(serde_json::Value::as_object_mut)
            .ok_or_else(|| anyhow::anyhow!("the document has no User.password"))?;
        password.insert("minLength".to_owned(), model::MIN_PASSWORD_CHARS.into());
    }
    Ok(document)
}

/// The parts of the document that are not per operation and that the
/// contract check compares. Its prose (info, servers, the tags'
/// descriptions) is the hand-written document's alone.
#[derive(OpenApi)]
#[openapi(components(schemas(
    model::PetStatus,
    model::OrderStatus,
    model::Category,
    model::Tag,
    api::pet::PetForm,
    api::pet_image::ImageUploadForm
)))]
pub(crate) struct PetstoreDoc;

/// The security schemes the operations name.
fn add_security_schemes(openapi: &mut OpenApiDoc) {
    let components = openapi.components.get_or_insert_with(Default::default);
    let mut petstore_auth = OAuth2::new([Flow::Implicit(Implicit::new(
        "/oauth/authorize",
        Scopes::from_iter([
            ("write:pets", "modify pets in your account"),
            ("read:pets", "read your pets"),
        ]),
    ))]);
    petstore_auth.description =
        Some("Required only when the server runs with auth mode `enforce`.".to_owned());
    components.add_security_scheme("petstore_auth", SecurityScheme::OAuth2(petstore_auth));
    components.add_security_scheme(
        "api_key",
        SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
            "api_key",
            "A pet store key from the operator's CLI. Required only when the server runs \
             with auth mode `enforce`; one made with the scope `admin` also acts for any \
             user (updateUser, deleteUser, getUserByName's private fields).",
        ))),
    );
    components.add_security_scheme(
        "basic",
        SecurityScheme::Http(
            HttpBuilder::new()
                .scheme(HttpAuthScheme::Basic)
                .description(Some(
                    "A pet store user's username and password; accepted wherever \
                     `petstore_auth` is. Required only when the server runs with auth mode \
                     `enforce`.",
                ))
                .build(),
        ),
    );
    components.add_security_scheme(
        "user_session",
        SecurityScheme::Http(
            HttpBuilder::new()
                .scheme(HttpAuthScheme::Bearer)
                .description(Some("A session token from `loginUser`."))
                .build(),
        ),
    );
}

/// What `enforce` mode adds to the official security (see [`auth`]):
/// HTTP Basic wherever `petstore_auth` is, a 401 with its challenges on
/// every operation that checks a credential, and a 403 where a credential
/// may be valid and still not enough (a token without the scope, another
/// user's account). An operation whose requirements include the empty one
/// takes a credential optionally: logoutUser (which checks nothing) and
/// getUserByName (which shows private fields only to the user, and checks
/// a credential that is presented).
fn document_security(openapi: &mut OpenApiDoc) {
    use utoipa::openapi::header::HeaderBuilder;
    use utoipa::openapi::response::ResponseBuilder;
    use utoipa::openapi::schema::{ObjectBuilder, Type};
    use utoipa::openapi::security::SecurityRequirement;
    for operation in operations_mut(openapi) {
        let Some(requirements) = operation.security.as_mut() else {
            continue;
        };
        let names = |r: &SecurityRequirement| -> Vec<String> {
            serde_json::to_value(r)
                .ok()
                .and_then(|v| v.as_object().map(|o| o.keys().cloned().collect()))
                .unwrap_or_default()
        };
        let takes = |scheme: &str| {
            requirements
                .iter()
                .any(|r| names(r).iter().any(|n| n == scheme))
        };
        let optional = requirements.iter().any(|r| names(r).is_empty());
        let oauth = takes("petstore_auth");
        // logoutUser's session is optional and never refused.
        if optional && !oauth {
            continue;
        }
        if oauth {
            requirements.push(SecurityRequirement::new("basic", Vec::<String>::new()));
        }
        let responses = &mut operation.responses.responses;
        responses.entry("401".to_owned()).or_insert_with(|| {
            let challenge = HeaderBuilder::new()
                .schema(Some(ObjectBuilder::new().schema_type(Type::String)))
                .description(Some(
                    "A challenge for each scheme the operation takes: `Bearer realm=\"petstore\"`, \
                     `Basic realm=\"petstore\"` (not to scripts of web pages: a browser would \
                     answer it with a password dialog of its own), \
                     `ApiKey realm=\"petstore\", header=\"api_key\"`.",
                ))
                .build();
            RefOr::T(
                ResponseBuilder::new()
                    .description(
                        "Auth mode `enforce` only: no credential the operation takes, or one that \
                         is not valid.",
                    )
                    .header("WWW-Authenticate", challenge)
                    .build(),
            )
        });
        if oauth && !optional {
            responses.entry("403".to_owned()).or_insert_with(|| {
                RefOr::T(
                    ResponseBuilder::new()
                        .description(
                            "Auth mode `enforce` only: the credential is valid but not enough \
                             (a token without a scope the operation needs, or another user's \
                             credential on a user's account).",
                        )
                        .build(),
                )
            });
        }
    }
}

/// The formats beyond JSON. The annotations give a body's and an answer's
/// JSON face; the others follow from the code, so the document cannot
/// promise what the handlers do not do: a body comes in the formats its type
/// reads ([`wire::WireBody::FORMATS`], a pet's form being `PetForm`), and an
/// answer in JSON or XML as negotiated ([`wire::Reply`]), but getInventory's,
/// which is JSON only.
fn document_formats(openapi: &mut OpenApiDoc) {
    use wire::{BodyFormat, WireBody as _};
    let bodies: [(&str, &[BodyFormat], &str); 3] = [
        ("Pet", model::Pet::FORMATS, "PetForm"),
        ("Order", model::Order::FORMATS, "Order"),
        ("User", model::User::FORMATS, "User"),
    ];
    let schema = |name: &str| RefOr::T(Content::new(Some(RefOr::Ref(Ref::from_schema_name(name)))));
    for operation in operations_mut(openapi) {
        if let Some(RefOr::T(body)) = operation.request_body.as_mut()
            && let Some(json) = body.content.get("application/json").cloned()
            && let Some((_, formats, form)) = bodies.iter().find(|(name, ..)| {
                matches!(&json, RefOr::T(Content { schema: Some(RefOr::Ref(r)), .. })
                    if r.ref_location.ends_with(&format!("/{name}")))
            })
        {
            if formats.contains(&BodyFormat::Xml) {
                body.content
                    .insert("application/xml".to_owned(), json.clone());
            }
            if formats.contains(&BodyFormat::Form) {
                body.content
                    .insert("application/x-www-form-urlencoded".to_owned(), schema(form));
            }
        }
        if operation.operation_id.as_deref() == Some("getInventory") {
            continue;
        }
        for (status, response) in &mut operation.responses.responses {
            if let (true, RefOr::T(response)) = (status.starts_with('2'), response)
                && let Some(json) = response.content.get("application/json").cloned()
            {
                response.content.insert("application/xml".to_owned(), json);
            }
        }
    }
}

/// Every pet store error is an `ApiResponse` in JSON or XML (the error
/// middleware sees to it); any operation but `getPetImage` can answer 406
/// (an `Accept` it cannot meet), every one 500 or 503 (the request
/// timeout), and any that reads a body 413 and 415.
fn document_errors(openapi: &mut OpenApiDoc) {
    ErrorResponses {
        always: &[
            ("406", "The `Accept` header allows neither JSON nor XML."),
            SERVER_FAULT,
            ("503", "The request took longer than the server allows."),
        ],
        with_body: &[
            ("400", "Invalid input"),
            TOO_SLOW,
            TOO_LARGE,
            (
                "415",
                "The body's media type is not one the operation reads.",
            ),
            ("422", "Validation exception"),
        ],
        with_path: &[("404", "Not found")],
        refusals_from_security: false,
        media_types: &["application/json", "application/xml"],
        schema: (
            "ApiResponse",
            <wire::ApiResponse as utoipa::PartialSchema>::schema,
        ),
    }
    .apply(openapi);
    // An image is served whatever `Accept` says: no 406.
    for operation in crate::http::openapi_errors::operations_mut(openapi) {
        if operation.operation_id.as_deref() == Some("getPetImage") {
            operation.responses.responses.remove("406");
        }
    }
}

/// The pet store's document as the handlers' annotations describe it.
pub fn openapi() -> OpenApiDoc {
    let mut doc = router(&PetstoreConfig::default()).into_openapi();
    add_security_schemes(&mut doc);
    crate::http::document_rules::apply(&mut doc);
    // After the routes: they work on every operation.
    document_security(&mut doc);
    document_formats(&mut doc);
    document_errors(&mut doc);
    crate::http::limit_headers::document(
        &mut doc,
        "ApiResponse",
        &["application/json", "application/xml"],
    );
    doc
}
