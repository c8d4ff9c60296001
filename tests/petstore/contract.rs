//! The contract pipeline, under `cargo test`: the document, the handlers'
//! annotations and the checked-in SDK agree, and the check does catch drift.

use serde_json::{Value, json};
use xtask::codegen::{self, workspace_root};
use xtask::{SERVICES, check_service, contract};

#[test]
fn documents_and_code_agree() {
    let root = workspace_root();
    for service in SERVICES {
        let drifts = check_service(&root, service).expect("the contract check runs");
        let lines: Vec<String> = drifts.iter().map(ToString::to_string).collect();
        assert!(
            lines.is_empty(),
            "{} drifted from {} (see `cargo xtask check`):\n{}",
            service.name,
            service.document,
            lines.join("\n")
        );
    }
}

#[test]
fn the_checked_in_sdk_is_fresh() {
    let stale = codegen::stale_files(&workspace_root()).expect("the SDK freshness check runs");
    assert!(
        stale.is_empty(),
        "stale SDK files {stale:?}: run `cargo xtask codegen` and commit the result"
    );
}

fn petstore_documents() -> (Value, Value) {
    let document = codegen::read_document(&workspace_root(), "openapi/petstore.yaml")
        .expect("openapi/petstore.yaml");
    let code = serde_json::to_value(petstore_portfolio_server::petstore_openapi())
        .expect("the code's document as JSON");
    (document, code)
}

fn drift_lines(document: &Value, code: &Value) -> Vec<String> {
    contract::compare(document, code)
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn check_catches_a_changed_parameter_type() {
    let (mut document, code) = petstore_documents();
    document["paths"]["/pet/{petId}"]["get"]["parameters"][0]["schema"] = json!({"type": "string"});
    let lines = drift_lines(&document, &code);
    assert!(
        lines.iter().any(|l| l.starts_with("/operations/get ~1pet~1{petId}/parameters/path petId/schema/type: document \"string\" | code \"integer\"")),
        "{lines:#?}"
    );
}

#[test]
fn check_catches_an_extra_response() {
    let (mut document, code) = petstore_documents();
    document["paths"]["/store/inventory"]["get"]["responses"]["418"] =
        json!({"description": "teapot"});
    let lines = drift_lines(&document, &code);
    assert_eq!(
        lines,
        [
            "/operations/get ~1store~1inventory/responses/418: document {\"content\":{},\"headers\":{}} | code (absent)"
        ]
    );
}

#[test]
fn check_catches_a_missing_operation() {
    let (mut document, code) = petstore_documents();
    if let Some(item) = document["paths"]["/user/logout"].as_object_mut() {
        item.remove("get");
    }
    let lines = drift_lines(&document, &code);
    assert_eq!(lines.len(), 1, "{lines:#?}");
    assert!(
        lines[0].starts_with("/operations/get ~1user~1logout: document (absent) | code {"),
        "{lines:#?}"
    );
}

#[test]
fn check_catches_a_changed_schema_field() {
    let (mut document, code) = petstore_documents();
    document["components"]["schemas"]["Order"]["properties"]["quantity"]["format"] = json!("int64");
    document["components"]["schemas"]["Pet"]["required"] = json!(["name"]);
    let lines = drift_lines(&document, &code);
    assert_eq!(
        lines,
        [
            "/schemas/Order/properties/quantity/format: document \"int64\" | code \"int32\"",
            "/schemas/Pet/required: document [\"name\"] | code [\"name\",\"photoUrls\"]",
        ]
    );
}

#[test]
fn check_ignores_prose() {
    let (mut document, code) = petstore_documents();
    document["paths"]["/pet"]["post"]["summary"] = json!("Something else entirely");
    document["components"]["schemas"]["Pet"]["description"] = json!("reworded");
    assert!(drift_lines(&document, &code).is_empty());
}

fn petstore_client_profile() -> Value {
    let (document, _) = petstore_documents();
    codegen::client_profile(&document).expect("the client profile")
}

/// The media types of an operation's request body in the client profile.
fn request_media_types(profile: &Value, path: &str, method: &str) -> Vec<String> {
    let operation = codegen::profile_operation_of(profile, path, method)
        .unwrap_or_else(|| panic!("no {method} {path} in the profile"));
    operation["requestBody"]["content"]
        .as_object()
        .map(|c| c.keys().cloned().collect())
        .unwrap_or_default()
}

#[test]
fn the_client_profile_sends_pets_as_json() {
    let profile = petstore_client_profile();
    assert_eq!(
        request_media_types(&profile, "/pet", "post"),
        ["application/json"]
    );
}

#[test]
fn the_client_profile_uploads_images_as_octet_streams() {
    let profile = petstore_client_profile();
    assert_eq!(
        request_media_types(&profile, "/pet/{petId}/uploadImage", "post"),
        ["application/octet-stream"]
    );
}

#[test]
fn the_client_profile_leaves_form_only_bodies_to_the_query() {
    let profile = petstore_client_profile();
    let with_form =
        codegen::profile_operation_of(&profile, "/pet/{petId}", "post").expect("updatePetWithForm");
    assert!(
        with_form.get("requestBody").is_none(),
        "a form-only body is left to the query parameters"
    );
    assert!(profile["components"]["schemas"].get("PetForm").is_none());
}

#[test]
fn the_client_profile_keeps_shared_responses_json_only() {
    let profile = petstore_client_profile();
    let responses = profile["components"]["responses"]
        .as_object()
        .expect("shared responses stay shared (progenitor follows their $ref)");
    for (name, response) in responses {
        let media: Vec<&String> = response["content"]
            .as_object()
            .map(|c| c.keys().collect())
            .unwrap_or_default();
        assert!(
            media.is_empty() || media == ["application/json"],
            "{name}: {media:?}"
        );
    }
}

#[test]
fn the_client_profile_names_what_progenitor_cannot_do() {
    let (mut document, _) = petstore_documents();
    document["paths"]["/store/inventory"]["get"]["responses"]["404"] =
        json!({"description": "no body"});
    let err = codegen::client_profile(&document)
        .map(|_| ())
        .expect_err("a profile of an operation whose errors differ in type");
    let err = format!("{err:#}");
    assert!(
        err.contains("getInventory (get /store/inventory): its error responses differ in type"),
        "{err}"
    );
}
