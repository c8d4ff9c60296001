//! The portfolio SDK as its users meet it: token failures as typed errors,
//! refusals that read as one line.

use end_to_end_tests::ports::HeldPort;
use end_to_end_tests::{Db, TestServer, http, on_every_database, send, send_json};
use futures::{StreamExt as _, TryStreamExt as _};
use petstore_portfolio_client::Error;
use petstore_portfolio_client::portfolio::{ClientBuilder, TokenError};
use petstore_portfolio_server::config::Scope;

on_every_database!(
    token_failures_are_typed_and_read_as_one_line,
    a_refusal_reads_as_one_line_with_the_scope_in_its_details,
    a_paged_list_streams_every_item_and_ends_with_an_error_that_stops_it,
);

async fn token_failures_are_typed_and_read_as_one_line(db: Db) {
    let server = TestServer::start(db).await;
    let (id, secret) = server.oauth_client(&[Scope::SubscribersRead]).await;

    let wrong_secret = ClientBuilder::new(&server.url)
        .client_credentials(&id, "not-the-secret")
        .build()
        .unwrap();
    let error = wrong_secret.list_subscribers().send().await.unwrap_err();
    assert!(
        matches!(error, Error::Token(TokenError::InvalidClient { .. })),
        "{error:?}"
    );
    assert_eq!(error.code(), Some("invalid_client"));
    let line = error.to_string();
    assert!(
        line.starts_with("cannot get a bearer token: invalid_client: "),
        "{line}"
    );
    // Printed from `main` (Debug), it says what it is once.
    let debug = format!("{error:?}");
    assert!(debug.starts_with("Token(InvalidClient"), "{debug}");
    assert!(!debug.contains("not-the-secret"), "{debug}");

    let too_wide = ClientBuilder::new(&server.url)
        .client_credentials_with_scope(&id, &secret, "keys:manage")
        .build()
        .unwrap();
    let error = too_wide.list_subscribers().send().await.unwrap_err();
    assert!(
        matches!(error, Error::Token(TokenError::InvalidScope { .. })),
        "{error:?}"
    );

    // A server that is not there: the token endpoint is unreachable.
    let nobody = HeldPort::free();
    let nowhere = format!("http://127.0.0.1:{}", nobody.port());
    let unreachable = ClientBuilder::new(&nowhere)
        .client_credentials(&id, &secret)
        .no_retries()
        .build()
        .unwrap();
    let error = unreachable.list_subscribers().send().await.unwrap_err();
    assert!(
        matches!(error, Error::Token(TokenError::Unreachable(_))),
        "{error:?}"
    );
    assert!(
        format!("{error:#}").to_lowercase().contains("refused"),
        "{error:#}"
    );
}

async fn a_refusal_reads_as_one_line_with_the_scope_in_its_details(db: Db) {
    let server = TestServer::start(db).await;
    let reader = server.portfolio_with_scopes(&[Scope::ContentWrite]).await;
    let error = reader.list_subscribers().send().await.unwrap_err();
    assert_eq!(error.status().map(|s| s.as_u16()), Some(403));
    assert!(error.to_string().starts_with("403 FORBIDDEN: "), "{error}");
    assert_eq!(
        error.details().and_then(|d| d.get("required_scope")),
        Some(&serde_json::json!("subscribers:read"))
    );
}

async fn a_paged_list_streams_every_item_and_ends_with_an_error_that_stops_it(db: Db) {
    let server = TestServer::start(db).await;
    let mut emails = Vec::new();
    for n in 0..5 {
        let email = format!("reader{n}@example.com");
        let (status, _, body) =
            send_json(server.post_json("/api/newsletter", serde_json::json!({"email": email})))
                .await;
        assert_eq!(status, 202, "{body}");
        emails.push(email);
    }
    let (id, secret) = server.oauth_client(&[Scope::SubscribersRead]).await;
    let token = server.token_of_client(&id, &secret).await;
    let client = ClientBuilder::new(&server.url)
        .bearer_token(&token)
        .build()
        .unwrap();

    // Three pages of two: every subscriber once, in order.
    let all: Vec<_> = client
        .list_subscribers()
        .per_page(2_u32)
        .stream()
        .try_collect()
        .await
        .unwrap();
    let mut streamed: Vec<String> = all.iter().map(|s| s.email.clone()).collect();
    streamed.sort();
    assert_eq!(streamed, emails);

    // The token is revoked after the first page: the second page's refusal
    // is the stream's last item.
    let mut stream = client.list_subscribers().per_page(2_u32).stream();
    assert!(stream.next().await.unwrap().is_ok());
    assert!(stream.next().await.unwrap().is_ok());
    let (status, _, _) = send(
        http()
            .post(server.at("/api/oauth/revoke"))
            .basic_auth(&id, Some(&secret))
            .form(&[("token", token.as_str())]),
    )
    .await;
    assert_eq!(status, 200);
    let refused = stream.next().await.unwrap().unwrap_err();
    assert_eq!(refused.status().map(|s| s.as_u16()), Some(401), "{refused}");
    assert!(
        stream.next().await.is_none(),
        "the stream ends after its error"
    );
}
