//! Small helpers shared by the pet store tests.

use end_to_end_tests::send;
use petstore_portfolio_client::petstore::{Client, Error, types};

/// A pet with a name, a category, one photo URL, and the given tags.
pub fn pet(name: &str, tags: &[&str]) -> types::Pet {
    types::Pet {
        id: None,
        name: name.parse().expect("a pet name"),
        category: Some(types::Category {
            id: Some(1),
            name: Some("Dogs".parse().expect("a category name")),
        }),
        photo_urls: vec!["https://example.test/a.png".to_owned()],
        tags: tags
            .iter()
            .map(|t| types::Tag {
                id: None,
                name: Some(t.parse().expect("a tag name")),
            })
            .collect(),
        status: None,
    }
}

/// Adds `pet`; returns the pet as stored.
pub async fn add_pet(client: &Client, pet: types::Pet) -> types::Pet {
    client
        .add_pet()
        .body(pet)
        .send()
        .await
        .expect("addPet")
        .into_inner()
}

/// Adds a pet named `name` with `tags`; returns its id.
pub async fn add_named_pet(client: &Client, name: &str, tags: &[&str]) -> u64 {
    let added = add_pet(client, pet(name, tags)).await;
    added.id.expect("the added pet has an id").get()
}

/// The pet with this id, which must exist.
pub async fn get_pet(client: &Client, id: u64) -> types::Pet {
    client
        .get_pet_by_id()
        .pet_id(id)
        .send()
        .await
        .expect("getPetById")
        .into_inner()
}

/// The names of the pets, in order.
pub fn names(pets: &[types::Pet]) -> Vec<String> {
    pets.iter().map(|p| p.name.to_string()).collect()
}

/// The names of the pets with one of these tags.
pub async fn names_by_tags(client: &Client, tags: &[&str]) -> Vec<String> {
    let found = client
        .find_pets_by_tags()
        .tags(tags.iter().map(|&t| t.to_owned()).collect::<Vec<_>>())
        .send()
        .await
        .expect("findPetsByTags");
    names(&found)
}

/// The inventory: pets per status.
pub async fn inventory(client: &Client) -> std::collections::HashMap<String, i32> {
    client
        .get_inventory()
        .send()
        .await
        .expect("getInventory")
        .into_inner()
}

/// The status and `ApiResponse` of an error the server answered.
pub fn api_error<T>(result: Result<T, Error>) -> (u16, types::ApiResponse) {
    match result {
        Ok(_) => panic!("expected an error, got a success"),
        Err(error) => match error.api() {
            // The ApiResponse the server answered, as the SDK reads it.
            Some(answer) => (
                answer.status().as_u16(),
                types::ApiResponse {
                    code: Some(i32::from(answer.status().as_u16())),
                    type_: Some(answer.code().to_owned()),
                    message: Some(answer.message().to_owned()),
                },
            ),
            None => panic!("expected an ApiResponse, got {error:?}"),
        },
    }
}

/// Asserts that the SDK call failed with `status` and an `ApiResponse` of
/// that code and `type` (`kind`), with a message; returns the `ApiResponse`.
pub fn assert_api_error<T>(
    result: Result<T, Error>,
    status: u16,
    kind: &str,
) -> types::ApiResponse {
    let (got, body) = api_error(result);
    assert_eq!(got, status, "{body:?}");
    assert_eq!(body.code, Some(i32::from(status)), "{body:?}");
    assert_eq!(body.type_.as_deref(), Some(kind), "{body:?}");
    assert!(
        body.message.as_deref().is_some_and(|m| !m.is_empty()),
        "{body:?}"
    );
    body
}

/// Parses a JSON error body and checks its shape.
pub fn json_error(status: u16, content_type: &str, text: &str, kind: &str) -> serde_json::Value {
    assert!(
        content_type.starts_with("application/json"),
        "{status} {content_type}: {text}"
    );
    let body: serde_json::Value =
        serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"));
    assert_eq!(body["code"], serde_json::json!(status), "{text}");
    assert_eq!(body["type"], serde_json::json!(kind), "{text}");
    assert!(
        body["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{text}"
    );
    body
}

/// Sends a raw request and asserts that it is refused with `status` and a
/// JSON `ApiResponse` of type `kind`; returns that body.
pub async fn assert_refused(
    request: reqwest::RequestBuilder,
    status: u16,
    kind: &str,
) -> serde_json::Value {
    let (got, content_type, text) = send(request).await;
    assert_eq!(got, status, "{kind}: {text}");
    json_error(got, &content_type, &text, kind)
}
