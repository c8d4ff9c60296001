//! The shop's tests: against the real server (the test kit) and against
//! typed mocks, with no server started by hand.

#![allow(clippy::unwrap_used)]

use pet_shop::{Availability, availability, sign_up};
use petstore_portfolio_mock::httpmock::MockServer;
use petstore_portfolio_mock::petstore::MockServerExt as _;
use petstore_portfolio_testkit::TestServer;

#[tokio::test]
async fn a_sample_pet_is_for_sale_through_a_flaky_server() {
    let server = TestServer::start().await;
    // Two 503s: the SDK's retries carry the call to its third attempt.
    server.fail_next("getPetById", 2, 503);
    let answer = availability(&server.petstore(), 1).await.unwrap();
    assert_eq!(answer, Availability::ForSale("Cat 1".to_owned()));
    assert_eq!(server.failures_left("getPetById"), 0);
}

#[tokio::test]
async fn a_server_that_stays_down_is_the_callers_to_handle() {
    let server = TestServer::start().await;
    server.fail_next("getPetById", 3, 503);
    let error = availability(&server.petstore(), 1).await.unwrap_err();
    assert_eq!(error.status().map(|s| s.as_u16()), Some(503));
}

#[tokio::test]
async fn a_customer_who_signs_up_is_welcomed_by_email() {
    let server = TestServer::start().await;
    sign_up(&server.portfolio(), "ada@example.test")
        .await
        .unwrap();
    let emails = server.wait_for_emails(1).await;
    assert_eq!(emails[0].to, ["ada@example.test"]);
    assert!(emails[0].text.contains("unsubscribe"), "{}", emails[0].text);
}

#[tokio::test]
async fn a_pet_the_store_does_not_have_is_gone() {
    let server = MockServer::start_async().await;
    let asked = server.get_pet_by_id(|when, then| {
        when.pet_id(&7.try_into().unwrap());
        then.error(404, "no pet 7");
    });
    let store = petstore_portfolio_client::petstore::ClientBuilder::new(server.base_url())
        .build()
        .unwrap();
    assert_eq!(availability(&store, 7).await.unwrap(), Availability::Gone);
    asked.assert();
}
