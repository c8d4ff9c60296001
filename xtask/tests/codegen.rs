//! `cargo xtask codegen`'s client profiles and `--input` mode.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use serde_json::{Value, json};
use xtask::codegen::{self, Flavor, Request, TARGETS, workspace_root};

fn profile_of(document: &str) -> Value {
    let document = codegen::read_document(&workspace_root(), document).unwrap();
    codegen::client_profile(&document).unwrap()
}

#[test]
fn the_profile_of_a_profile_is_the_profile() {
    for target in TARGETS {
        let profile = profile_of(target.document);
        let again = codegen::client_profile(&profile).expect("a profile is a valid input");
        assert!(again == profile, "{}: the profile changed", target.document);
    }
}

#[test]
fn shared_responses_stay_shared_and_keep_only_json() {
    let profile = profile_of("openapi/petstore.yaml");
    let responses = profile["components"]["responses"]
        .as_object()
        .expect("shared responses");
    assert!(!responses.is_empty());
    for (name, response) in responses {
        if let Some(content) = response["content"].as_object() {
            assert!(
                content.len() == 1,
                "{name}: {:?}",
                content.keys().collect::<Vec<_>>()
            );
        }
    }
}

/// A small document in the shapes progenitor cannot take as they are.
fn document() -> Value {
    json!({
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "paths": {
            "/things": {
                "post": {
                    "operationId": "addThing",
                    "requestBody": {"$ref": "#/components/requestBodies/Thing"},
                    "responses": {
                        "200": {"$ref": "#/components/responses/Thing"},
                        "400": {"$ref": "#/components/responses/Problem"},
                        "default": {"description": "anything"}
                    }
                }
            }
        },
        "components": {
            "requestBodies": {"Thing": {"content": {
                "application/json": {"schema": {"$ref": "#/components/schemas/Thing"}},
                "application/xml": {"schema": {"$ref": "#/components/schemas/Thing"}}
            }}},
            "responses": {
                "Thing": {"description": "a thing", "content": {
                    "application/json": {"schema": {"$ref": "#/components/schemas/Thing"}},
                    "application/xml": {"schema": {"$ref": "#/components/schemas/Thing"}}
                }},
                "Problem": {"description": "a problem", "content": {
                    "application/json": {"schema": {"$ref": "#/components/schemas/Problem"}}
                }},
                "Unused": {"description": "unused", "content": {
                    "application/json": {"schema": {"$ref": "#/components/schemas/Unused"}}
                }}
            },
            "schemas": {
                "Thing": {"type": "object", "properties": {"name": {"type": "string"}}},
                "Problem": {"type": "object", "properties": {"message": {"type": "string"}}},
                "Unused": {"type": "string"}
            }
        }
    })
}

#[test]
fn request_body_references_are_inlined_and_unused_components_go() {
    let profile = codegen::client_profile(&document()).unwrap();
    let operation = &profile["paths"]["/things"]["post"];
    assert_eq!(
        operation["requestBody"]["content"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["application/json"]
    );
    assert_eq!(
        operation["responses"]["200"],
        json!({"$ref": "#/components/responses/Thing"})
    );
    assert!(operation["responses"].get("default").is_none());
    assert!(profile["components"].get("requestBodies").is_none());
    let components = &profile["components"];
    assert!(components["responses"].get("Unused").is_none());
    assert!(components["schemas"].get("Unused").is_none());
    assert!(components["schemas"].get("Problem").is_some());
    assert_eq!(
        components["responses"]["Thing"]["content"]
            .as_object()
            .unwrap()
            .len(),
        1
    );
    let code = codegen::generate_code(&profile, "things.yaml", Flavor::Standalone).unwrap();
    assert!(code.contains("pub fn add_thing(&self)"), "{code}");
}

#[test]
fn a_shared_response_of_another_type_is_named() {
    let mut document = document();
    document["paths"]["/things"]["post"]["responses"]["404"] = json!({"description": "none"});
    let err = codegen::client_profile(&document).unwrap_err();
    assert!(
        format!("{err:#}").contains("addThing (post /things): its error responses differ in type"),
        "{err:#}"
    );
}

#[test]
fn standalone_code_is_progenitors_own() {
    let profile = profile_of("openapi/petstore.yaml");
    let code = codegen::generate_code(&profile, "petstore.yaml", Flavor::Standalone).unwrap();
    for sdk_only in [
        "crate::transport",
        "crate::Error",
        "schemars",
        "send_generated",
    ] {
        assert!(!code.contains(sdk_only), "standalone code names {sdk_only}");
    }
    assert!(code.contains("pub fn get_pet_by_id(&self) -> builder::GetPetById"));
    assert!(code.starts_with("// @generated"));
}

#[test]
fn input_mode_reads_yaml_json_and_profiles_and_writes_both_files() {
    let dir = tempfile::tempdir().unwrap();
    let yaml = workspace_root().join("openapi/petstore.yaml");
    let request = Request {
        input: yaml.clone(),
        output: Some(dir.path().join("src/petstore.rs")),
        profile: Some(dir.path().join("petstore.client.json")),
        plain: false,
    };
    assert!(codegen::run_request(&request, false).unwrap().is_empty());
    let written_profile = std::fs::read_to_string(dir.path().join("petstore.client.json")).unwrap();
    let checked_in =
        std::fs::read_to_string(workspace_root().join("openapi/profiles/petstore.client.json"))
            .unwrap();
    assert!(
        written_profile == checked_in,
        "the same profile as checked in"
    );
    // The profile, as JSON, as input: the same code.
    let code = std::fs::read_to_string(dir.path().join("src/petstore.rs")).unwrap();
    let again = Request {
        input: dir.path().join("petstore.client.json"),
        output: Some(dir.path().join("again.rs")),
        profile: None,
        plain: false,
    };
    codegen::run_request(&again, false).unwrap();
    let code_again = std::fs::read_to_string(dir.path().join("again.rs")).unwrap();
    assert!(
        code.contains("petstore_portfolio_runtime::service_client!();"),
        "a client on the runtime"
    );
    let body = |code: &str| code.split_once("\n\n").map(|(_, body)| body.to_owned());
    assert!(body(&code) == body(&code_again), "the same client");
    // --check: fresh, then stale.
    assert!(codegen::run_request(&request, true).unwrap().is_empty());
    std::fs::write(dir.path().join("src/petstore.rs"), "// edited").unwrap();
    assert_eq!(
        codegen::run_request(&request, true).unwrap(),
        [dir.path().join("src/petstore.rs")]
    );
}

fn error_of(input: &Path) -> String {
    let request = Request {
        input: input.to_owned(),
        output: Some(input.with_extension("rs")),
        profile: None,
        plain: false,
    };
    format!("{:#}", codegen::run_request(&request, false).unwrap_err())
}

#[test]
fn errors_name_the_input() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.yaml");
    assert!(
        error_of(&missing).starts_with(&format!("cannot read {}", missing.display())),
        "{}",
        error_of(&missing)
    );
    let broken = dir.path().join("broken.json");
    std::fs::write(&broken, "{\"openapi\": ").unwrap();
    assert!(
        error_of(&broken).starts_with(&format!("{} is not valid JSON", broken.display())),
        "{}",
        error_of(&broken)
    );
    let newer = dir.path().join("newer.yaml");
    std::fs::write(
        &newer,
        "openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths: {}\nwebhooks: {}\n",
    )
    .unwrap();
    let err = error_of(&newer);
    assert!(
        err.contains(&format!(
            "{}: it says `openapi: 3.1.0`; progenitor reads OpenAPI 3.0.x only",
            newer.display()
        )),
        "{err}"
    );
    let limited = dir.path().join("limited.json");
    let mut document = document();
    document["paths"]["/things"]["post"]["parameters"] =
        json!([{"name": "session", "in": "cookie", "schema": {"type": "string"}}]);
    std::fs::write(&limited, document.to_string()).unwrap();
    let err = error_of(&limited);
    assert!(
        err.starts_with(&format!("{}: the client profile breaks", limited.display()))
            && err.contains("addThing (post /things): cookie parameters are not supported"),
        "{err}"
    );
}

#[test]
fn input_mode_asks_where_to_write() {
    let request = Request {
        input: workspace_root().join("openapi/petstore.yaml"),
        output: None,
        profile: None,
        plain: false,
    };
    let err = codegen::run_request(&request, false)
        .unwrap_err()
        .to_string();
    assert!(err.contains("--output"), "{err}");
}

#[test]
fn ids_marked_x_sdk_id_become_one_named_schema() {
    let profile = profile_of("openapi/petstore.yaml");
    let pet_id = &profile["components"]["schemas"]["PetId"];
    assert_eq!(pet_id["minimum"], 1, "{pet_id}");
    let order = &profile["components"]["schemas"]["Order"]["properties"];
    assert_eq!(
        order["petId"]["allOf"][0]["$ref"],
        "#/components/schemas/PetId"
    );
    let pet = &profile["components"]["schemas"]["Pet"]["properties"];
    assert_eq!(pet["id"]["allOf"][0]["$ref"], "#/components/schemas/PetId");
    let get = &profile["paths"]["/pet/{petId}"]["get"]["parameters"][0];
    assert_eq!(get["schema"]["$ref"], "#/components/schemas/PetId", "{get}");
}

#[test]
fn an_id_that_says_more_than_an_id_is_refused() {
    let mut document = document();
    document["components"]["schemas"]["Thing"] = json!({
        "type": "object",
        "properties": {"owner": {"type": "integer", "nullable": true, "x-sdk-id": "Pet"}}
    });
    let error = codegen::client_profile(&document).unwrap_err();
    let text = format!("{error:#}");
    assert!(
        text.contains("x-sdk-id") && text.contains("nullable"),
        "{text}"
    );
}
