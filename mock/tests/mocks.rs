//! The typed mocks, used as a program's tests would use them: the SDK
//! against `httpmock::MockServer`, no server of ours.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use petstore_portfolio_client::ids::PetId;
use petstore_portfolio_client::{ErrorCode, petstore, portfolio};
use petstore_portfolio_mock::httpmock::MockServer;
use petstore_portfolio_mock::petstore::MockServerExt as _;
use petstore_portfolio_mock::portfolio::MockServerExt as _;

fn pet_id(id: u64) -> PetId {
    PetId::try_from(id).unwrap()
}

fn pet(id: u64, name: &str) -> petstore::types::Pet {
    petstore::types::Pet::builder()
        .id(pet_id(id))
        .name(name)
        .photo_urls(Vec::<String>::new())
        .try_into()
        .unwrap()
}

#[tokio::test]
async fn a_typed_mock_answers_the_sdk() {
    let server = MockServer::start_async().await;
    let found = server.get_pet_by_id(|when, then| {
        when.pet_id(&pet_id(7));
        then.ok(&pet(7, "Rex"));
    });
    let client = petstore::ClientBuilder::new(server.base_url())
        .build()
        .unwrap();
    let pet = client.get_pet_by_id().pet_id(7).send().await.unwrap();
    assert_eq!(pet.name.as_str(), "Rex");
    found.assert();
}

#[tokio::test]
async fn an_error_answer_is_in_the_services_format() {
    let server = MockServer::start_async().await;
    server.get_pet_by_id(|when, then| {
        when.pet_id(&pet_id(7));
        then.not_found(&petstore_portfolio_mock::petstore::error_body(
            404, "no pet 7",
        ));
    });
    server.get_pet_by_id(|when, then| {
        when.pet_id(&pet_id(8));
        then.error(409, "pet 8 is being moved");
    });
    let client = petstore::ClientBuilder::new(server.base_url())
        .build()
        .unwrap();
    let missing = client.get_pet_by_id().pet_id(7).send().await.unwrap_err();
    assert!(missing.is_not_found(), "{missing}");
    assert_eq!(missing.message(), "no pet 7");
    let busy = client.get_pet_by_id().pet_id(8).send().await.unwrap_err();
    assert_eq!(busy.error_code(), Some(ErrorCode::Conflict), "{busy}");

    let portfolio_server = MockServer::start_async().await;
    portfolio_server.get_project(|_, then| {
        then.error(404, "no project named thing");
    });
    let client = portfolio::ClientBuilder::new(portfolio_server.base_url())
        .build()
        .unwrap();
    let missing = client.get_project().slug("thing").send().await.unwrap_err();
    assert!(missing.is_not_found(), "{missing}");
    assert_eq!(missing.message(), "no project named thing");
}

#[tokio::test]
async fn a_503_is_met_by_every_attempt_of_the_sdk() {
    let server = MockServer::start_async().await;
    let unavailable = server.list_projects(|_, then| {
        then.error_with_retry_after(503, "down for a moment", Duration::from_secs(0));
    });
    let client = portfolio::ClientBuilder::new(server.base_url())
        .build()
        .unwrap();
    let error = client.list_projects().send().await.unwrap_err();
    assert_eq!(error.error_code(), Some(ErrorCode::ServiceUnavailable));
    // Three attempts by default.
    unavailable.assert_calls(3);

    let once = MockServer::start_async().await;
    let limited = once.list_projects(|_, then| {
        then.error_with_retry_after(429, "slow down", Duration::from_secs(1));
    });
    let client = portfolio::ClientBuilder::new(once.base_url())
        .no_retries()
        .build()
        .unwrap();
    let started = Instant::now();
    let error = client.list_projects().send().await.unwrap_err();
    assert!(error.is_rate_limited(), "{error}");
    assert_eq!(error.retry_after(), Some(Duration::from_secs(1)));
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "no retry, no wait"
    );
    limited.assert_calls(1);
}

#[tokio::test]
async fn a_list_in_the_query_matches_each_of_its_values() {
    use petstore::types::PetStatus;
    let server = MockServer::start_async().await;
    let listed = server.find_pets_by_status(|when, then| {
        when.status(&vec![PetStatus::Available, PetStatus::Sold]);
        then.ok(&vec![pet(1, "Cat 1")]);
    });
    let client = petstore::ClientBuilder::new(server.base_url())
        .build()
        .unwrap();
    let pets = client
        .find_pets_by_status()
        .status(vec![PetStatus::Available, PetStatus::Sold])
        .send()
        .await
        .unwrap();
    assert_eq!(pets.len(), 1);
    listed.assert();
}
