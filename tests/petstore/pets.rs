//! The `pet` operations, their rules and their errors.

use end_to_end_tests::{Db, TestServer, on_every_database};
use petstore_portfolio_client::petstore::types::{self, PetStatus};
use serde_json::json;

use crate::support::{api_error, assert_error, http, json_error, pet, send};

on_every_database!(
    add_then_get_pet,
    add_pet_with_existing_id_replaces_it,
    update_pet_replaces_and_needs_an_existing_pet,
    find_pets_by_status_forms,
    find_pets_by_tags_returns_each_pet_once,
    update_pet_with_form_by_query_and_by_body,
    delete_pet_then_it_is_gone,
    bad_pet_input_is_refused_and_changes_nothing,
    concurrent_adds_get_distinct_ids,
    concurrent_writes_that_fail_do_not_block_others,
);

async fn add_then_get_pet(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    let added = client
        .add_pet()
        .body(pet("Rex", &["good"]))
        .send()
        .await
        .map(|r| r.into_inner());
    let added = added.unwrap_or_else(|e| panic!("addPet: {e}"));
    let id = added
        .id
        .unwrap_or_else(|| panic!("no id assigned: {added:?}"));
    assert!(id > 0);
    assert_eq!(
        added.status,
        Some(PetStatus::Available),
        "status defaults to available"
    );

    let fetched = client.get_pet_by_id().pet_id(id as u64).send().await;
    let fetched = fetched
        .unwrap_or_else(|e| panic!("getPetById: {e}"))
        .into_inner();
    assert_eq!(fetched.name.as_str(), "Rex");
    assert_eq!(fetched.tags.len(), 1);
    assert_eq!(
        fetched.category.and_then(|c| c.name).map(|n| n.to_string()),
        Some("Dogs".into())
    );
    assert_eq!(
        fetched.photo_urls,
        vec!["https://example.test/a.png".to_owned()]
    );

    // Unknown properties are ignored, whatever they hold.
    let (status, _, text) = send(
        http()
            .post(server.at("/v2/pet"))
            .header("content-type", "application/json")
            .body(
                json!({"name": "Odd", "photoUrls": [], "extra": null, "more": [[1]]}).to_string(),
            ),
    )
    .await;
    assert_eq!(status, 200, "{text}");

    let (status, body) = api_error(client.get_pet_by_id().pet_id(id as u64 + 1000).send().await);
    assert_eq!(status, 404);
    assert_error(&body, 404, "NOT_FOUND");
    server.stop().await;
}

async fn add_pet_with_existing_id_replaces_it(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    let mut first = pet("Tom", &[]);
    first.id = Some(42);
    let added = client
        .add_pet()
        .body(first)
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(added.id, Some(42), "the client's id is kept");

    let mut second = pet("Jerry", &["mouse"]);
    second.id = Some(42);
    second.status = Some(PetStatus::Sold);
    client
        .add_pet()
        .body(second)
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let fetched = client
        .get_pet_by_id()
        .pet_id(42)
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(fetched.name.as_str(), "Jerry");
    assert_eq!(fetched.status, Some(PetStatus::Sold));

    // Server-chosen ids step over client-chosen ones, and a client taking the
    // largest id does not exhaust them.
    let mut highest = pet("Max", &[]);
    highest.id = Some(9_007_199_254_740_991);
    client
        .add_pet()
        .body(highest)
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let mut ids = Vec::new();
    for name in ["Spike", "Tyke"] {
        let next = client
            .add_pet()
            .body(pet(name, &[]))
            .send()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        ids.push(next.id.unwrap_or_default());
    }
    assert!(
        ids.iter().all(|id| *id > 0 && *id != 42 && *id < 100),
        "{ids:?}"
    );
    assert_ne!(ids[0], ids[1]);
    server.stop().await;
}

async fn update_pet_replaces_and_needs_an_existing_pet(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    let added = client
        .add_pet()
        .body(pet("Rex", &["a", "b"]))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let mut changed = added.into_inner();
    changed.name = "Rex II".parse().unwrap_or_else(|e| panic!("{e}"));
    changed.tags.clear();
    changed.status = Some(PetStatus::Pending);
    let updated = client
        .update_pet()
        .body(changed.clone())
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(updated.name.as_str(), "Rex II");
    let id = changed.id.unwrap_or_default() as u64;
    let fetched = client
        .get_pet_by_id()
        .pet_id(id)
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(fetched.tags.is_empty());
    assert_eq!(fetched.status, Some(PetStatus::Pending));
    // The tag index follows the replacement.
    let by_tag = client
        .find_pets_by_tags()
        .tags(vec!["a".to_owned()])
        .send()
        .await;
    assert!(by_tag.unwrap_or_else(|e| panic!("{e}")).is_empty());

    let mut missing = changed.clone();
    missing.id = Some(9999);
    let (status, body) = api_error(client.update_pet().body(missing).send().await);
    assert_eq!(status, 404);
    assert_error(&body, 404, "NOT_FOUND");

    let mut without_id = changed;
    without_id.id = None;
    let (status, body) = api_error(client.update_pet().body(without_id).send().await);
    assert_eq!(status, 404, "no pet has no id");
    assert_error(&body, 404, "NOT_FOUND");
    server.stop().await;
}

async fn find_pets_by_status_forms(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    for (name, status) in [
        ("A", PetStatus::Available),
        ("P", PetStatus::Pending),
        ("S", PetStatus::Sold),
        ("A2", PetStatus::Available),
    ] {
        let mut p = pet(name, &[]);
        p.status = Some(status);
        client
            .add_pet()
            .body(p)
            .send()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    }
    let names = |pets: Vec<types::Pet>| {
        pets.into_iter()
            .map(|p| p.name.to_string())
            .collect::<Vec<_>>()
    };

    let available = client
        .find_pets_by_status()
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        names(available.into_inner()),
        ["A", "A2"],
        "no status means available"
    );

    let sold = client
        .find_pets_by_status()
        .status(vec![PetStatus::Sold])
        .send()
        .await;
    assert_eq!(
        names(sold.unwrap_or_else(|e| panic!("{e}")).into_inner()),
        ["S"]
    );

    // The SDK repeats the parameter (?status=pending&status=sold).
    let two = client
        .find_pets_by_status()
        .status(vec![PetStatus::Pending, PetStatus::Sold])
        .send()
        .await;
    assert_eq!(
        names(two.unwrap_or_else(|e| panic!("{e}")).into_inner()),
        ["P", "S"]
    );

    // Comma-joined, as older clients send it.
    let (status, _, text) =
        send(http().get(server.at("/v2/pet/findByStatus?status=pending,sold"))).await;
    assert_eq!(status, 200, "{text}");
    let pets: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap_or_default();
    assert_eq!(pets.len(), 2, "{text}");

    let (status, content_type, text) =
        send(http().get(server.at("/v2/pet/findByStatus?status=lost"))).await;
    assert_eq!(status, 400);
    json_error(status, &content_type, &text, "BAD_REQUEST");
    server.stop().await;
}

async fn find_pets_by_tags_returns_each_pet_once(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    client
        .add_pet()
        .body(pet("Both", &["red", "blue"]))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    client
        .add_pet()
        .body(pet("Red", &["red"]))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    client
        .add_pet()
        .body(pet("Green", &["green"]))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));

    let found = client
        .find_pets_by_tags()
        .tags(vec!["red".to_owned(), "blue".to_owned()])
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .into_inner();
    let names: Vec<String> = found.iter().map(|p| p.name.to_string()).collect();
    assert_eq!(names, ["Both", "Red"]);

    let (status, _, text) = send(http().get(server.at("/v2/pet/findByTags?tags=green,blue"))).await;
    assert_eq!(status, 200);
    assert_eq!(
        serde_json::from_str::<Vec<serde_json::Value>>(&text)
            .map(|v| v.len())
            .ok(),
        Some(2)
    );

    let (status, content_type, text) = send(http().get(server.at("/v2/pet/findByTags"))).await;
    json_error(status, &content_type, &text, "BAD_REQUEST");
    server.stop().await;
}

async fn update_pet_with_form_by_query_and_by_body(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    let id = client
        .add_pet()
        .body(pet("Rex", &[]))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .id;
    let id = id.unwrap_or_default() as u64;

    let renamed = client
        .update_pet_with_form()
        .pet_id(id)
        .name("Max")
        .status(PetStatus::Pending)
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(renamed.name.as_str(), "Max");
    assert_eq!(renamed.status, Some(PetStatus::Pending));

    // A form body (v2 clients); it wins over the query.
    let (status, _, text) = send(
        http()
            .post(server.at(&format!("/v2/pet/{id}?name=Ignored")))
            .header("content-type", "application/x-www-form-urlencoded")
            .body("name=Buddy&status=sold"),
    )
    .await;
    assert_eq!(status, 200, "{text}");
    let fetched = client
        .get_pet_by_id()
        .pet_id(id)
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(fetched.name.as_str(), "Buddy");
    assert_eq!(fetched.status, Some(PetStatus::Sold));

    let (status, content_type, text) =
        send(http().post(server.at(&format!("/v2/pet/{id}?status=lost")))).await;
    json_error(status, &content_type, &text, "BAD_REQUEST");
    let (status, content_type, text) =
        send(http().post(server.at(&format!("/v2/pet/{id}?name=")))).await;
    json_error(status, &content_type, &text, "VALIDATION_FAILED");
    let (status, body) = api_error(
        client
            .update_pet_with_form()
            .pet_id(id + 100)
            .name("X")
            .send()
            .await,
    );
    assert_eq!(status, 404);
    assert_error(&body, 404, "NOT_FOUND");
    let unchanged = client
        .get_pet_by_id()
        .pet_id(id)
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(unchanged.name.as_str(), "Buddy");
    server.stop().await;
}

async fn delete_pet_then_it_is_gone(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    let id = client
        .add_pet()
        .body(pet("Rex", &["x"]))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .id;
    let id = id.unwrap_or_default() as u64;
    client
        .delete_pet()
        .pet_id(id)
        .send()
        .await
        .unwrap_or_else(|e| panic!("deletePet: {e}"));
    let (status, _) = api_error(client.get_pet_by_id().pet_id(id).send().await);
    assert_eq!(status, 404);
    let (status, body) = api_error(client.delete_pet().pet_id(id).send().await);
    assert_eq!(status, 404);
    assert_error(&body, 404, "NOT_FOUND");
    let by_tag = client
        .find_pets_by_tags()
        .tags(vec!["x".to_owned()])
        .send()
        .await;
    assert!(by_tag.unwrap_or_else(|e| panic!("{e}")).is_empty());
    server.stop().await;
}

async fn bad_pet_input_is_refused_and_changes_nothing(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    client
        .add_pet()
        .body(pet("Rex", &[]))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let inventory = || async {
        client
            .get_inventory()
            .send()
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .into_inner()
    };
    let before = inventory().await;

    let post_json = |body: String| {
        http()
            .post(server.at("/v2/pet"))
            .header("content-type", "application/json")
            .body(body)
    };
    let cases = [
        (
            post_json("{\"name\": \"Rex\", \"photoUrls\": [".into()),
            400,
            "BAD_REQUEST",
        ),
        (
            post_json(json!({"photoUrls": []}).to_string()),
            400,
            "BAD_REQUEST",
        ),
        (
            post_json(json!({"name": "Rex"}).to_string()),
            400,
            "BAD_REQUEST",
        ),
        (
            post_json(json!({"name": "", "photoUrls": []}).to_string()),
            422,
            "VALIDATION_FAILED",
        ),
        (
            post_json(json!({"name": "x".repeat(256), "photoUrls": []}).to_string()),
            422,
            "VALIDATION_FAILED",
        ),
        (
            post_json(json!({"name": "Rex", "photoUrls": [], "status": "lost"}).to_string()),
            400,
            "BAD_REQUEST",
        ),
        (
            post_json(json!({"id": -5, "name": "Rex", "photoUrls": []}).to_string()),
            422,
            "VALIDATION_FAILED",
        ),
        (
            post_json(json!({"id": "seven", "name": "Rex", "photoUrls": []}).to_string()),
            400,
            "BAD_REQUEST",
        ),
        (
            post_json(
                json!({"id": 9_007_199_254_740_992_i64, "name": "Rex", "photoUrls": []})
                    .to_string(),
            ),
            422,
            "VALIDATION_FAILED",
        ),
        (post_json(String::new()), 400, "BAD_REQUEST"),
        (
            post_json(json!({"name": "Rex", "photoUrls": [], "status": null}).to_string()),
            400,
            "BAD_REQUEST",
        ),
        (
            post_json(json!({"name": "Rex", "photoUrls": [], "tags": [[1, "x"]]}).to_string()),
            400,
            "BAD_REQUEST",
        ),
        (
            post_json(json!({"name": "Rex", "photoUrls": [], "category": [1, "Dogs"]}).to_string()),
            400,
            "BAD_REQUEST",
        ),
        (
            post_json(json!(["Rex", []]).to_string()),
            400,
            "BAD_REQUEST",
        ),
        (
            http()
                .post(server.at("/v2/pet"))
                .header("content-type", "text/plain")
                .body("Rex"),
            415,
            "UNSUPPORTED_MEDIA_TYPE",
        ),
        (
            http().post(server.at("/v2/pet")).body("{}"),
            415,
            "UNSUPPORTED_MEDIA_TYPE",
        ),
        (http().get(server.at("/v2/pet/abc")), 400, "BAD_REQUEST"),
        (http().get(server.at("/v2/pet/-1")), 400, "BAD_REQUEST"),
        (http().get(server.at("/v2/pet/0")), 400, "BAD_REQUEST"),
        (
            http().get(server.at("/v2/pet/99999999999999999999")),
            400,
            "BAD_REQUEST",
        ),
        (http().delete(server.at("/v2/pet/-3")), 400, "BAD_REQUEST"),
        (
            http().patch(server.at("/v2/pet")),
            405,
            "METHOD_NOT_ALLOWED",
        ),
        (http().get(server.at("/v2/pets")), 404, "NOT_FOUND"),
    ];
    for (request, expected_status, kind) in cases {
        let (status, content_type, text) = send(request).await;
        assert_eq!(status, expected_status, "{kind}: {text}");
        json_error(status, &content_type, &text, kind);
    }
    let (status, content_type, text) = send(
        http()
            .post(server.at("/v2/pet"))
            .header("content-type", "application/json")
            .body(vec![b' '; 2 * 1024 * 1024]),
    )
    .await;
    assert_eq!(status, 413, "{text}");
    json_error(status, &content_type, &text, "PAYLOAD_TOO_LARGE");

    assert_eq!(inventory().await, before, "bad input changed nothing");
    server.stop().await;
}

async fn concurrent_adds_get_distinct_ids(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    let adds = (0..24).map(|i| {
        let client = client.clone();
        async move {
            client
                .add_pet()
                .body(pet(&format!("Pet {i}"), &["crowd"]))
                .send()
                .await
        }
    });
    let mut ids: Vec<i64> = futures::future::join_all(adds)
        .await
        .into_iter()
        .map(|r| {
            r.unwrap_or_else(|e| panic!("a concurrent addPet failed: {e}"))
                .id
                .unwrap_or_default()
        })
        .collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 24, "every pet got an id of its own");
    let crowd = client
        .find_pets_by_tags()
        .tags(vec!["crowd".to_owned()])
        .send()
        .await;
    assert_eq!(crowd.unwrap_or_else(|e| panic!("{e}")).len(), 24);
    server.stop().await;
}

/// Writes that fail part-way (a taken username: the insert is tried, the
/// transaction dropped) racing with writes that read before they write (a
/// pet replaced): every one gets its proper answer, none a 500.
async fn concurrent_writes_that_fail_do_not_block_others(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    let mut rex = pet("Rex", &[]);
    rex.id = Some(7);
    client
        .add_pet()
        .body(rex.clone())
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let user = serde_json::json!({"username": "taken"}).to_string();
    let requests = (0..60).map(|i| {
        let client = client.clone();
        let raw = http();
        let (url, user, mut rex) = (server.at("/v2/user"), user.clone(), rex.clone());
        async move {
            if i % 2 == 0 {
                rex.name = format!("Rex {i}").parse().unwrap_or_else(|e| panic!("{e}"));
                client
                    .add_pet()
                    .body(rex)
                    .send()
                    .await
                    .map(|_| 200)
                    .unwrap_or_else(|e| e.status().map(|s| s.as_u16()).unwrap_or_default())
            } else {
                let response = raw
                    .post(url)
                    .header("content-type", "application/json")
                    .body(user)
                    .send()
                    .await;
                response.map(|r| r.status().as_u16()).unwrap_or_default()
            }
        }
    });
    let statuses = futures::future::join_all(requests).await;
    let replaced = statuses.iter().step_by(2).filter(|s| **s == 200).count();
    let users: Vec<u16> = statuses.iter().skip(1).step_by(2).copied().collect();
    assert_eq!(replaced, 30, "every replacement succeeds: {statuses:?}");
    assert_eq!(users.iter().filter(|s| **s == 200).count(), 1, "{users:?}");
    assert_eq!(users.iter().filter(|s| **s == 409).count(), 29, "{users:?}");
    server.stop().await;
}
