//! The SDK as its users meet it: errors that read as one line, retries
//! that are safe because of idempotency keys, base URLs with or without
//! the service's path.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use end_to_end_tests::ports::HeldPort;
use end_to_end_tests::{Db, TestServer, on_every_database};
use petstore_portfolio_client::RetryPolicy;
use petstore_portfolio_client::petstore::ClientBuilder;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::support::pet;

on_every_database!(
    an_answered_error_prints_as_one_line_with_its_parts,
    a_dropped_connection_after_the_commit_is_retried_and_creates_one_pet,
    a_post_that_takes_no_key_is_not_retried_after_a_dropped_connection,
    the_base_url_may_name_the_service_or_not,
    a_pet_read_is_ordered_and_found_by_its_own_id,
);

async fn an_answered_error_prints_as_one_line_with_its_parts(db: Db) {
    let server = TestServer::start(db).await;
    let client = ClientBuilder::new(&server.url)
        .api_key("s3cret-key")
        .build()
        .unwrap();
    let error = client
        .get_pet_by_id()
        .pet_id(987654321_u64)
        .send()
        .await
        .unwrap_err();
    assert_eq!(error.to_string(), "404 NOT_FOUND: pet 987654321 not found");
    assert_eq!(format!("{error:#}"), error.to_string());
    assert_eq!(error.status().map(|s| s.as_u16()), Some(404));
    assert_eq!(error.code(), Some("NOT_FOUND"));
    assert_eq!(error.message(), "pet 987654321 not found");
    assert!(error.request_id().is_some_and(|id| id.len() == 36));
    let debug = format!("{error:?}");
    assert!(!debug.contains("s3cret"), "{debug}");
    assert!(debug.len() < 400, "{debug}");
    // Through anyhow and Box<dyn Error>, as `?` takes it.
    let boxed: Box<dyn std::error::Error> = Box::new(error);
    assert_eq!(boxed.to_string(), "404 NOT_FOUND: pet 987654321 not found");
}

/// A TCP proxy to `upstream` that cuts the first connection carrying
/// a `POST` to a path that starts with `cut_path` once the server has begun to answer it (the pet is
/// committed) and before the client reads a byte; other connections pass.
pub(crate) async fn cutting_proxy(
    upstream: String,
    cut_path: &'static str,
) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = format!("http://{}", listener.local_addr().unwrap());
    let cuts = Arc::new(AtomicUsize::new(0));
    let counted = cuts.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut client, _)) = listener.accept().await else {
                return;
            };
            let upstream = upstream.clone();
            let cuts = counted.clone();
            tokio::spawn(async move {
                let Ok(mut server) = TcpStream::connect(&upstream).await else {
                    return;
                };
                let mut first = vec![0; 64 * 1024];
                let Ok(read) = client.read(&mut first).await else {
                    return;
                };
                let _ = server.write_all(&first[..read]).await;
                let is_target = first[..read].starts_with(format!("POST {cut_path}").as_bytes());
                if is_target && cuts.load(Ordering::SeqCst) == 0 {
                    cuts.fetch_add(1, Ordering::SeqCst);
                    let (mut client_read, _client_write) = client.into_split();
                    let (mut server_read, mut server_write) = server.into_split();
                    // The rest of the request goes on to the server.
                    tokio::spawn(async move {
                        let _ = tokio::io::copy(&mut client_read, &mut server_write).await;
                    });
                    // The answer's first bytes come (the pet is committed);
                    // then both connections are dropped unanswered.
                    let mut answer = [0; 1];
                    let _ = server_read.read(&mut answer).await;
                    return;
                }
                let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
            });
        }
    });
    (address, cuts)
}

async fn a_dropped_connection_after_the_commit_is_retried_and_creates_one_pet(db: Db) {
    let server = TestServer::start(db).await;
    let upstream = server.url.trim_start_matches("http://").to_owned();
    let (proxy, cuts) = cutting_proxy(upstream, "/v2/pet").await;
    let client = ClientBuilder::new(&proxy).build().unwrap();
    let added = client
        .add_pet()
        .body(pet("Retried", &[]))
        .send()
        .await
        .expect("the SDK retries with the same key and gets the pet");
    assert_eq!(cuts.load(Ordering::SeqCst), 1, "the first answer was cut");
    assert_eq!(
        added
            .headers()
            .get("idempotency-replayed")
            .map(|v| v.as_bytes()),
        Some(&b"true"[..]),
        "the retry got the first attempt's answer"
    );
    assert_eq!(added.name.as_str(), "Retried");
    assert_eq!(server.count_where("pets", "name = 'Retried'").await, 1);
}

async fn a_post_that_takes_no_key_is_not_retried_after_a_dropped_connection(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    let id = crate::support::add_named_pet(&client, "Formed", &[]).await;
    let upstream = server.url.trim_start_matches("http://").to_owned();
    let cut = Box::leak(format!("/v2/pet/{id}?").into_boxed_str());
    let (proxy, cuts) = cutting_proxy(upstream, cut).await;
    let through_proxy = ClientBuilder::new(&proxy).build().unwrap();
    // updatePetWithForm is a POST without an idempotency key: sent twice,
    // it might not do the same thing twice, so it is not sent again.
    let error = through_proxy
        .update_pet_with_form()
        .pet_id(id)
        .name("Renamed")
        .send()
        .await
        .unwrap_err();
    assert_eq!(cuts.load(Ordering::SeqCst), 1);
    assert!(error.status().is_none(), "no answer came: {error}");
    assert!(error.to_string().contains("got no answer"), "{error}");
}

async fn the_base_url_may_name_the_service_or_not(db: Db) {
    let server = TestServer::start(db).await;
    let id = crate::support::add_named_pet(&server.petstore(), "Anywhere", &[]).await;
    for url in [
        server.url.clone(),
        format!("{}/", server.url),
        format!("{}/v2", server.url),
        format!("{}/v2/", server.url),
    ] {
        let client = ClientBuilder::new(&url).build().unwrap();
        let found = client.get_pet_by_id().pet_id(id).send().await;
        assert!(found.is_ok(), "{url}: {:?}", found.err());
    }
    let wrong = ClientBuilder::new(format!("{}/api", server.url)).build();
    let why = wrong.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(why.contains("/v2"), "{why}");
}

#[tokio::test]
async fn an_unreachable_server_says_why_under_alternate() {
    // A port held and not listening: nothing answers there.
    let nobody = HeldPort::free();
    let url = format!("http://127.0.0.1:{}", nobody.port());
    let client = ClientBuilder::new(&url).no_retries().build().unwrap();
    let error = client.get_inventory().send().await.unwrap_err();
    assert!(error.is_connect(), "{error:?}");
    let line = error.to_string();
    assert!(
        line.starts_with("get_inventory got no answer: cannot connect"),
        "{line}"
    );
    let chain = format!("{error:#}");
    println!("{{}}: {line}\n{{:#}}: {chain}");
    assert!(chain.len() > line.len(), "{chain}");
    assert!(chain.to_lowercase().contains("refused"), "{chain}");
    let through_anyhow = format!("{:#}", anyhow::Error::from(error));
    assert!(
        through_anyhow.to_lowercase().contains("refused"),
        "{through_anyhow}"
    );

    // loginUser sends the password in the query: no form of the error
    // shows the URL's path or query.
    let error = client
        .login_user()
        .username("user1")
        .password("s3cret-pass")
        .send()
        .await
        .unwrap_err();
    for shown in [
        error.to_string(),
        format!("{error:#}"),
        format!("{error:?}"),
        format!("{:#}", anyhow::Error::from(error)),
    ] {
        assert!(!shown.contains("s3cret"), "{shown}");
    }
}

/// A gateway in front of the server answers 503 with `Retry-After` (or
/// 502) now and then: the SDK waits and tries again; a POST without a key
/// is not retried.
#[tokio::test]
async fn gateway_errors_are_retried_as_retry_after_says() {
    let gateway = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v2/store/inventory"))
        .respond_with(ResponseTemplate::new(503).insert_header("retry-after", "1"))
        .up_to_n_times(1)
        .mount(&gateway)
        .await;
    Mock::given(method("GET"))
        .and(path("/v2/store/inventory"))
        .respond_with(ResponseTemplate::new(502))
        .up_to_n_times(1)
        .mount(&gateway)
        .await;
    Mock::given(method("GET"))
        .and(path("/v2/store/inventory"))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({"sold": 1})))
        .mount(&gateway)
        .await;
    let client = ClientBuilder::new(gateway.uri()).build().unwrap();
    let started = std::time::Instant::now();
    let inventory = client.get_inventory().send().await.expect("retried");
    assert_eq!(inventory.get("sold"), Some(&1));
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "Retry-After was honoured"
    );
    assert_eq!(gateway.received_requests().await.unwrap().len(), 3);

    // The deadline comes first: no attempt waits beyond it.
    let impatient = ClientBuilder::new(gateway.uri())
        .retry(RetryPolicy::default().deadline(Duration::from_millis(500)))
        .build()
        .unwrap();
    gateway.reset().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(503).insert_header("retry-after", "30"))
        .mount(&gateway)
        .await;
    let error = impatient.get_inventory().send().await.unwrap_err();
    assert_eq!(error.status().map(|s| s.as_u16()), Some(503));
    assert_eq!(error.retry_after(), Some(Duration::from_secs(30)));
    assert_eq!(gateway.received_requests().await.unwrap().len(), 1);
    // An undocumented status keeps what the gateway said.
    assert_eq!(
        error.to_string(),
        "503 SERVICE_UNAVAILABLE: service unavailable"
    );

    // updatePetWithForm takes no key: a 503 goes to the caller at once.
    gateway.reset().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(503).insert_header("retry-after", "1"))
        .mount(&gateway)
        .await;
    let error = client
        .update_pet_with_form()
        .pet_id(1_u64)
        .send()
        .await
        .unwrap_err();
    assert_eq!(error.status().map(|s| s.as_u16()), Some(503));
    assert_eq!(gateway.received_requests().await.unwrap().len(), 1);
}

/// One id type per resource: the `PetId` a read gives is what an order's
/// `pet_id` and every `pet_id(..)` take, with no conversion.
async fn a_pet_read_is_ordered_and_found_by_its_own_id(db: Db) {
    use petstore_portfolio_client::ids::PetId;
    use petstore_portfolio_client::petstore::types;

    let server = TestServer::start(db).await;
    let client = server.petstore();
    let added = client
        .add_pet()
        .body(pet("Ordered", &[]))
        .send()
        .await
        .unwrap();
    let pet_id: PetId = added.id.expect("an id");
    let read = client.get_pet_by_id().pet_id(pet_id).send().await.unwrap();
    let order = types::Order {
        id: None,
        pet_id: read.id.expect("an id"),
        quantity: std::num::NonZeroU32::MIN,
        ship_date: None,
        status: None,
        complete: None,
    };
    let placed = client.place_order().body(order).send().await.unwrap();
    assert_eq!(placed.pet_id, pet_id);
    let order_id = placed.id.expect("an order id");
    let found = client
        .get_order_by_id()
        .order_id(order_id)
        .send()
        .await
        .unwrap();
    assert_eq!(found.pet_id, read.id.unwrap());
}

#[test]
fn a_type_builder_names_every_invalid_field() {
    use petstore_portfolio_client::petstore::types;

    let error = types::Order::builder()
        .pet_id(0_u64)
        .quantity(0_u32)
        .build()
        .unwrap_err();
    let fields: Vec<&str> = error.fields().iter().map(|(field, _)| *field).collect();
    assert_eq!(fields, ["pet_id", "quantity"], "{error}");
    assert!(
        error.to_string().starts_with("invalid Order: pet_id: "),
        "{error}"
    );
}

/// One call may have a time limit of its own; the client's others keep
/// theirs.
#[tokio::test]
async fn a_call_can_have_its_own_timeout() {
    let slow = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v2/store/inventory"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(serde_json::json!({"sold": 1}))
                .set_delay(Duration::from_millis(800)),
        )
        .mount(&slow)
        .await;
    let client = ClientBuilder::new(slow.uri()).no_retries().build().unwrap();
    let started = std::time::Instant::now();
    let error = client
        .with_timeout(Duration::from_millis(100))
        .get_inventory()
        .send()
        .await
        .unwrap_err();
    assert!(error.is_timeout(), "{error:?}");
    assert!(started.elapsed() < Duration::from_millis(700));
    assert!(error.to_string().contains("timed out"), "{error}");
    // The client itself waits as long as it was built to (30 s).
    let inventory = client.get_inventory().send().await.unwrap();
    assert_eq!(inventory.get("sold"), Some(&1));
}

/// The error code is an enum to match on: a 404 is `NotFound` (and
/// `is_not_found`); a code this SDK does not know, from a newer server, is
/// `Other` with the code as sent; every code the documents list reads back
/// as itself.
#[tokio::test]
async fn an_error_code_is_an_enum_to_match_on() {
    use petstore_portfolio_client::ErrorCode;

    let server = TestServer::start(Db::Sqlite).await;
    let client = ClientBuilder::new(&server.url).build().unwrap();
    let missing = client
        .get_pet_by_id()
        .pet_id(424_242_u64)
        .send()
        .await
        .unwrap_err();
    assert_eq!(missing.error_code(), Some(ErrorCode::NotFound));
    assert!(missing.is_not_found() && !missing.is_conflict());
    assert_eq!(
        missing.error_code().map(|code| code.to_string()).as_deref(),
        missing.code()
    );
    server.stop().await;

    let gateway = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v2/store/inventory"))
        .respond_with(ResponseTemplate::new(418).set_body_json(
            serde_json::json!({"code": 418, "type": "TEAPOT", "message": "short and stout"}),
        ))
        .mount(&gateway)
        .await;
    let error = ClientBuilder::new(gateway.uri())
        .build()
        .unwrap()
        .get_inventory()
        .send()
        .await
        .unwrap_err();
    assert_eq!(
        error.error_code(),
        Some(ErrorCode::Other("TEAPOT".to_owned()))
    );
    assert!(!error.is_not_found());

    assert!(ErrorCode::KNOWN.len() >= 14, "{:?}", ErrorCode::KNOWN);
    for code in ErrorCode::KNOWN {
        let parsed = ErrorCode::parse(code);
        assert!(!matches!(parsed, ErrorCode::Other(_)), "{code}");
        assert_eq!(parsed.as_str(), *code);
    }
}
