//! The test kit, used as a program's tests would use it: the real server,
//! clients of the SDK, credentials, emails and injected failures.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use petstore_portfolio_client::ids::PetId;
use petstore_portfolio_client::portfolio::types;
use petstore_portfolio_client::{ErrorCode, petstore};
use petstore_portfolio_testkit::{KeyService, Scope, TestServer};

#[tokio::test]
async fn the_server_starts_with_the_sample_data() {
    let server = TestServer::start().await;
    let pet = server
        .petstore()
        .get_pet_by_id()
        .pet_id(1)
        .send()
        .await
        .unwrap();
    assert_eq!(pet.name.as_str(), "Cat 1");
    let site = server.portfolio().get_site_info().send().await.unwrap();
    assert!(!site.name.is_empty());
    server.stop().await;
}

#[tokio::test]
async fn without_sample_data_the_store_is_empty() {
    let server = TestServer::builder()
        .without_sample_data()
        .start()
        .await
        .unwrap();
    let missing = server.petstore().get_pet_by_id().pet_id(1).send().await;
    assert!(missing.unwrap_err().is_not_found());
}

#[tokio::test]
async fn injected_503s_are_retried_until_the_call_succeeds() {
    let server = TestServer::start().await;
    server.fail_next("getPetById", 2, 503);
    assert_eq!(server.failures_left("get_pet_by_id"), 2);
    let pet = server
        .petstore()
        .get_pet_by_id()
        .pet_id(1)
        .send()
        .await
        .unwrap();
    assert_eq!(pet.id.map(|id| id.get()), Some(1));
    assert_eq!(server.failures_left("get_pet_by_id"), 0);

    // One failure more than the SDK's attempts: the caller sees the 503,
    // in the pet store's error format.
    server.fail_next("get_pet_by_id", 3, 503);
    let error = server
        .petstore()
        .get_pet_by_id()
        .pet_id(1)
        .send()
        .await
        .unwrap_err();
    assert_eq!(error.status().map(|s| s.as_u16()), Some(503), "{error}");
    assert_eq!(error.error_code(), Some(ErrorCode::ServiceUnavailable));
    assert_eq!(error.to_string().lines().count(), 1, "{error}");
    // Other operations are untouched.
    server.petstore().get_inventory().send().await.unwrap();
}

#[tokio::test]
async fn an_injected_failure_changes_nothing_on_the_server() {
    let server = TestServer::builder()
        .without_sample_data()
        .start()
        .await
        .unwrap();
    server.fail_next("addPet", 1, 409);
    let pet = petstore::types::Pet::builder()
        .id(PetId::try_from(7u64).unwrap())
        .name("Rex")
        .photo_urls(Vec::<String>::new());
    let error = server
        .petstore()
        .add_pet()
        .body(pet)
        .send()
        .await
        .unwrap_err();
    assert!(error.is_conflict(), "{error}");
    let missing = server.petstore().get_pet_by_id().pet_id(7).send().await;
    assert!(missing.unwrap_err().is_not_found());
}

#[tokio::test]
async fn a_portfolio_failure_comes_in_its_envelope_with_retry_after() {
    let server = TestServer::start().await;
    server.fail_next_with_retry_after("listProjects", 1, 429, Duration::from_secs(1));
    let no_retries = petstore_portfolio_client::portfolio::ClientBuilder::new(server.url())
        .no_retries()
        .build()
        .unwrap();
    let error = no_retries.list_projects().send().await.unwrap_err();
    assert!(error.is_rate_limited(), "{error}");
    let api = error.api().expect("an answer of the server");
    assert_eq!(api.code(), "RATE_LIMITED");
    assert_eq!(api.retry_after(), Some(Duration::from_secs(1)));

    // With retries, the SDK waits as told and tries again.
    server.fail_next_with_retry_after("listProjects", 1, 429, Duration::from_secs(1));
    let started = Instant::now();
    server.portfolio().list_projects().send().await.unwrap();
    assert!(started.elapsed() >= Duration::from_secs(1));
}

#[tokio::test]
async fn credentials_carry_the_scopes_asked_for() {
    let server = TestServer::start().await;
    let key = server
        .api_key(KeyService::Portfolio, &[Scope::ContextRead])
        .await;
    server
        .portfolio_with_key(&key)
        .get_llm_context()
        .send()
        .await
        .unwrap();
    let reader = server.portfolio_with_scopes(&[Scope::ContextRead]).await;
    let refused = reader.list_subscribers().send().await.unwrap_err();
    assert!(refused.is_forbidden(), "{refused}");

    let admin = server
        .portfolio_with_scopes(&[Scope::SubscribersRead])
        .await;
    let page = admin.list_subscribers().send().await.unwrap();
    assert_eq!(page.total, 0);

    let pet_key = server.petstore_with_key(&[]).await;
    pet_key.get_inventory().send().await.unwrap();
}

#[tokio::test]
async fn the_emails_sent_are_read_back() {
    let server = TestServer::start().await;
    server
        .portfolio()
        .subscribe_newsletter()
        .body(types::SubscribeRequest {
            email: "ada@example.test".parse().unwrap(),
        })
        .send()
        .await
        .unwrap();
    let emails = server.wait_for_emails(1).await;
    let welcome = &emails[0];
    assert_eq!(welcome.to, ["ada@example.test"]);
    assert!(!welcome.subject.is_empty());
    assert!(welcome.header("List-Unsubscribe").is_some(), "{welcome:?}");
    let prefix = format!("{}/api/newsletter/unsubscribe?token=", server.url());
    let link = welcome
        .link(&prefix)
        .unwrap_or_else(|| panic!("no unsubscribe link: {welcome:#?}"));
    let token = link.strip_prefix(&prefix).unwrap();
    server
        .portfolio()
        .unsubscribe_newsletter()
        .token(token)
        .send()
        .await
        .unwrap();
}

#[tokio::test]
async fn a_restart_keeps_a_database_file() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::builder()
        .without_sample_data()
        .data_dir(dir.path())
        .database_url(format!("sqlite://{}/kit.db?mode=rwc", dir.path().display()))
        .start()
        .await
        .unwrap();
    let pet = petstore::types::Pet::builder()
        .id(PetId::try_from(9u64).unwrap())
        .name("Kept")
        .photo_urls(Vec::<String>::new());
    server.petstore().add_pet().body(pet).send().await.unwrap();
    let server = server.restart(|_| {}).await.unwrap();
    let kept = server
        .petstore()
        .get_pet_by_id()
        .pet_id(9)
        .send()
        .await
        .unwrap();
    assert_eq!(kept.name.as_str(), "Kept");
}
