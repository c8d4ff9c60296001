//! The `user` operations: hashed passwords, atomic lists, sessions.

use end_to_end_tests::{Db, TestServer, on_every_database};
use petstore_portfolio_client::petstore::{ClientBuilder, types};
use serde_json::json;

use crate::support::{api_error, assert_error, http, json_error, send};

on_every_database!(
    create_and_read_user_without_password,
    duplicate_usernames_conflict_and_change_nothing,
    create_with_list_is_all_or_nothing,
    login_checks_credentials_and_logout_ends_the_session,
    update_user_replaces_and_keeps_the_password,
    delete_user_removes_user_and_sessions,
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

async fn create_and_read_user_without_password(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    let created = client
        .create_user()
        .body(user("ada", Some("secret")))
        .send()
        .await;
    let created = created
        .unwrap_or_else(|e| panic!("createUser: {e}"))
        .into_inner();
    assert!(created.id.is_some_and(|id| id > 0));
    assert!(created.password.is_none(), "the password is never returned");

    let fetched = client
        .get_user_by_name()
        .username("ada")
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        fetched.email.as_ref().map(|e| e.as_str()),
        Some("ada@example.test")
    );
    let (_, _, text) = send(http().get(server.at("/v2/user/ada"))).await;
    assert!(
        !text.contains("password") && !text.contains("secret"),
        "{text}"
    );
    let (_, _, xml) = send(
        http()
            .get(server.at("/v2/user/ada"))
            .header("accept", "application/xml"),
    )
    .await;
    assert!(
        !xml.contains("password") && !xml.contains("secret"),
        "{xml}"
    );

    let (status, body) = api_error(client.get_user_by_name().username("nobody").send().await);
    assert_eq!(status, 404);
    assert_error(&body, 404, "NOT_FOUND");
    server.stop().await;
}

async fn duplicate_usernames_conflict_and_change_nothing(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    client
        .create_user()
        .body(user("ada", Some("one")))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let mut again = user("ada", Some("two"));
    again.email = Some(
        "other@example.test"
            .parse()
            .unwrap_or_else(|e| panic!("{e}")),
    );
    let (status, body) = api_error(client.create_user().body(again).send().await);
    assert_eq!(status, 409);
    assert_error(&body, 409, "CONFLICT");
    let fetched = client
        .get_user_by_name()
        .username("ada")
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        fetched.email.as_ref().map(|e| e.as_str()),
        Some("ada@example.test")
    );
    assert!(
        client
            .login_user()
            .username("ada")
            .password("one")
            .send()
            .await
            .is_ok()
    );

    let post = |body: serde_json::Value| {
        http()
            .post(server.at("/v2/user"))
            .header("content-type", "application/json")
            .body(body.to_string())
    };
    for (request, expected, kind) in [
        (post(json!({"username": ""})), 422, "VALIDATION_FAILED"),
        (
            post(json!({"username": "x".repeat(65)})),
            422,
            "VALIDATION_FAILED",
        ),
        (post(json!({"firstName": "No Name"})), 400, "BAD_REQUEST"),
        (
            post(json!({"username": "bob", "userStatus": "active"})),
            400,
            "BAD_REQUEST",
        ),
    ] {
        let (status, content_type, text) = send(request).await;
        assert_eq!(status, expected, "{text}");
        json_error(status, &content_type, &text, kind);
    }
    server.stop().await;
}

async fn create_with_list_is_all_or_nothing(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    let last = client
        .create_users_with_list_input()
        .body(vec![user("u1", Some("p")), user("u2", None)])
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(last.username.as_str(), "u2", "answers with the last user");

    // u3 is new, u1 exists: neither is created.
    let (status, body) = api_error(
        client
            .create_users_with_list_input()
            .body(vec![user("u3", None), user("u1", None)])
            .send()
            .await,
    );
    assert_eq!(status, 409);
    assert_error(&body, 409, "CONFLICT");
    let (status, _) = api_error(client.get_user_by_name().username("u3").send().await);
    assert_eq!(status, 404, "the whole list was rolled back");

    // A name repeated inside the list conflicts too.
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

    let (status, content_type, text) = send(
        http()
            .post(server.at("/v2/user/createWithList"))
            .header("content-type", "application/json")
            .body("[]"),
    )
    .await;
    json_error(status, &content_type, &text, "VALIDATION_FAILED");
    server.stop().await;
}

async fn login_checks_credentials_and_logout_ends_the_session(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    client
        .create_user()
        .body(user("ada", Some("secret")))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));

    let login = client
        .login_user()
        .username("ada")
        .password("secret")
        .send()
        .await;
    let login = login.unwrap_or_else(|e| panic!("loginUser: {e}"));
    let header = |name: &str| {
        login
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
            .unwrap_or_default()
    };
    assert_eq!(header("x-rate-limit"), "5000");
    let expires = chrono::DateTime::parse_from_rfc3339(&header("x-expires-after"))
        .unwrap_or_else(|e| panic!("X-Expires-After is not RFC 3339: {e}"));
    assert!(expires > chrono::Utc::now());
    let token = login.into_inner();
    assert!(token.len() >= 32, "{token}");
    assert_eq!(server.count("user_sessions").await, 1);

    for (name, password) in [("ada", "wrong"), ("nobody", "secret")] {
        let (status, body) = api_error(
            client
                .login_user()
                .username(name)
                .password(password)
                .send()
                .await,
        );
        assert_eq!(status, 400);
        assert_error(&body, 400, "BAD_REQUEST");
    }
    let (status, content_type, text) =
        send(http().get(server.at("/v2/user/login?username=ada"))).await;
    json_error(status, &content_type, &text, "BAD_REQUEST");
    assert_eq!(
        server.count("user_sessions").await,
        1,
        "failed logins open no session"
    );

    let session = ClientBuilder::new(&server.url)
        .bearer_token(token)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    session
        .logout_user()
        .send()
        .await
        .unwrap_or_else(|e| panic!("logoutUser: {e}"));
    assert_eq!(
        server.count("user_sessions").await,
        0,
        "logout ended the session"
    );
    // Logging out again, or without a session, is fine.
    session
        .logout_user()
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    client
        .logout_user()
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    server.stop().await;
}

async fn update_user_replaces_and_keeps_the_password(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    client
        .create_user()
        .body(user("ada", Some("secret")))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    client
        .create_user()
        .body(user("bob", None))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));

    let mut renamed = user("ada2", None);
    renamed.phone = None;
    let updated = client
        .update_user()
        .username("ada")
        .body(renamed)
        .send()
        .await;
    let updated = updated
        .unwrap_or_else(|e| panic!("updateUser: {e}"))
        .into_inner();
    assert_eq!(updated.username.as_str(), "ada2");
    assert!(updated.phone.is_none(), "update replaces");
    let (status, _) = api_error(client.get_user_by_name().username("ada").send().await);
    assert_eq!(status, 404);
    assert!(
        client
            .login_user()
            .username("ada2")
            .password("secret")
            .send()
            .await
            .is_ok(),
        "password kept"
    );

    client
        .update_user()
        .username("ada2")
        .body(user("ada2", Some("new")))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        client
            .login_user()
            .username("ada2")
            .password("new")
            .send()
            .await
            .is_ok()
    );
    assert!(
        client
            .login_user()
            .username("ada2")
            .password("secret")
            .send()
            .await
            .is_err()
    );

    let (status, body) = api_error(
        client
            .update_user()
            .username("ada2")
            .body(user("bob", None))
            .send()
            .await,
    );
    assert_eq!(status, 409);
    assert_error(&body, 409, "CONFLICT");
    let (status, body) = api_error(
        client
            .update_user()
            .username("nobody")
            .body(user("x", None))
            .send()
            .await,
    );
    assert_eq!(status, 404);
    assert_error(&body, 404, "NOT_FOUND");
    server.stop().await;
}

async fn delete_user_removes_user_and_sessions(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    client
        .create_user()
        .body(user("ada", Some("secret")))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    client
        .login_user()
        .username("ada")
        .password("secret")
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(server.count("user_sessions").await, 1);
    client
        .delete_user()
        .username("ada")
        .send()
        .await
        .unwrap_or_else(|e| panic!("deleteUser: {e}"));
    assert_eq!(server.count("user_sessions").await, 0);
    let (status, body) = api_error(client.delete_user().username("ada").send().await);
    assert_eq!(status, 404);
    assert_error(&body, 404, "NOT_FOUND");
    server.stop().await;
}
