//! The `store` operations: orders move pets through their statuses.

use std::time::Duration;

use end_to_end_tests::{Db, TestServer, http, on_every_database, send, wait_until};
use petstore_portfolio_client::petstore::Client;
use petstore_portfolio_client::petstore::types::{self, OrderStatus, PetStatus};
use serde_json::json;

use crate::support::{
    add_named_pet, api_error, assert_api_error, assert_refused, get_pet, inventory,
};

on_every_database!(
    placing_an_order_makes_the_pet_pending,
    an_order_reads_back_as_placed,
    deleting_an_undelivered_order_frees_the_pet,
    a_deleted_order_is_gone,
    a_delivered_order_sells_the_pet_for_good,
    an_approved_order_makes_the_pet_pending,
    an_empty_inventory_has_every_status_at_zero,
    the_inventory_counts_pets_per_status,
    the_inventory_follows_every_kind_of_pet_write,
    the_inventory_refuses_xml_in_xml,
    the_inventory_refuses_other_formats_in_json,
    ordering_a_pending_pet_is_422,
    ordering_a_missing_pet_is_422,
    a_client_chosen_order_id_is_kept,
    a_taken_order_id_is_409_and_changes_nothing,
    invalid_order_fields_are_422_and_order_nothing,
    malformed_orders_are_400_and_order_nothing,
    bad_order_ids_in_the_path_are_400,
    the_demo_data_has_ten_pets,
    the_demo_orders_match_their_pets_statuses,
    the_demo_users_can_log_in,
    demo_data_is_restored_periodically,
    racing_orders_sell_a_pet_once,
);

fn order(pet_id: u64, status: Option<OrderStatus>) -> types::Order {
    types::Order {
        id: None,
        pet_id: pet_id.try_into().expect("a pet id"),
        quantity: std::num::NonZeroU32::MIN,
        ship_date: Some(chrono::Utc::now()),
        status,
        complete: None,
    }
}

async fn place_order(client: &Client, order: types::Order) -> types::Order {
    client
        .place_order()
        .body(order)
        .send()
        .await
        .expect("placeOrder")
        .into_inner()
}

async fn delete_order(client: &Client, order: &types::Order) {
    client
        .delete_order()
        .order_id(order.id.expect("the order has an id").get())
        .send()
        .await
        .expect("deleteOrder");
}

async fn pet_status(client: &Client, id: u64) -> Option<PetStatus> {
    get_pet(client, id).await.status
}

async fn placing_an_order_makes_the_pet_pending(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    let rex = add_named_pet(&client, "Rex", &[]).await;
    let placed = place_order(&client, order(rex, None)).await;
    assert_eq!(
        placed.status,
        Some(OrderStatus::Placed),
        "status defaults to placed"
    );
    assert_eq!(placed.complete, Some(false));
    assert_eq!(pet_status(&client, rex).await, Some(PetStatus::Pending));
    server.stop().await;
}

async fn an_order_reads_back_as_placed(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    let rex = add_named_pet(&client, "Rex", &[]).await;
    let placed = place_order(&client, order(rex, None)).await;
    let fetched = client
        .get_order_by_id()
        .order_id(placed.id.expect("the order has an id").get())
        .send()
        .await
        .expect("getOrderById");
    assert_eq!(fetched.pet_id.get(), rex);
    assert_eq!(fetched.quantity.get(), 1);
    server.stop().await;
}

async fn deleting_an_undelivered_order_frees_the_pet(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    let rex = add_named_pet(&client, "Rex", &[]).await;
    let placed = place_order(&client, order(rex, None)).await;
    delete_order(&client, &placed).await;
    assert_eq!(pet_status(&client, rex).await, Some(PetStatus::Available));
    server.stop().await;
}

async fn a_deleted_order_is_gone(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    let rex = add_named_pet(&client, "Rex", &[]).await;
    let placed = place_order(&client, order(rex, None)).await;
    delete_order(&client, &placed).await;
    let order_id = placed.id.expect("the order has an id").get();
    assert_api_error(
        client.get_order_by_id().order_id(order_id).send().await,
        404,
        "NOT_FOUND",
    );
    let (status, _) = api_error(client.delete_order().order_id(order_id).send().await);
    assert_eq!(status, 404);
    server.stop().await;
}

/// A delivered order sells the pet, and deleting it leaves the pet sold.
async fn a_delivered_order_sells_the_pet_for_good(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    let rex = add_named_pet(&client, "Rex", &[]).await;
    let delivered = place_order(&client, order(rex, Some(OrderStatus::Delivered))).await;
    assert_eq!(delivered.complete, Some(true));
    assert_eq!(pet_status(&client, rex).await, Some(PetStatus::Sold));
    delete_order(&client, &delivered).await;
    assert_eq!(pet_status(&client, rex).await, Some(PetStatus::Sold));
    server.stop().await;
}

async fn an_approved_order_makes_the_pet_pending(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    let max = add_named_pet(&client, "Max", &[]).await;
    place_order(&client, order(max, Some(OrderStatus::Approved))).await;
    assert_eq!(pet_status(&client, max).await, Some(PetStatus::Pending));
    server.stop().await;
}

async fn an_empty_inventory_has_every_status_at_zero(db: Db) {
    let server = TestServer::start(db).await;
    let expected: std::collections::HashMap<String, i32> =
        [("available", 0), ("pending", 0), ("sold", 0)]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect();
    assert_eq!(
        inventory(&server.petstore()).await,
        expected,
        "every status is present, 0 where none"
    );
    server.stop().await;
}

async fn the_inventory_counts_pets_per_status(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    let a = add_named_pet(&client, "A", &[]).await;
    add_named_pet(&client, "B", &[]).await;
    place_order(&client, order(a, None)).await;
    let counts = inventory(&client).await;
    assert_eq!(counts.get("available"), Some(&1));
    assert_eq!(counts.get("pending"), Some(&1));
    assert_eq!(counts.get("sold"), Some(&0));
    server.stop().await;
}

/// Each status's pets, as `findByStatus` lists them whole.
async fn listed(server: &TestServer) -> std::collections::HashMap<String, i32> {
    let mut counts = std::collections::HashMap::new();
    for status in ["available", "pending", "sold"] {
        let (code, _, body) = send(http().get(format!(
            "{}/v2/pet/findByStatus?status={status}",
            server.url
        )))
        .await;
        assert_eq!(code, 200, "{body}");
        let pets: Vec<serde_json::Value> = serde_json::from_str(&body).expect("a list");
        counts.insert(
            status.to_owned(),
            i32::try_from(pets.len()).expect("a count"),
        );
    }
    counts
}

/// The inventory's counts are kept as pets are written, by every kind of
/// write: added (by the server's ids and the client's, far apart), replaced
/// with another status or the same, changed by a form, ordered, freed,
/// delivered, deleted. After each step they are what the lists hold.
async fn the_inventory_follows_every_kind_of_pet_write(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    let post =
        |body: serde_json::Value| send(http().post(format!("{}/v2/pet", server.url)).json(&body));
    for n in 0..40_u64 {
        let status = ["available", "pending", "sold"][usize::try_from(n % 3).expect("small")];
        let mut pet = json!({"name": format!("p{n}"), "photoUrls": [], "status": status});
        if n % 2 == 0 {
            // Client-chosen ids land in every stripe the counts are kept in.
            pet["id"] = json!(1_000_000 + n * 37);
        }
        assert_eq!(post(pet).await.0, 200);
    }
    assert_eq!(
        inventory(&client).await,
        listed(&server).await,
        "after adding"
    );

    let replace = |id: u64, status: &str| {
        send(http().put(format!("{}/v2/pet", server.url)).json(&json!({
            "id": id, "name": "replaced", "photoUrls": [], "status": status
        })))
    };
    assert_eq!(replace(1_000_000, "sold").await.0, 200);
    assert_eq!(replace(1_000_074, "pending").await.0, 200);
    assert_eq!(replace(1_000_148, "available").await.0, 200);
    assert_eq!(replace(1_000_148, "available").await.0, 200);
    let form = send(
        http()
            .post(format!("{}/v2/pet/1000222", server.url))
            .form(&[("status", "sold")]),
    )
    .await;
    assert_eq!(form.0, 200, "{}", form.2);
    assert_eq!(
        inventory(&client).await,
        listed(&server).await,
        "after replacing"
    );

    let freed = add_named_pet(&client, "Freed", &[]).await;
    let placed = place_order(&client, order(freed, None)).await;
    assert_eq!(
        inventory(&client).await,
        listed(&server).await,
        "after an order"
    );
    delete_order(&client, &placed).await;
    let sold = add_named_pet(&client, "Sold", &[]).await;
    place_order(&client, order(sold, Some(OrderStatus::Delivered))).await;
    assert_eq!(
        inventory(&client).await,
        listed(&server).await,
        "after orders"
    );

    for id in [1_000_000, 1_000_296, freed] {
        let (code, _, body) = send(http().delete(format!("{}/v2/pet/{id}", server.url))).await;
        assert_eq!(code, 200, "{body}");
    }
    let counts = inventory(&client).await;
    assert_eq!(counts, listed(&server).await, "after deleting");
    assert_eq!(counts.values().sum::<i32>(), 39, "40 + 2 added, 3 deleted");
    server.stop().await;
}

/// The inventory is JSON only; the error itself comes in the format asked for.
async fn the_inventory_refuses_xml_in_xml(db: Db) {
    let server = TestServer::start(db).await;
    let (status, content_type, text) = send(
        http()
            .get(server.at("/v2/store/inventory"))
            .header("accept", "application/xml"),
    )
    .await;
    assert_eq!(status, 406, "inventory is JSON only: {text}");
    assert_eq!(content_type, "application/xml");
    assert!(text.contains("<type>NOT_ACCEPTABLE</type>"), "{text}");
    server.stop().await;
}

async fn the_inventory_refuses_other_formats_in_json(db: Db) {
    let server = TestServer::start(db).await;
    let inventory_as = |accept: &str| {
        http()
            .get(server.at("/v2/store/inventory"))
            .header("accept", accept)
    };
    assert_refused(inventory_as("text/csv"), 406, "NOT_ACCEPTABLE").await;
    let body = assert_refused(inventory_as("text/html"), 406, "NOT_ACCEPTABLE").await;
    insta::allow_duplicates! {
        insta::assert_json_snapshot!(body, @r#"
        {
          "code": 406,
          "message": "Accept: text/html allows none of the formats this operation answers in (application/json)",
          "type": "NOT_ACCEPTABLE"
        }
        "#);
    }
    server.stop().await;
}

async fn ordering_a_pending_pet_is_422(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    let rex = add_named_pet(&client, "Rex", &[]).await;
    place_order(&client, order(rex, None)).await;
    let body = assert_api_error(
        client.place_order().body(order(rex, None)).send().await,
        422,
        "VALIDATION_FAILED",
    );
    assert!(body.message.unwrap_or_default().contains("pending"));
    server.stop().await;
}

async fn ordering_a_missing_pet_is_422(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    let rex = add_named_pet(&client, "Rex", &[]).await;
    assert_ne!(rex, 5);
    let body = assert_api_error(
        client.place_order().body(order(5, None)).send().await,
        422,
        "VALIDATION_FAILED",
    );
    assert!(
        body.message
            .as_deref()
            .unwrap_or_default()
            .contains("does not exist")
    );
    insta::allow_duplicates! {
        insta::assert_json_snapshot!(body, @r#"
        {
          "code": 422,
          "message": "pet 5 does not exist, so it cannot be ordered",
          "type": "VALIDATION_FAILED"
        }
        "#);
    }
    server.stop().await;
}

/// Places order 77 for a new pet, Max.
async fn place_order_77(client: &Client) -> types::Order {
    let mut chosen = order(add_named_pet(client, "Max", &[]).await, None);
    chosen.id = Some(77.try_into().unwrap());
    place_order(client, chosen).await
}

async fn a_client_chosen_order_id_is_kept(db: Db) {
    let server = TestServer::start(db).await;
    let first = place_order_77(&server.petstore()).await;
    assert_eq!(
        first.id.map(|id| id.get()),
        Some(77),
        "the client's id is kept"
    );
    server.stop().await;
}

async fn a_taken_order_id_is_409_and_changes_nothing(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    place_order_77(&client).await;
    let ted = add_named_pet(&client, "Ted", &[]).await;
    let mut again = order(ted, None);
    again.id = Some(77.try_into().unwrap());
    assert_api_error(
        client.place_order().body(again).send().await,
        409,
        "CONFLICT",
    );
    assert_eq!(
        pet_status(&client, ted).await,
        Some(PetStatus::Available),
        "the refused order changed nothing"
    );
    server.stop().await;
}

/// With one pet, Rex, in the store, each order that `bodies` makes of
/// Rex's id is refused with `status` and `kind`, and Rex stays available.
async fn assert_orders_refused(
    server: &TestServer,
    bodies: impl FnOnce(u64) -> Vec<serde_json::Value>,
    status: u16,
    kind: &str,
) {
    let client = server.petstore();
    let rex = add_named_pet(&client, "Rex", &[]).await;
    for body in bodies(rex) {
        assert_refused(server.post_json("/v2/store/order", body), status, kind).await;
    }
    assert_eq!(
        pet_status(&client, rex).await,
        Some(PetStatus::Available),
        "nothing was ordered"
    );
}

async fn invalid_order_fields_are_422_and_order_nothing(db: Db) {
    let server = TestServer::start(db).await;
    let bodies = |rex: u64| {
        vec![
            json!({"petId": rex, "quantity": 0}),
            json!({"petId": rex, "quantity": -2}),
            json!({"petId": 0}),
            json!({"petId": rex, "id": -1}),
        ]
    };
    assert_orders_refused(&server, bodies, 422, "VALIDATION_FAILED").await;
    server.stop().await;
}

async fn malformed_orders_are_400_and_order_nothing(db: Db) {
    let server = TestServer::start(db).await;
    let bodies = |rex: u64| {
        vec![
            json!({"quantity": 1}),
            json!({"petId": rex, "status": "lost"}),
            json!({"petId": rex, "shipDate": "yesterday"}),
        ]
    };
    assert_orders_refused(&server, bodies, 400, "BAD_REQUEST").await;
    server.stop().await;
}

async fn bad_order_ids_in_the_path_are_400(db: Db) {
    let server = TestServer::start(db).await;
    for request in [
        http().get(server.at("/v2/store/order/abc")),
        http().get(server.at("/v2/store/order/-4")),
        http().delete(server.at("/v2/store/order/0")),
    ] {
        assert_refused(request, 400, "BAD_REQUEST").await;
    }
    server.stop().await;
}

async fn start_with_demo_data(db: Db) -> TestServer {
    TestServer::start_with(db, |c| c.petstore.demo_data = true).await
}

async fn the_demo_data_has_ten_pets(db: Db) {
    let server = start_with_demo_data(db).await;
    let inventory = inventory(&server.petstore()).await;
    assert_eq!(
        inventory.values().sum::<i32>(),
        10,
        "10 sample pets: {inventory:?}"
    );
    server.stop().await;
}

async fn the_demo_orders_match_their_pets_statuses(db: Db) {
    let server = start_with_demo_data(db).await;
    let client = server.petstore();
    for order_id in 1..=3_u64 {
        let order = client.get_order_by_id().order_id(order_id).send().await;
        let order = order
            .unwrap_or_else(|e| panic!("order {order_id}: {e}"))
            .into_inner();
        let expected = match order.status {
            Some(OrderStatus::Delivered) => PetStatus::Sold,
            _ => PetStatus::Pending,
        };
        assert_eq!(
            pet_status(&client, order.pet_id.get()).await,
            Some(expected)
        );
    }
    server.stop().await;
}

async fn the_demo_users_can_log_in(db: Db) {
    let server = start_with_demo_data(db).await;
    let client = server.petstore();
    let user = client
        .get_user_by_name()
        .username("user1")
        .send()
        .await
        .expect("getUserByName");
    assert!(user.password.is_none());
    let token = client
        .login_user()
        .username("user1")
        .password("XXXXXXXXXXX")
        .send()
        .await;
    assert!(token.is_ok(), "the sample users can log in");
    server.stop().await;
}

async fn demo_data_is_restored_periodically(db: Db) {
    let server = TestServer::start_with(db, |c| {
        c.petstore.demo_data = true;
        c.petstore.demo_reset_interval_secs = Some(1);
    })
    .await;
    let client = server.petstore();
    client
        .delete_pet()
        .pet_id(1)
        .send()
        .await
        .expect("deletePet");
    let extra = add_named_pet(&client, "Not a sample", &[]).await;
    // A reset after both changes shows as its effect: pet 1 back and the
    // added pet gone.
    wait_until(
        Duration::from_secs(15),
        "the sample data is restored",
        async || {
            let sample_back = client.get_pet_by_id().pet_id(1).send().await.is_ok();
            let extra_gone = client.get_pet_by_id().pet_id(extra).send().await.is_err();
            sample_back && extra_gone
        },
    )
    .await;
    server.stop().await;
}

async fn racing_orders_sell_a_pet_once(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    let rex = add_named_pet(&client, "Rex", &[]).await;
    let attempts = (0..12).map(|_| {
        let client = client.clone();
        async move { client.place_order().body(order(rex, None)).send().await }
    });
    let results = futures::future::join_all(attempts).await;
    let placed = results.iter().filter(|r| r.is_ok()).count();
    assert_eq!(placed, 1, "exactly one order wins the pet");
    for result in results.into_iter().filter(Result::is_err) {
        assert_api_error(result, 422, "VALIDATION_FAILED");
    }
    assert_eq!(server.count("orders").await, 1);
    assert_eq!(pet_status(&client, rex).await, Some(PetStatus::Pending));
    server.stop().await;
}
