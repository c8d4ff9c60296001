//! The `store` operations: orders move pets through their statuses.

use end_to_end_tests::{Db, TestServer, on_every_database};
use petstore_portfolio_client::petstore::types::{self, OrderStatus, PetStatus};
use serde_json::json;

use crate::support::{api_error, assert_error, http, json_error, pet, send};

on_every_database!(
    orders_move_pets_through_their_statuses,
    inventory_counts_every_status,
    orders_for_unavailable_pets_are_refused,
    bad_order_input_is_refused_and_changes_nothing,
    demo_data_is_consistent,
    demo_data_is_restored_periodically,
    racing_orders_sell_a_pet_once,
);

fn order(pet_id: i64, status: Option<OrderStatus>) -> types::Order {
    types::Order {
        id: None,
        pet_id: std::num::NonZeroU64::new(pet_id as u64).unwrap_or(std::num::NonZeroU64::MIN),
        quantity: std::num::NonZeroU32::MIN,
        ship_date: Some(chrono::Utc::now()),
        status,
        complete: None,
    }
}

async fn add_pet(server: &TestServer, name: &str) -> i64 {
    let added = server
        .petstore()
        .add_pet()
        .body(pet(name, &[]))
        .send()
        .await;
    added
        .unwrap_or_else(|e| panic!("{e}"))
        .id
        .unwrap_or_default()
}

async fn pet_status(server: &TestServer, id: i64) -> Option<PetStatus> {
    let fetched = server
        .petstore()
        .get_pet_by_id()
        .pet_id(id as u64)
        .send()
        .await;
    fetched
        .unwrap_or_else(|e| panic!("{e}"))
        .into_inner()
        .status
}

async fn orders_move_pets_through_their_statuses(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    let rex = add_pet(&server, "Rex").await;

    let placed = client.place_order().body(order(rex, None)).send().await;
    let placed = placed
        .unwrap_or_else(|e| panic!("placeOrder: {e}"))
        .into_inner();
    assert_eq!(
        placed.status,
        Some(OrderStatus::Placed),
        "status defaults to placed"
    );
    assert_eq!(placed.complete, Some(false));
    assert_eq!(pet_status(&server, rex).await, Some(PetStatus::Pending));
    let order_id = placed.id.unwrap_or_default() as u64;

    let fetched = client
        .get_order_by_id()
        .order_id(order_id)
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(fetched.pet_id.get(), rex as u64);
    assert_eq!(fetched.quantity.get(), 1);

    // Deleting an order that was not delivered frees the pet.
    client
        .delete_order()
        .order_id(order_id)
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(pet_status(&server, rex).await, Some(PetStatus::Available));
    let (status, body) = api_error(client.get_order_by_id().order_id(order_id).send().await);
    assert_eq!(status, 404);
    assert_error(&body, 404, "NOT_FOUND");
    let (status, _) = api_error(client.delete_order().order_id(order_id).send().await);
    assert_eq!(status, 404);

    // A delivered order sells the pet, and deleting it leaves the pet sold.
    let delivered = client
        .place_order()
        .body(order(rex, Some(OrderStatus::Delivered)))
        .send()
        .await;
    let delivered = delivered.unwrap_or_else(|e| panic!("{e}")).into_inner();
    assert_eq!(delivered.complete, Some(true));
    assert_eq!(pet_status(&server, rex).await, Some(PetStatus::Sold));
    client
        .delete_order()
        .order_id(delivered.id.unwrap_or_default() as u64)
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(pet_status(&server, rex).await, Some(PetStatus::Sold));

    // An approved order makes the pet pending too.
    let max = add_pet(&server, "Max").await;
    client
        .place_order()
        .body(order(max, Some(OrderStatus::Approved)))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(pet_status(&server, max).await, Some(PetStatus::Pending));
    server.stop().await;
}

async fn inventory_counts_every_status(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    let empty = client
        .get_inventory()
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .into_inner();
    let expected: std::collections::HashMap<String, i32> =
        [("available", 0), ("pending", 0), ("sold", 0)]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect();
    assert_eq!(empty, expected, "every status is present, 0 where none");

    let a = add_pet(&server, "A").await;
    add_pet(&server, "B").await;
    client
        .place_order()
        .body(order(a, None))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let counts = client
        .get_inventory()
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .into_inner();
    assert_eq!(counts.get("available"), Some(&1));
    assert_eq!(counts.get("pending"), Some(&1));
    assert_eq!(counts.get("sold"), Some(&0));

    let (status, content_type, text) = send(
        http()
            .get(server.at("/v2/store/inventory"))
            .header("accept", "application/xml"),
    )
    .await;
    assert_eq!(status, 406, "inventory is JSON only: {text}");
    // The error itself comes in the format asked for.
    assert_eq!(content_type, "application/xml");
    assert!(text.contains("<type>NOT_ACCEPTABLE</type>"), "{text}");
    let (status, content_type, text) = send(
        http()
            .get(server.at("/v2/store/inventory"))
            .header("accept", "text/csv"),
    )
    .await;
    assert_eq!(status, 406);
    json_error(status, &content_type, &text, "NOT_ACCEPTABLE");
    server.stop().await;
}

async fn orders_for_unavailable_pets_are_refused(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    let rex = add_pet(&server, "Rex").await;
    client
        .place_order()
        .body(order(rex, None))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));

    let (status, body) = api_error(client.place_order().body(order(rex, None)).send().await);
    assert_eq!(status, 422);
    assert_error(&body, 422, "VALIDATION_FAILED");
    assert!(body.message.unwrap_or_default().contains("pending"));

    let (status, body) = api_error(
        client
            .place_order()
            .body(order(rex + 100, None))
            .send()
            .await,
    );
    assert_eq!(status, 422);
    assert!(body.message.unwrap_or_default().contains("does not exist"));

    let mut taken = order(add_pet(&server, "Max").await, None);
    taken.id = Some(77);
    let first = client
        .place_order()
        .body(taken.clone())
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(first.id, Some(77), "the client's id is kept");
    let ted = add_pet(&server, "Ted").await;
    let mut again = order(ted, None);
    again.id = Some(77);
    let (status, body) = api_error(client.place_order().body(again).send().await);
    assert_eq!(status, 409);
    assert_error(&body, 409, "CONFLICT");
    assert_eq!(
        pet_status(&server, ted).await,
        Some(PetStatus::Available),
        "the refused order changed nothing"
    );
    server.stop().await;
}

async fn bad_order_input_is_refused_and_changes_nothing(db: Db) {
    let server = TestServer::start(db).await;
    let rex = add_pet(&server, "Rex").await;
    let post = |body: serde_json::Value| {
        http()
            .post(server.at("/v2/store/order"))
            .header("content-type", "application/json")
            .body(body.to_string())
    };
    let cases = [
        (
            post(json!({"petId": rex, "quantity": 0})),
            422,
            "VALIDATION_FAILED",
        ),
        (
            post(json!({"petId": rex, "quantity": -2})),
            422,
            "VALIDATION_FAILED",
        ),
        (post(json!({"quantity": 1})), 400, "BAD_REQUEST"),
        (post(json!({"petId": 0})), 422, "VALIDATION_FAILED"),
        (
            post(json!({"petId": rex, "status": "lost"})),
            400,
            "BAD_REQUEST",
        ),
        (
            post(json!({"petId": rex, "shipDate": "yesterday"})),
            400,
            "BAD_REQUEST",
        ),
        (
            post(json!({"petId": rex, "id": -1})),
            422,
            "VALIDATION_FAILED",
        ),
        (
            http().get(server.at("/v2/store/order/abc")),
            400,
            "BAD_REQUEST",
        ),
        (
            http().get(server.at("/v2/store/order/-4")),
            400,
            "BAD_REQUEST",
        ),
        (
            http().delete(server.at("/v2/store/order/0")),
            400,
            "BAD_REQUEST",
        ),
    ];
    for (request, expected_status, kind) in cases {
        let (status, content_type, text) = send(request).await;
        assert_eq!(status, expected_status, "{kind}: {text}");
        json_error(status, &content_type, &text, kind);
    }
    assert_eq!(
        pet_status(&server, rex).await,
        Some(PetStatus::Available),
        "nothing was ordered"
    );
    server.stop().await;
}

async fn demo_data_is_consistent(db: Db) {
    let server = TestServer::start_with(db, |c| c.petstore.demo_data = true).await;
    let client = server.petstore();
    let inventory = client
        .get_inventory()
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .into_inner();
    assert_eq!(
        inventory.values().sum::<i32>(),
        10,
        "10 sample pets: {inventory:?}"
    );
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
            pet_status(&server, order.pet_id.get() as i64).await,
            Some(expected)
        );
    }
    let user = client
        .get_user_by_name()
        .username("user1")
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
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
        .unwrap_or_else(|e| panic!("{e}"));
    let extra = add_pet(&server, "Not a sample").await;
    // Wait for a reset after both changes by watching for its effect: pet 1
    // back and the added pet gone (polled, within a bound).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    loop {
        let sample_back = client.get_pet_by_id().pet_id(1).send().await.is_ok();
        let extra_gone = client
            .get_pet_by_id()
            .pet_id(extra as u64)
            .send()
            .await
            .is_err();
        if sample_back && extra_gone {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the sample data was not restored in time"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    server.stop().await;
}

async fn racing_orders_sell_a_pet_once(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    let rex = add_pet(&server, "Rex").await;
    let attempts = (0..12).map(|_| {
        let client = client.clone();
        async move { client.place_order().body(order(rex, None)).send().await }
    });
    let results = futures::future::join_all(attempts).await;
    let placed = results.iter().filter(|r| r.is_ok()).count();
    assert_eq!(placed, 1, "exactly one order wins the pet");
    for result in results.into_iter().filter(Result::is_err) {
        let (status, body) = api_error(result);
        assert_eq!(status, 422);
        assert_error(&body, 422, "VALIDATION_FAILED");
    }
    assert_eq!(server.count("orders").await, 1);
    assert_eq!(pet_status(&server, rex).await, Some(PetStatus::Pending));
    server.stop().await;
}
