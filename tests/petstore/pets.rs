//! The `pet` operations, their rules and their errors.

use end_to_end_tests::{Db, TestServer, http, on_every_database, send};
use petstore_portfolio_client::petstore::Client;
use petstore_portfolio_client::petstore::types::PetStatus;
use serde_json::json;

use crate::support::{
    add_named_pet, add_pet, api_error, assert_api_error, assert_refused, get_pet, inventory, names,
    names_by_tags, pet,
};

on_every_database!(
    adding_a_pet_assigns_an_id_and_makes_it_available,
    a_pet_reads_back_as_it_was_added,
    unknown_properties_in_a_pet_are_ignored,
    getting_a_missing_pet_is_404,
    a_client_chosen_pet_id_is_kept,
    adding_a_pet_with_a_taken_id_replaces_that_pet,
    server_chosen_ids_step_over_client_chosen_ones,
    updating_a_pet_replaces_it,
    updating_a_pet_refreshes_the_tag_index,
    updating_a_missing_pet_is_404,
    updating_a_pet_without_an_id_is_404,
    find_by_status_without_a_status_finds_available_pets,
    find_by_status_finds_one_status,
    find_by_status_takes_a_repeated_parameter,
    find_by_status_takes_comma_joined_statuses,
    find_by_an_unknown_status_is_400,
    find_by_tags_returns_each_pet_once,
    find_by_tags_takes_comma_joined_tags,
    find_by_tags_without_tags_is_400,
    a_form_update_by_query_renames_and_sets_the_status,
    a_form_update_body_wins_over_the_query,
    refused_form_updates_change_nothing,
    a_form_update_of_a_missing_pet_is_404,
    a_deleted_pet_is_gone,
    deleting_a_missing_pet_is_404,
    a_deleted_pet_leaves_the_tag_index,
    malformed_pet_bodies_are_400_and_change_nothing,
    invalid_pet_fields_are_422_and_change_nothing,
    pet_bodies_in_other_media_types_are_415_and_change_nothing,
    an_oversized_pet_body_is_413_and_changes_nothing,
    bad_pet_ids_in_the_path_are_400,
    an_unknown_method_on_pets_is_405,
    unknown_pet_store_routes_are_404,
    concurrent_adds_get_distinct_ids,
    concurrent_writes_that_fail_do_not_block_others,
    every_kind_of_write_is_seen_by_the_next_read,
);

async fn adding_a_pet_assigns_an_id_and_makes_it_available(db: Db) {
    let server = TestServer::start(db).await;
    let added = add_pet(&server.petstore(), pet("Rex", &["good"])).await;
    assert!(
        added.id.is_some_and(|id| id.get() > 0),
        "an id is assigned: {added:?}"
    );
    assert_eq!(
        added.status,
        Some(PetStatus::Available),
        "status defaults to available"
    );
    server.stop().await;
}

async fn a_pet_reads_back_as_it_was_added(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    let id = add_named_pet(&client, "Rex", &["good"]).await;

    let fetched = get_pet(&client, id).await;
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
    server.stop().await;
}

async fn unknown_properties_in_a_pet_are_ignored(db: Db) {
    let server = TestServer::start(db).await;
    let (status, _, text) = send(server.post_json(
        "/v2/pet",
        json!({"name": "Odd", "photoUrls": [], "extra": null, "more": [[1]]}),
    ))
    .await;
    assert_eq!(status, 200, "{text}");
    server.stop().await;
}

async fn getting_a_missing_pet_is_404(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    let id = add_named_pet(&client, "Rex", &[]).await;
    assert_ne!(id, 404);
    let body = assert_api_error(
        client.get_pet_by_id().pet_id(404).send().await,
        404,
        "NOT_FOUND",
    );
    insta::allow_duplicates! {
        insta::assert_json_snapshot!(body, @r#"
        {
          "code": 404,
          "message": "pet 404 not found",
          "type": "NOT_FOUND"
        }
        "#);
    }
    server.stop().await;
}

async fn a_client_chosen_pet_id_is_kept(db: Db) {
    let server = TestServer::start(db).await;
    let mut tom = pet("Tom", &[]);
    tom.id = Some(42.try_into().unwrap());
    let added = add_pet(&server.petstore(), tom).await;
    assert_eq!(
        added.id.map(|id| id.get()),
        Some(42),
        "the client's id is kept"
    );
    server.stop().await;
}

async fn adding_a_pet_with_a_taken_id_replaces_that_pet(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    let mut tom = pet("Tom", &[]);
    tom.id = Some(42.try_into().unwrap());
    add_pet(&client, tom).await;

    let mut jerry = pet("Jerry", &["mouse"]);
    jerry.id = Some(42.try_into().unwrap());
    jerry.status = Some(PetStatus::Sold);
    add_pet(&client, jerry).await;

    let fetched = get_pet(&client, 42).await;
    assert_eq!(fetched.name.as_str(), "Jerry");
    assert_eq!(fetched.status, Some(PetStatus::Sold));
    server.stop().await;
}

/// Server-chosen ids step over client-chosen ones, and a client taking the
/// largest id does not exhaust them.
async fn server_chosen_ids_step_over_client_chosen_ones(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    for (name, id) in [("Tom", 42_u64), ("Max", 9_007_199_254_740_991)] {
        let mut chosen = pet(name, &[]);
        chosen.id = Some(id.try_into().unwrap());
        add_pet(&client, chosen).await;
    }

    let spike = add_named_pet(&client, "Spike", &[]).await;
    let tyke = add_named_pet(&client, "Tyke", &[]).await;
    let ids = [spike, tyke];
    assert!(
        ids.iter().all(|id| *id > 0 && *id != 42 && *id < 100),
        "{ids:?}"
    );
    assert_ne!(spike, tyke);

    // Right behind the sequence: the next id taken by a client is stepped
    // over, and no id is skipped that no one took.
    let last = add_named_pet(&client, "Last", &[]).await;
    for (name, id) in [("Next", last + 1), ("Later", last + 3)] {
        let id = i64::try_from(id).expect("an id");
        let mut chosen = pet(name, &[]);
        chosen.id = Some(id.try_into().unwrap());
        add_pet(&client, chosen).await;
    }
    let after = [
        add_named_pet(&client, "A", &[]).await,
        add_named_pet(&client, "B", &[]).await,
    ];
    assert_eq!(after, [last + 2, last + 4]);
    server.stop().await;
}

/// A pet named Rex, tagged `a` and `b`, changed to Rex II, untagged and
/// pending by `updatePet`; returns the updated pet's id and name.
async fn update_rex(client: &Client) -> (u64, String) {
    let mut changed = add_pet(client, pet("Rex", &["a", "b"])).await;
    changed.name = "Rex II".parse().expect("a pet name");
    changed.tags.clear();
    changed.status = Some(PetStatus::Pending);
    let id = changed.id.expect("the added pet has an id").get();
    let updated = client
        .update_pet()
        .body(changed)
        .send()
        .await
        .expect("updatePet");
    (id, updated.name.to_string())
}

async fn updating_a_pet_replaces_it(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    let (id, answered_name) = update_rex(&client).await;
    assert_eq!(answered_name, "Rex II");

    let fetched = get_pet(&client, id).await;
    assert!(fetched.tags.is_empty());
    assert_eq!(fetched.status, Some(PetStatus::Pending));
    server.stop().await;
}

async fn updating_a_pet_refreshes_the_tag_index(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    update_rex(&client).await;
    assert!(names_by_tags(&client, &["a"]).await.is_empty());
    server.stop().await;
}

async fn updating_a_missing_pet_is_404(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    let mut missing = add_pet(&client, pet("Rex", &[])).await;
    missing.id = Some(9999.try_into().unwrap());
    assert_api_error(
        client.update_pet().body(missing).send().await,
        404,
        "NOT_FOUND",
    );
    server.stop().await;
}

async fn updating_a_pet_without_an_id_is_404(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    let mut without_id = add_pet(&client, pet("Rex", &[])).await;
    without_id.id = None;
    // No pet has no id.
    assert_api_error(
        client.update_pet().body(without_id).send().await,
        404,
        "NOT_FOUND",
    );
    server.stop().await;
}

/// Adds A (available), P (pending), S (sold) and A2 (available).
async fn add_pets_of_every_status(client: &Client) {
    for (name, status) in [
        ("A", PetStatus::Available),
        ("P", PetStatus::Pending),
        ("S", PetStatus::Sold),
        ("A2", PetStatus::Available),
    ] {
        let mut p = pet(name, &[]);
        p.status = Some(status);
        add_pet(client, p).await;
    }
}

async fn find_by_status_without_a_status_finds_available_pets(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    add_pets_of_every_status(&client).await;
    let available = client
        .find_pets_by_status()
        .send()
        .await
        .expect("findPetsByStatus");
    assert_eq!(names(&available), ["A", "A2"], "no status means available");
    server.stop().await;
}

async fn find_by_status_finds_one_status(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    add_pets_of_every_status(&client).await;
    let sold = client
        .find_pets_by_status()
        .status(vec![PetStatus::Sold])
        .send()
        .await
        .expect("findPetsByStatus");
    assert_eq!(names(&sold), ["S"]);
    server.stop().await;
}

/// The SDK repeats the parameter (`?status=pending&status=sold`).
async fn find_by_status_takes_a_repeated_parameter(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    add_pets_of_every_status(&client).await;
    let two = client
        .find_pets_by_status()
        .status(vec![PetStatus::Pending, PetStatus::Sold])
        .send()
        .await
        .expect("findPetsByStatus");
    assert_eq!(names(&two), ["P", "S"]);
    server.stop().await;
}

/// Comma-joined, as older clients send it.
async fn find_by_status_takes_comma_joined_statuses(db: Db) {
    let server = TestServer::start(db).await;
    add_pets_of_every_status(&server.petstore()).await;
    let (status, _, text) =
        send(http().get(server.at("/v2/pet/findByStatus?status=pending,sold"))).await;
    assert_eq!(status, 200, "{text}");
    let pets: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap_or_default();
    assert_eq!(pets.len(), 2, "{text}");
    server.stop().await;
}

async fn find_by_an_unknown_status_is_400(db: Db) {
    let server = TestServer::start(db).await;
    let body = assert_refused(
        http().get(server.at("/v2/pet/findByStatus?status=lost")),
        400,
        "BAD_REQUEST",
    )
    .await;
    insta::allow_duplicates! {
        insta::assert_json_snapshot!(body, @r#"
        {
          "code": 400,
          "message": "unknown status \"lost\"; use available, pending or sold",
          "type": "BAD_REQUEST"
        }
        "#);
    }
    server.stop().await;
}

/// Adds Both (red, blue), Red (red) and Green (green).
async fn add_tagged_pets(client: &Client) {
    add_named_pet(client, "Both", &["red", "blue"]).await;
    add_named_pet(client, "Red", &["red"]).await;
    add_named_pet(client, "Green", &["green"]).await;
}

async fn find_by_tags_returns_each_pet_once(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    add_tagged_pets(&client).await;
    assert_eq!(
        names_by_tags(&client, &["red", "blue"]).await,
        ["Both", "Red"]
    );
    server.stop().await;
}

async fn find_by_tags_takes_comma_joined_tags(db: Db) {
    let server = TestServer::start(db).await;
    add_tagged_pets(&server.petstore()).await;
    let (status, _, text) = send(http().get(server.at("/v2/pet/findByTags?tags=green,blue"))).await;
    assert_eq!(status, 200);
    assert_eq!(
        serde_json::from_str::<Vec<serde_json::Value>>(&text)
            .map(|v| v.len())
            .ok(),
        Some(2)
    );
    server.stop().await;
}

async fn find_by_tags_without_tags_is_400(db: Db) {
    let server = TestServer::start(db).await;
    assert_refused(
        http().get(server.at("/v2/pet/findByTags")),
        400,
        "BAD_REQUEST",
    )
    .await;
    server.stop().await;
}

async fn a_form_update_by_query_renames_and_sets_the_status(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    let id = add_named_pet(&client, "Rex", &[]).await;
    let renamed = client
        .update_pet_with_form()
        .pet_id(id)
        .name("Max")
        .status(PetStatus::Pending)
        .send()
        .await
        .expect("updatePetWithForm");
    assert_eq!(renamed.name.as_str(), "Max");
    assert_eq!(renamed.status, Some(PetStatus::Pending));
    server.stop().await;
}

/// A form body, as v2 clients send it.
async fn a_form_update_body_wins_over_the_query(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    let id = add_named_pet(&client, "Rex", &[]).await;
    let (status, _, text) = send(
        http()
            .post(server.at(&format!("/v2/pet/{id}?name=Ignored")))
            .header("content-type", "application/x-www-form-urlencoded")
            .body("name=Buddy&status=sold"),
    )
    .await;
    assert_eq!(status, 200, "{text}");
    let fetched = get_pet(&client, id).await;
    assert_eq!(fetched.name.as_str(), "Buddy");
    assert_eq!(fetched.status, Some(PetStatus::Sold));
    server.stop().await;
}

async fn refused_form_updates_change_nothing(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    let id = add_named_pet(&client, "Buddy", &[]).await;
    for (query, status, kind) in [
        ("status=lost", 400, "BAD_REQUEST"),
        ("name=", 422, "VALIDATION_FAILED"),
    ] {
        let request = http().post(server.at(&format!("/v2/pet/{id}?{query}")));
        assert_refused(request, status, kind).await;
    }
    let unchanged = get_pet(&client, id).await;
    assert_eq!(unchanged.name.as_str(), "Buddy");
    assert_eq!(unchanged.status, Some(PetStatus::Available));
    server.stop().await;
}

async fn a_form_update_of_a_missing_pet_is_404(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    let id = add_named_pet(&client, "Rex", &[]).await;
    assert_api_error(
        client
            .update_pet_with_form()
            .pet_id(id + 100)
            .name("X")
            .send()
            .await,
        404,
        "NOT_FOUND",
    );
    server.stop().await;
}

/// Adds Rex, tagged `x`, and deletes it; returns its id.
async fn add_and_delete_rex(client: &Client) -> u64 {
    let id = add_named_pet(client, "Rex", &["x"]).await;
    client
        .delete_pet()
        .pet_id(id)
        .send()
        .await
        .expect("deletePet");
    id
}

async fn a_deleted_pet_is_gone(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    let id = add_and_delete_rex(&client).await;
    let (status, _) = api_error(client.get_pet_by_id().pet_id(id).send().await);
    assert_eq!(status, 404);
    server.stop().await;
}

async fn deleting_a_missing_pet_is_404(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    let id = add_and_delete_rex(&client).await;
    assert_api_error(
        client.delete_pet().pet_id(id).send().await,
        404,
        "NOT_FOUND",
    );
    server.stop().await;
}

async fn a_deleted_pet_leaves_the_tag_index(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    add_and_delete_rex(&client).await;
    assert!(names_by_tags(&client, &["x"]).await.is_empty());
    server.stop().await;
}

/// With one pet (Rex) in the store, each raw request is refused with its
/// status and type, and the store holds what it held before. Returns the
/// error bodies, in order.
async fn assert_pets_refused(
    server: &TestServer,
    cases: Vec<(reqwest::RequestBuilder, u16, &str)>,
) -> Vec<serde_json::Value> {
    let client = server.petstore();
    add_named_pet(&client, "Rex", &[]).await;
    let before = inventory(&client).await;
    let mut bodies = Vec::new();
    for (request, status, kind) in cases {
        bodies.push(assert_refused(request, status, kind).await);
    }
    assert_eq!(
        inventory(&client).await,
        before,
        "bad input changed nothing"
    );
    bodies
}

async fn malformed_pet_bodies_are_400_and_change_nothing(db: Db) {
    let server = TestServer::start(db).await;
    let bodies = [
        "{\"name\": \"Rex\", \"photoUrls\": [".to_owned(),
        json!({"photoUrls": []}).to_string(),
        json!({"name": "Rex"}).to_string(),
        json!({"name": "Rex", "photoUrls": [], "status": "lost"}).to_string(),
        json!({"id": "seven", "name": "Rex", "photoUrls": []}).to_string(),
        String::new(),
        json!({"name": "Rex", "photoUrls": [], "status": null}).to_string(),
        json!({"name": "Rex", "photoUrls": [], "tags": [[1, "x"]]}).to_string(),
        json!({"name": "Rex", "photoUrls": [], "category": [1, "Dogs"]}).to_string(),
        json!(["Rex", []]).to_string(),
    ];
    let cases = bodies
        .into_iter()
        .map(|body| (server.post_json("/v2/pet", body), 400, "BAD_REQUEST"))
        .collect();
    assert_pets_refused(&server, cases).await;
    server.stop().await;
}

async fn invalid_pet_fields_are_422_and_change_nothing(db: Db) {
    let server = TestServer::start(db).await;
    let bodies = [
        json!({"name": "", "photoUrls": []}),
        json!({"name": "x".repeat(256), "photoUrls": []}),
        json!({"id": -5, "name": "Rex", "photoUrls": []}),
        json!({"id": 9_007_199_254_740_992_i64, "name": "Rex", "photoUrls": []}),
    ];
    let cases = bodies
        .into_iter()
        .map(|body| (server.post_json("/v2/pet", body), 422, "VALIDATION_FAILED"))
        .collect();
    let answers = assert_pets_refused(&server, cases).await;
    insta::allow_duplicates! {
        insta::assert_json_snapshot!(answers[0], @r#"
        {
          "code": 422,
          "message": "name must not be empty",
          "type": "VALIDATION_FAILED"
        }
        "#);
    }
    server.stop().await;
}

async fn pet_bodies_in_other_media_types_are_415_and_change_nothing(db: Db) {
    let server = TestServer::start(db).await;
    let plain_text = http()
        .post(server.at("/v2/pet"))
        .header("content-type", "text/plain")
        .body("Rex");
    let unlabelled = http().post(server.at("/v2/pet")).body("{}");
    let cases = vec![
        (plain_text, 415, "UNSUPPORTED_MEDIA_TYPE"),
        (unlabelled, 415, "UNSUPPORTED_MEDIA_TYPE"),
    ];
    let answers = assert_pets_refused(&server, cases).await;
    insta::allow_duplicates! {
        insta::assert_json_snapshot!(answers[0], @r#"
        {
          "code": 415,
          "message": "the request body must be one of: application/json, application/xml, application/x-www-form-urlencoded",
          "type": "UNSUPPORTED_MEDIA_TYPE"
        }
        "#);
    }
    server.stop().await;
}

async fn an_oversized_pet_body_is_413_and_changes_nothing(db: Db) {
    let server = TestServer::start(db).await;
    let two_megabytes = http()
        .post(server.at("/v2/pet"))
        .header("content-type", "application/json")
        .body(vec![b' '; 2 * 1024 * 1024]);
    assert_pets_refused(&server, vec![(two_megabytes, 413, "PAYLOAD_TOO_LARGE")]).await;
    server.stop().await;
}

async fn bad_pet_ids_in_the_path_are_400(db: Db) {
    let server = TestServer::start(db).await;
    let body = assert_refused(http().get(server.at("/v2/pet/abc")), 400, "BAD_REQUEST").await;
    insta::allow_duplicates! {
        insta::assert_json_snapshot!(body, @r#"
        {
          "code": 400,
          "message": "Invalid URL: Cannot parse `abc` to a `i64`",
          "type": "BAD_REQUEST"
        }
        "#);
    }
    for request in [
        http().get(server.at("/v2/pet/-1")),
        http().get(server.at("/v2/pet/0")),
        http().get(server.at("/v2/pet/99999999999999999999")),
        http().delete(server.at("/v2/pet/-3")),
    ] {
        assert_refused(request, 400, "BAD_REQUEST").await;
    }
    server.stop().await;
}

async fn an_unknown_method_on_pets_is_405(db: Db) {
    let server = TestServer::start(db).await;
    let body = assert_refused(
        http().patch(server.at("/v2/pet")),
        405,
        "METHOD_NOT_ALLOWED",
    )
    .await;
    insta::allow_duplicates! {
        insta::assert_json_snapshot!(body, @r#"
        {
          "code": 405,
          "message": "this method is not allowed on this path",
          "type": "METHOD_NOT_ALLOWED"
        }
        "#);
    }
    server.stop().await;
}

async fn unknown_pet_store_routes_are_404(db: Db) {
    let server = TestServer::start(db).await;
    assert_refused(http().get(server.at("/v2/pets")), 404, "NOT_FOUND").await;
    let body = assert_refused(http().get(server.at("/v2/nowhere")), 404, "NOT_FOUND").await;
    insta::allow_duplicates! {
        insta::assert_json_snapshot!(body, @r#"
        {
          "code": 404,
          "message": "no such route; the pet store's operations are listed at /docs",
          "type": "NOT_FOUND"
        }
        "#);
    }
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
    let mut ids: Vec<_> = futures::future::join_all(adds)
        .await
        .into_iter()
        .map(|r| {
            r.expect("a concurrent addPet")
                .id
                .expect("the added pet has an id")
        })
        .collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 24, "every pet got an id of its own");
    assert_eq!(names_by_tags(&client, &["crowd"]).await.len(), 24);
    server.stop().await;
}

/// Writes that fail part-way (a taken username: the insert is tried, the
/// transaction dropped) racing with writes that read before they write (a
/// pet replaced): every one gets its proper answer, none a 500.
async fn concurrent_writes_that_fail_do_not_block_others(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    let mut rex = pet("Rex", &[]);
    rex.id = Some(7.try_into().unwrap());
    add_pet(&client, rex.clone()).await;
    let requests = (0..60).map(|i| {
        let client = client.clone();
        let user = server.post_json("/v2/user", json!({"username": "taken"}));
        let mut rex = rex.clone();
        async move {
            if i % 2 == 0 {
                rex.name = format!("Rex {i}").parse().expect("a pet name");
                client
                    .add_pet()
                    .body(rex)
                    .send()
                    .await
                    .map(|_| 200)
                    .unwrap_or_else(|e| e.status().map(|s| s.as_u16()).unwrap_or_default())
            } else {
                let response = user.send().await;
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

/// getPetById may answer from memory: after each kind of write
/// to a pet that was just read (and so is held), the next read sees it.
async fn every_kind_of_write_is_seen_by_the_next_read(db: Db) {
    let server = TestServer::start(db).await;
    let http = http();
    let (status, _, added) = end_to_end_tests::send_json(
        server.post_json("/v2/pet", json!({"name": "A", "photoUrls": []})),
    )
    .await;
    assert_eq!(status, 200, "{added}");
    let id = added["id"].as_i64().unwrap();
    let read = async || {
        let (status, _, pet) =
            end_to_end_tests::send_json(http.get(server.at(&format!("/v2/pet/{id}")))).await;
        (status, pet)
    };
    let seen = async |field: &str| {
        // Twice: the first may fill the cache, the second answers from it.
        let first = read().await.1[field].clone();
        assert_eq!(read().await.1[field], first);
        first
    };
    assert_eq!(seen("name").await, "A");

    let write = |request: reqwest::RequestBuilder| async move {
        let (status, _, body) = send(request).await;
        assert_eq!(status, 200, "{body}");
    };
    write(
        http.put(server.at("/v2/pet"))
            .json(&json!({"id": id, "name": "B", "photoUrls": []})),
    )
    .await;
    assert_eq!(seen("name").await, "B");
    write(http.post(server.at(&format!("/v2/pet/{id}?name=C")))).await;
    assert_eq!(seen("name").await, "C");
    write(server.post_json("/v2/pet", json!({"id": id, "name": "D", "photoUrls": []}))).await;
    assert_eq!(seen("name").await, "D");
    write(server.post_json(
        "/v2/store/order",
        json!({"id": 77, "petId": id, "quantity": 1}),
    ))
    .await;
    assert_eq!(seen("status").await, "pending");
    write(http.delete(server.at("/v2/store/order/77"))).await;
    assert_eq!(seen("status").await, "available");
    write(
        http.post(server.at(&format!("/v2/pet/{id}/uploadImage")))
            .header("content-type", "application/octet-stream")
            .body(end_to_end_tests::TINY_PNG),
    )
    .await;
    assert_eq!(seen("photoUrls").await.as_array().map(Vec::len), Some(1));
    write(http.delete(server.at(&format!("/v2/pet/{id}")))).await;
    assert_eq!(read().await.0, 404);
    server.stop().await;
}
