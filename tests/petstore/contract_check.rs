//! The SDK knows its contract: `check_contract()` against the server (the
//! same profile), and against stand-ins serving a profile that gained an
//! operation (compatible) and one that lost one (incompatible). Every
//! answer names its document's version in `API-Version`.

use end_to_end_tests::{Db, TestServer, header, http};
use petstore_portfolio_client::contract::ContractCheck;
use petstore_portfolio_client::petstore;
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

#[tokio::test]
async fn the_server_speaks_the_sdks_contract_and_says_which() {
    let server = TestServer::start(Db::Sqlite).await;
    let check = server.petstore().check_contract().await.unwrap();
    assert_eq!(
        check,
        ContractCheck::Same {
            version: "1.0.27".to_owned()
        }
    );
    let check = server.portfolio().check_contract().await.unwrap();
    assert_eq!(
        check,
        ContractCheck::Same {
            version: "2.1".to_owned()
        }
    );
    for (path, version) in [
        ("/v2/store/inventory", "1.0.27"),
        ("/v2/pet/987654", "1.0.27"),
        ("/api/projects", "2.1"),
    ] {
        let answer = http().get(server.at(path)).send().await.unwrap();
        assert_eq!(
            header(answer.headers(), "api-version"),
            Some(version),
            "{path}"
        );
    }
    server.stop().await;
}

/// A stand-in that serves the pet store's profile as `change` leaves it.
async fn serving_profile(change: impl FnOnce(&mut Value)) -> MockServer {
    let mut profile: Value =
        serde_json::from_str(include_str!("../../openapi/profiles/petstore.client.json")).unwrap();
    change(&mut profile);
    profile["info"]["version"] = json!("1.1.0");
    let stand_in = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/openapi/petstore.client.json"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("etag", "\"another\"")
                .set_body_json(profile),
        )
        .mount(&stand_in)
        .await;
    stand_in
}

#[tokio::test]
async fn a_server_that_added_an_operation_is_compatible_one_that_lost_one_is_not() {
    let newer = serving_profile(|profile| {
        profile["paths"]["/pet/{petId}/vaccinations"] = json!({"get": {
            "operationId": "listVaccinations",
            "responses": {"200": {"description": "ok"}}
        }});
    })
    .await;
    let client = petstore::ClientBuilder::new(newer.uri()).build().unwrap();
    assert_eq!(
        client.check_contract().await.unwrap(),
        ContractCheck::Compatible {
            client_version: "1.0.27".to_owned(),
            server_version: "1.1.0".to_owned(),
            added: vec!["list_vaccinations (GET /v2/pet/{petId}/vaccinations)".to_owned()],
        }
    );

    let older = serving_profile(|profile| {
        let paths = profile["paths"].as_object_mut().unwrap();
        paths.remove("/store/inventory");
    })
    .await;
    let client = petstore::ClientBuilder::new(older.uri()).build().unwrap();
    match client.check_contract().await.unwrap() {
        ContractCheck::Incompatible { missing, .. } => {
            assert_eq!(missing, ["get_inventory (GET /v2/store/inventory)"]);
        }
        other => panic!("{other:?}"),
    }
}

/// An answer the SDK cannot read, from a server that names another version
/// of the document: the error says both.
#[tokio::test]
async fn a_decode_error_names_both_versions() {
    let stand_in = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v2/store/inventory"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("api-version", "9.0")
                .set_body_json(json!(["not", "a", "map"])),
        )
        .mount(&stand_in)
        .await;
    let client = petstore::ClientBuilder::new(stand_in.uri())
        .build()
        .unwrap();
    let error = client.get_inventory().send().await.unwrap_err();
    assert!(
        matches!(error, petstore_portfolio_client::Error::Decode { .. }),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(
        message
            .contains("this client speaks version 1.0.27 of the document, the server version 9.0"),
        "{message}"
    );
}
