//! The `user` operations: hashed passwords, atomic lists, sessions.

use end_to_end_tests::{Db, TestServer, header, http, on_every_database, send};
use petstore_portfolio_client::petstore::{Client, ClientBuilder, Error, ResponseValue, types};
use serde_json::json;

use crate::support::{api_error, assert_api_error, assert_refused};

on_every_database!(
    creating_a_user_assigns_an_id_and_returns_no_password,
    a_user_reads_back_as_created,
    a_users_password_is_never_shown,
    getting_a_missing_user_is_404,
    a_taken_username_is_409_and_changes_nothing,
    a_requested_id_another_user_has_is_replaced_by_a_free_one,
    invalid_user_fields_are_422,
    malformed_users_are_400,
    creating_a_list_answers_with_the_last_user,
    a_list_with_a_taken_username_creates_nothing,
    a_list_that_repeats_a_username_creates_nothing,
    an_empty_list_is_422,
    logging_in_answers_a_token_with_rate_limit_and_expiry,
    logging_in_opens_a_session,
    bad_credentials_are_400_and_open_no_session,
    logging_in_without_a_password_is_400,
    logging_out_ends_the_session,
    logging_out_again_or_without_a_session_is_fine,
    updating_a_user_replaces_it,
    updating_a_user_without_a_password_keeps_the_password,
    updating_a_user_with_a_password_changes_it,
    renaming_a_user_to_a_taken_username_is_409,
    updating_a_missing_user_is_404,
    deleting_a_user_ends_their_sessions,
    deleting_a_deleted_user_is_404,
);

fn parse<T: std::str::FromStr<Err: std::fmt::Display>>(value: &str) -> T {
    value.parse().unwrap_or_else(|e| panic!("{value:?}: {e}"))
}

fn user(name: &str, password: Option<&str>) -> types::User {
    types::User {
        id: None,
        username: parse(name),
        first_name: Some(parse("Ada")),
        last_name: Some(parse("Lovelace")),
        email: Some(parse("ada@example.test")),
        password: password.map(parse),
        phone: Some(parse("12345")),
        user_status: Some(1),
    }
}

async fn create_user(client: &Client, user: types::User) -> types::User {
    client
        .create_user()
        .body(user)
        .send()
        .await
        .expect("createUser")
        .into_inner()
}

/// Creates ada, whose password is `secret-pw`.
async fn create_ada(client: &Client) -> types::User {
    create_user(client, user("ada", Some("secret-pw"))).await
}

async fn get_user(client: &Client, username: &str) -> types::User {
    client
        .get_user_by_name()
        .username(username)
        .send()
        .await
        .expect("getUserByName")
        .into_inner()
}

async fn update_user(
    client: &Client,
    username: &str,
    user: types::User,
) -> Result<ResponseValue<types::User>, Error> {
    client
        .update_user()
        .username(username)
        .body(user)
        .send()
        .await
}

/// Does `username` log in with `password`?
async fn logs_in(client: &Client, username: &str, password: &str) -> bool {
    client
        .login_user()
        .username(username)
        .password(password)
        .send()
        .await
        .is_ok()
}

/// Logs ada in; returns her session token.
async fn log_ada_in(client: &Client) -> String {
    client
        .login_user()
        .username("ada")
        .password("secret-pw")
        .send()
        .await
        .expect("loginUser")
        .into_inner()
}

async fn creating_a_user_assigns_an_id_and_returns_no_password(db: Db) {
    let server = TestServer::start(db).await;
    let created = create_ada(&server.petstore()).await;
    assert!(created.id.is_some_and(|id| id > 0));
    assert!(created.password.is_none(), "the password is never returned");
    server.stop().await;
}

async fn a_user_reads_back_as_created(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    create_ada(&client).await;
    let fetched = get_user(&client, "ada").await;
    assert_eq!(
        fetched.email.as_ref().map(|e| e.as_str()),
        Some("ada@example.test")
    );
    server.stop().await;
}

async fn a_users_password_is_never_shown(db: Db) {
    let server = TestServer::start(db).await;
    create_ada(&server.petstore()).await;
    let (_, _, json) = send(http().get(server.at("/v2/user/ada"))).await;
    assert!(
        !json.contains("password") && !json.contains("secret-pw"),
        "{json}"
    );
    let (_, _, xml) = send(
        http()
            .get(server.at("/v2/user/ada"))
            .header("accept", "application/xml"),
    )
    .await;
    assert!(
        !xml.contains("password") && !xml.contains("secret-pw"),
        "{xml}"
    );
    server.stop().await;
}

async fn getting_a_missing_user_is_404(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    assert_api_error(
        client.get_user_by_name().username("nobody").send().await,
        404,
        "NOT_FOUND",
    );
    server.stop().await;
}

async fn a_taken_username_is_409_and_changes_nothing(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    create_user(&client, user("ada", Some("one-password"))).await;
    let mut again = user("ada", Some("two-password"));
    again.email = Some(parse("other@example.test"));
    assert_api_error(
        client.create_user().body(again).send().await,
        409,
        "CONFLICT",
    );

    let fetched = get_user(&client, "ada").await;
    assert_eq!(
        fetched.email.as_ref().map(|e| e.as_str()),
        Some("ada@example.test")
    );
    assert!(logs_in(&client, "ada", "one-password").await);
    server.stop().await;
}

/// A user's id names nothing a client looks up: one another user has is
/// not a conflict (the official example user has the sample user10's id);
/// the new user gets a free one, and the other keeps theirs.
async fn a_requested_id_another_user_has_is_replaced_by_a_free_one(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    let mut first = user("ada", Some("one-password"));
    first.id = Some(10);
    assert_eq!(
        create_user(&client, first).await.id,
        Some(10),
        "a free id is kept"
    );
    let mut second = user("grace", Some("two-password"));
    second.id = Some(10);
    let created = create_user(&client, second).await;
    assert!(created.id.is_some_and(|id| id != 10), "{created:?}");
    assert_eq!(get_user(&client, "grace").await.id, created.id);
    assert_eq!(get_user(&client, "ada").await.id, Some(10));
    server.stop().await;
}

async fn invalid_user_fields_are_422(db: Db) {
    let server = TestServer::start(db).await;
    for body in [json!({"username": ""}), json!({"username": "x".repeat(65)})] {
        let request = server.post_json("/v2/user", body);
        assert_refused(request, 422, "VALIDATION_FAILED").await;
    }
    server.stop().await;
}

async fn malformed_users_are_400(db: Db) {
    let server = TestServer::start(db).await;
    for body in [
        json!({"firstName": "No Name"}),
        json!({"username": "bob", "userStatus": "active"}),
    ] {
        let request = server.post_json("/v2/user", body);
        assert_refused(request, 400, "BAD_REQUEST").await;
    }
    server.stop().await;
}

async fn creating_a_list_answers_with_the_last_user(db: Db) {
    let server = TestServer::start(db).await;
    let last = server
        .petstore()
        .create_users_with_list_input()
        .body(vec![user("u1", Some("p-password")), user("u2", None)])
        .send()
        .await
        .expect("createUsersWithListInput");
    assert_eq!(last.username.as_str(), "u2", "answers with the last user");
    server.stop().await;
}

async fn a_list_with_a_taken_username_creates_nothing(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    create_user(&client, user("u1", Some("p-password"))).await;
    // u3 is new, u1 exists: neither is created.
    assert_api_error(
        client
            .create_users_with_list_input()
            .body(vec![user("u3", None), user("u1", None)])
            .send()
            .await,
        409,
        "CONFLICT",
    );
    let (status, _) = api_error(client.get_user_by_name().username("u3").send().await);
    assert_eq!(status, 404, "the whole list was rolled back");
    server.stop().await;
}

async fn a_list_that_repeats_a_username_creates_nothing(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    let (status, _) = api_error(
        client
            .create_users_with_list_input()
            .body(vec![user("u4", None), user("u4", None)])
            .send()
            .await,
    );
    assert_eq!(status, 409);
    let (status, _) = api_error(client.get_user_by_name().username("u4").send().await);
    assert_eq!(status, 404);
    server.stop().await;
}

async fn an_empty_list_is_422(db: Db) {
    let server = TestServer::start(db).await;
    let request = server.post_json("/v2/user/createWithList", "[]");
    assert_refused(request, 422, "VALIDATION_FAILED").await;
    server.stop().await;
}

async fn logging_in_answers_a_token_with_rate_limit_and_expiry(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    create_ada(&client).await;
    let login = client
        .login_user()
        .username("ada")
        .password("secret-pw")
        .send()
        .await
        .expect("loginUser");
    // 10 failed logins a minute by default: 600 an hour.
    assert_eq!(header(login.headers(), "x-rate-limit"), Some("600"));
    let expires = header(login.headers(), "x-expires-after").unwrap_or_default();
    let expires =
        chrono::DateTime::parse_from_rfc3339(expires).expect("X-Expires-After in RFC 3339");
    assert!(expires > chrono::Utc::now());
    let token = login.into_inner();
    assert!(token.len() >= 32, "{token}");
    server.stop().await;
}

async fn logging_in_opens_a_session(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    create_ada(&client).await;
    log_ada_in(&client).await;
    assert_eq!(server.count("user_sessions").await, 1);
    server.stop().await;
}

async fn bad_credentials_are_400_and_open_no_session(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    create_ada(&client).await;
    let mut bodies = Vec::new();
    for (name, password) in [("ada", "wrong"), ("nobody", "secret-pw")] {
        let login = client
            .login_user()
            .username(name)
            .password(password)
            .send()
            .await;
        bodies.push(assert_api_error(login, 400, "BAD_REQUEST"));
    }
    insta::allow_duplicates! {
        insta::assert_json_snapshot!(bodies[1], @r#"
        {
          "code": 400,
          "message": "invalid username/password supplied",
          "type": "BAD_REQUEST"
        }
        "#);
    }
    assert_eq!(
        server.count("user_sessions").await,
        0,
        "failed logins open no session"
    );
    server.stop().await;
}

async fn logging_in_without_a_password_is_400(db: Db) {
    let server = TestServer::start(db).await;
    create_ada(&server.petstore()).await;
    let request = http().get(server.at("/v2/user/login?username=ada"));
    assert_refused(request, 400, "BAD_REQUEST").await;
    assert_eq!(server.count("user_sessions").await, 0);
    server.stop().await;
}

/// A client that sends ada's session token.
async fn ada_session(server: &TestServer) -> Client {
    let client = server.petstore();
    create_ada(&client).await;
    let token = log_ada_in(&client).await;
    ClientBuilder::new(&server.url)
        .bearer_token(token)
        .build()
        .expect("a client with a session")
}

async fn logging_out_ends_the_session(db: Db) {
    let server = TestServer::start(db).await;
    let session = ada_session(&server).await;
    session.logout_user().send().await.expect("logoutUser");
    assert_eq!(
        server.count("user_sessions").await,
        0,
        "logout ended the session"
    );
    server.stop().await;
}

async fn logging_out_again_or_without_a_session_is_fine(db: Db) {
    let server = TestServer::start(db).await;
    let session = ada_session(&server).await;
    session.logout_user().send().await.expect("logoutUser");
    session
        .logout_user()
        .send()
        .await
        .expect("logoutUser again");
    server
        .petstore()
        .logout_user()
        .send()
        .await
        .expect("logoutUser without a session");
    server.stop().await;
}

/// Creates ada (password `secret-pw`) and bob; renames ada to ada2 by
/// `updateUser`, without a password or a phone; returns the answer.
async fn rename_ada(client: &Client) -> types::User {
    create_ada(client).await;
    create_user(client, user("bob", None)).await;
    let mut renamed = user("ada2", None);
    renamed.phone = None;
    update_user(client, "ada", renamed)
        .await
        .expect("updateUser")
        .into_inner()
}

async fn updating_a_user_replaces_it(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    let updated = rename_ada(&client).await;
    assert_eq!(updated.username.as_str(), "ada2");
    assert!(updated.phone.is_none(), "update replaces");
    let (status, _) = api_error(client.get_user_by_name().username("ada").send().await);
    assert_eq!(status, 404);
    server.stop().await;
}

async fn updating_a_user_without_a_password_keeps_the_password(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    rename_ada(&client).await;
    assert!(logs_in(&client, "ada2", "secret-pw").await, "password kept");
    server.stop().await;
}

async fn updating_a_user_with_a_password_changes_it(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    rename_ada(&client).await;
    update_user(&client, "ada2", user("ada2", Some("new-password")))
        .await
        .expect("updateUser");
    assert!(logs_in(&client, "ada2", "new-password").await);
    assert!(!logs_in(&client, "ada2", "secret-pw").await);
    server.stop().await;
}

async fn renaming_a_user_to_a_taken_username_is_409(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    rename_ada(&client).await;
    assert_api_error(
        update_user(&client, "ada2", user("bob", None)).await,
        409,
        "CONFLICT",
    );
    server.stop().await;
}

async fn updating_a_missing_user_is_404(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    rename_ada(&client).await;
    assert_api_error(
        update_user(&client, "nobody", user("x", None)).await,
        404,
        "NOT_FOUND",
    );
    server.stop().await;
}

/// Creates ada, logs her in, and deletes her.
async fn delete_ada_with_a_session(server: &TestServer) {
    let client = server.petstore();
    create_ada(&client).await;
    log_ada_in(&client).await;
    assert_eq!(server.count("user_sessions").await, 1);
    client
        .delete_user()
        .username("ada")
        .send()
        .await
        .expect("deleteUser");
}

async fn deleting_a_user_ends_their_sessions(db: Db) {
    let server = TestServer::start(db).await;
    delete_ada_with_a_session(&server).await;
    assert_eq!(server.count("user_sessions").await, 0);
    server.stop().await;
}

async fn deleting_a_deleted_user_is_404(db: Db) {
    let server = TestServer::start(db).await;
    delete_ada_with_a_session(&server).await;
    assert_api_error(
        server.petstore().delete_user().username("ada").send().await,
        404,
        "NOT_FOUND",
    );
    server.stop().await;
}
