//! The pet store's half of the one text policy: a control character in any
//! text of a body, in JSON, XML or a form, is 422 naming the field, and
//! nothing is stored.

use end_to_end_tests::{Db, TestServer, http, on_every_database, send, send_json};
use serde_json::json;

on_every_database!(
    control_characters_are_422_in_every_format_and_change_nothing,
    text_from_a_query_follows_the_policy_too,
);

async fn control_characters_are_422_in_every_format_and_change_nothing(db: Db) {
    let server = TestServer::start(db).await;
    let (status, _, refused) =
        send_json(server.post_json("/v2/pet", json!({"name": "Rex\u{1b}[2J", "photoUrls": []})))
            .await;
    assert_eq!(status, 422, "{refused}");
    assert_eq!(refused["type"], "VALIDATION_FAILED");
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .starts_with("name holds the control character U+001B"),
        "{refused}"
    );
    let (status, _, refused) = send_json(server.post_json(
        "/v2/pet",
        json!({"name": "Rex", "photoUrls": [], "tags": [{"name": "a\u{7}"}]}),
    ))
    .await;
    assert_eq!(status, 422, "{refused}");
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .starts_with("tags.0.name"),
        "{refused}"
    );
    let (status, _, refused) = send_json(
        http()
            .post(server.at("/v2/pet"))
            .header("content-type", "application/x-www-form-urlencoded")
            .body("name=Rex%1B%5D0%3Bx%07&photoUrls=a"),
    )
    .await;
    assert_eq!(status, 422, "{refused}");
    let (status, _, refused) = send_json(
        http()
            .post(server.at("/v2/pet"))
            .header("content-type", "application/xml")
            .body("<pet><name>Rex&#x1b;[2J</name><photoUrls></photoUrls></pet>"),
    )
    .await;
    assert!(status == 422 || status == 400, "{status} {refused}");
    let (status, _, refused) = send_json(server.post_json(
        "/v2/user",
        json!({"username": "mallory", "firstName": "Mal\r\nlory", "password": "long-enough-1"}),
    ))
    .await;
    assert_eq!(status, 422, "{refused}");
    assert_eq!(server.count("pets").await, 0);
    assert_eq!(server.count("users").await, 0);
    let (status, _, _) = send(server.post_json(
        "/v2/pet",
        json!({"name": "Rex\tTab", "photoUrls": []}).to_string(),
    ))
    .await;
    assert_eq!(status, 422, "a pet's name is one line");
    server.stop().await;
}

/// updatePetWithForm takes a name from the query (official v3), and
/// uploadFile its metadata: the same policy, the field named.
async fn text_from_a_query_follows_the_policy_too(db: Db) {
    let server = TestServer::start(db).await;
    let (status, _, pet) =
        send_json(server.post_json("/v2/pet", json!({"name": "Rex", "photoUrls": []}))).await;
    assert_eq!(status, 200, "{pet}");
    let id = pet["id"].as_i64().unwrap();
    let (status, _, refused) =
        send_json(http().post(server.at(&format!("/v2/pet/{id}?name=Max%1B%5B2J")))).await;
    assert_eq!(status, 422, "{refused}");
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .starts_with("name holds"),
        "{refused}"
    );
    let (status, _, refused) = send_json(
        http()
            .post(server.at(&format!(
                "/v2/pet/{id}/uploadImage?additionalMetadata=a%07b"
            )))
            .header("content-type", "application/octet-stream")
            .body(end_to_end_tests::TINY_PNG.to_vec()),
    )
    .await;
    assert_eq!(status, 422, "{refused}");
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .starts_with("additionalMetadata holds"),
        "{refused}"
    );
    let (_, _, stored) = send_json(http().get(server.at(&format!("/v2/pet/{id}")))).await;
    assert_eq!(
        (stored["name"].clone(), stored["photoUrls"].clone()),
        (json!("Rex"), json!([]))
    );
    server.stop().await;
}
