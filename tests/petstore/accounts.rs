//! Users' accounts in auth mode `enforce`: only the user (or an `api_key`
//! with the scope `admin`) may change, delete or see all of a user; a new
//! password ends the user's other sessions and the Basic credentials the
//! server remembered. Each test is an attack that once worked.

use end_to_end_tests::{Db, TestServer, http, on_every_database, send, send_json};
use petstore_portfolio_server::config::{AuthMode, Scope};
use serde_json::{Value, json};

on_every_database!(
    an_anonymous_caller_cannot_take_over_or_delete_a_user,
    a_user_may_change_only_their_own_account,
    private_fields_are_shown_only_to_the_user_or_an_admin_key,
    a_new_password_ends_the_other_sessions_and_remembered_basic,
    a_deleted_user_s_sessions_and_remembered_basic_end_at_once,
    in_open_mode_the_user_operations_stay_as_upstream,
    usernames_and_passwords_are_checked,
    enforce_mode_asks_for_passwords_of_8_characters_and_says_so,
);

const ALICE: (&str, &str) = ("alice", "alice-password-1");
const BOB: (&str, &str) = ("bob", "bob-password-1");

async fn enforcing(db: Db) -> TestServer {
    let server = TestServer::start_with(db, |c| c.petstore.auth_mode = AuthMode::Enforce).await;
    for (name, password) in [ALICE, BOB] {
        let user = json!({
            "username": name, "password": password, "firstName": "First",
            "lastName": "Last", "email": format!("{name}@example.com"), "phone": "555-0100",
        });
        let (status, _, body) = send_json(server.post_json("/v2/user", user)).await;
        assert_eq!(status, 200, "{body}");
    }
    server
}

fn basic((user, password): (&str, &str)) -> String {
    use base64::Engine as _;
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
    )
}

async fn log_in(server: &TestServer, (user, password): (&str, &str)) -> (u16, String) {
    let (status, _, body) = send_json(
        http()
            .get(server.at("/v2/user/login"))
            .query(&[("username", user), ("password", password)]),
    )
    .await;
    (status, body.as_str().unwrap_or_default().to_owned())
}

async fn session(server: &TestServer, user: (&str, &str)) -> String {
    let (status, token) = log_in(server, user).await;
    assert_eq!(status, 200, "{token}");
    token
}

/// A pet store key with the scope `admin`, made through the admin API.
async fn admin_key(server: &TestServer) -> String {
    let token = server.bearer_token(&[Scope::Admin]).await;
    let (status, _, body) = send_json(
        server
            .post_json(
                "/api/admin/api-keys",
                json!({"name": "pet store admin", "service": "petstore", "scopes": ["admin"]}),
            )
            .bearer_auth(token),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    body["key"].as_str().unwrap().to_owned()
}

fn put_user(server: &TestServer, name: &str, body: Value) -> reqwest::RequestBuilder {
    http()
        .put(server.at(&format!("/v2/user/{name}")))
        .json(&body)
}

fn with(request: reqwest::RequestBuilder, authorization: &str) -> reqwest::RequestBuilder {
    request.header("authorization", authorization)
}

/// Whether `request` is allowed to see the pets (a credential that works).
async fn works(server: &TestServer, authorization: &str) -> bool {
    let find = http()
        .get(server.at("/v2/pet/findByStatus"))
        .header("authorization", authorization);
    send(find).await.0 == 200
}

async fn an_anonymous_caller_cannot_take_over_or_delete_a_user(db: Db) {
    let server = enforcing(db).await;
    let takeover = json!({"username": "bob", "password": "attacker-password"});
    let (status, _, body) = send_json(put_user(&server, "bob", takeover)).await;
    assert_eq!(status, 401, "{body}");
    assert_eq!(body["type"], "UNAUTHORIZED");
    let (status, _) = log_in(&server, ("bob", "attacker-password")).await;
    assert_eq!(status, 400, "the password did not change");
    let (status, _, body) = send_json(http().delete(server.at("/v2/user/bob"))).await;
    assert_eq!(status, 401, "{body}");
    assert_eq!(log_in(&server, BOB).await.0, 200, "bob is still there");
    server.stop().await;
}

async fn a_user_may_change_only_their_own_account(db: Db) {
    let server = enforcing(db).await;
    let alice = format!("Bearer {}", session(&server, ALICE).await);
    let takeover = json!({"username": "bob", "password": "alice-owns-bob"});
    let (status, _, body) =
        send_json(with(put_user(&server, "bob", takeover.clone()), &alice)).await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(body["type"], "FORBIDDEN");
    let (status, _, _) = send(with(http().delete(server.at("/v2/user/bob")), &alice)).await;
    assert_eq!(status, 403);
    // A user who does not exist looks the same to her: nothing to learn.
    let (status, _, _) = send(with(http().delete(server.at("/v2/user/nobody")), &alice)).await;
    assert_eq!(status, 403);
    assert_eq!(log_in(&server, BOB).await.0, 200, "bob is untouched");

    // Her own account, by her session or her Basic credentials.
    let renamed = json!({"username": "alice", "password": ALICE.1, "firstName": "Alicia"});
    let (status, _, body) = send_json(with(put_user(&server, "alice", renamed), &alice)).await;
    assert_eq!((status, body["firstName"].clone()), (200, json!("Alicia")));
    let (status, _, _) = send_json(with(
        put_user(
            &server,
            "alice",
            json!({"username": "alice", "firstName": "Al"}),
        ),
        &basic(ALICE),
    ))
    .await;
    assert_eq!(status, 200);

    // A plain pet store key acts for nobody; one with the scope admin for anyone.
    let plain = server.petstore_key().await;
    let (status, _, _) =
        send_json(put_user(&server, "bob", takeover).header("api_key", &plain)).await;
    assert_eq!(status, 403);
    let admin = admin_key(&server).await;
    let (status, _, body) = send_json(
        put_user(
            &server,
            "bob",
            json!({"username": "bob", "password": "reset-by-admin"}),
        )
        .header("api_key", &admin),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(log_in(&server, ("bob", "reset-by-admin")).await.0, 200);
    let (status, _, _) = send(
        http()
            .delete(server.at("/v2/user/nobody"))
            .header("api_key", &admin),
    )
    .await;
    assert_eq!(status, 404, "an admin may learn that a user does not exist");
    let (status, _, _) = send(
        http()
            .delete(server.at("/v2/user/bob"))
            .header("api_key", &admin),
    )
    .await;
    assert_eq!(status, 200);
    server.stop().await;
}

async fn private_fields_are_shown_only_to_the_user_or_an_admin_key(db: Db) {
    let server = enforcing(db).await;
    let get_bob = || http().get(server.at("/v2/user/bob"));
    let private = ["firstName", "lastName", "email", "phone"];
    let (status, _, anyone) = send_json(get_bob()).await;
    assert_eq!(status, 200);
    assert_eq!(anyone["username"], "bob");
    for field in private {
        assert!(
            anyone.get(field).is_none(),
            "{field} shown to anyone: {anyone}"
        );
    }
    let alice = format!("Bearer {}", session(&server, ALICE).await);
    let (_, _, to_alice) = send_json(with(get_bob(), &alice)).await;
    assert!(to_alice.get("email").is_none(), "{to_alice}");
    for authorization in [
        basic(BOB),
        format!("Bearer {}", session(&server, BOB).await),
    ] {
        let (status, _, to_bob) = send_json(with(get_bob(), &authorization)).await;
        assert_eq!(status, 200);
        assert_eq!(to_bob["email"], "bob@example.com");
        assert_eq!(to_bob["phone"], "555-0100");
        assert!(to_bob.get("password").is_none());
    }
    let admin = admin_key(&server).await;
    let (_, _, to_admin) = send_json(get_bob().header("api_key", &admin)).await;
    assert_eq!(to_admin["email"], "bob@example.com");
    // A credential that is presented must be valid.
    let (status, _, body) = send_json(with(get_bob(), &format!("Bearer {}", "x".repeat(43)))).await;
    assert_eq!(status, 401, "{body}");
    let (status, _, _) = send_json(with(get_bob(), &basic(("bob", "wrong")))).await;
    assert_eq!(status, 401);
    server.stop().await;
}

async fn a_new_password_ends_the_other_sessions_and_remembered_basic(db: Db) {
    let server = enforcing(db).await;
    let (this, other) = (session(&server, BOB).await, session(&server, BOB).await);
    let (this, other) = (format!("Bearer {this}"), format!("Bearer {other}"));
    let old_basic = basic(BOB);
    assert!(
        works(&server, &old_basic).await,
        "the server now remembers it"
    );
    assert!(works(&server, &other).await);
    let new_password = json!({"username": "bob", "password": "bob-password-2"});
    let (status, _, body) = send_json(with(put_user(&server, "bob", new_password), &this)).await;
    assert_eq!(status, 200, "{body}");
    assert!(
        works(&server, &this).await,
        "the session that changed it goes on"
    );
    assert!(!works(&server, &other).await, "the other session ended");
    assert!(
        !works(&server, &old_basic).await,
        "the old password is forgotten"
    );
    assert!(works(&server, &basic(("bob", "bob-password-2"))).await);
    assert_eq!(
        server
            .count_where(
                "user_sessions",
                "user_id = (SELECT id FROM users WHERE username = 'bob')"
            )
            .await,
        1
    );
    server.stop().await;
}

async fn a_deleted_user_s_sessions_and_remembered_basic_end_at_once(db: Db) {
    let server = enforcing(db).await;
    let bob_session = format!("Bearer {}", session(&server, BOB).await);
    assert!(works(&server, &basic(BOB)).await);
    let (status, _, _) = send(with(http().delete(server.at("/v2/user/bob")), &basic(BOB))).await;
    assert_eq!(status, 200);
    assert!(
        !works(&server, &basic(BOB)).await,
        "remembered Basic forgotten"
    );
    assert!(!works(&server, &bob_session).await, "session ended");
    // Someone signing up with the same name and another password is not bob.
    let (status, _, _) = send_json(server.post_json(
        "/v2/user",
        json!({"username": "bob", "password": "another-password"}),
    ))
    .await;
    assert_eq!(status, 200);
    assert!(!works(&server, &basic(BOB)).await);
    server.stop().await;
}

/// Clients generated from the official document, which puts no security on
/// the user operations, keep working in `open` mode (the default).
async fn in_open_mode_the_user_operations_stay_as_upstream(db: Db) {
    let server = TestServer::start(db).await;
    let user = json!({"username": "carol", "password": "carol-password", "email": "c@example.com"});
    assert_eq!(send_json(server.post_json("/v2/user", user)).await.0, 200);
    let (status, _, shown) = send_json(http().get(server.at("/v2/user/carol"))).await;
    assert_eq!(
        (status, shown["email"].clone()),
        (200, json!("c@example.com"))
    );
    let (status, _, _) = send_json(put_user(
        &server,
        "carol",
        json!({"username": "carol", "phone": "555"}),
    ))
    .await;
    assert_eq!(status, 200);
    let (status, _, _) = send(http().delete(server.at("/v2/user/carol"))).await;
    assert_eq!(status, 200);
    server.stop().await;
}

/// A username is ASCII letters, digits and `. _ @ + -` (no control
/// characters, no spaces around it, no look-alike from another script). In
/// `open` mode a password is any non-empty text, as upstream takes it: the
/// official document's example user (password `12345`) can sign up.
async fn usernames_and_passwords_are_checked(db: Db) {
    let server = TestServer::start(db).await;
    for username in [
        "bad\r\nname",
        " bob",
        "bob ",
        "\u{430}dmin",
        "ad\u{200b}min",
        "a b",
    ] {
        let user = json!({"username": username, "password": "long-enough-1"});
        let (status, _, body) = send_json(server.post_json("/v2/user", user)).await;
        assert_eq!(status, 422, "{username:?}: {body}");
        assert_eq!(body["type"], "VALIDATION_FAILED");
    }
    let (status, _, body) =
        send_json(server.post_json("/v2/user", json!({"username": "bob", "password": ""}))).await;
    assert_eq!(
        (status, body["message"].clone()),
        (422, json!("password must not be empty"))
    );
    assert_eq!(server.count("users").await, 0);
    let example = json!({
        "id": 10, "username": "theUser", "firstName": "John", "lastName": "James",
        "email": "john@email.com", "password": "12345", "phone": "12345", "userStatus": 1,
    });
    let (status, _, body) = send_json(server.post_json("/v2/user", example)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(log_in(&server, ("theUser", "12345")).await.0, 200);
    let (status, _, _) = send_json(put_user(
        &server,
        "theUser",
        json!({"username": "theUser", "password": "1"}),
    ))
    .await;
    assert_eq!(status, 200);
    let (_, _, document) = send_json(http().get(server.at("/openapi/petstore.json"))).await;
    assert_eq!(
        document.pointer("/components/schemas/User/properties/password/minLength"),
        Some(&json!(1))
    );
    server.stop().await;
}

/// In `enforce` mode a password has at least 8 characters, on create and on
/// update, and the document the server serves says so.
async fn enforce_mode_asks_for_passwords_of_8_characters_and_says_so(db: Db) {
    let server = enforcing(db).await;
    let (status, _, body) = send_json(server.post_json(
        "/v2/user",
        json!({"username": "bob2", "password": "1234567"}),
    ))
    .await;
    assert_eq!(
        (status, body["message"].clone()),
        (422, json!("password must be at least 8 characters"))
    );
    assert_eq!(server.count_where("users", "username = 'bob2'").await, 0);
    let (status, _, _) = send_json(
        put_user(
            &server,
            ALICE.0,
            json!({"username": ALICE.0, "password": "short"}),
        )
        .header("Authorization", basic(ALICE)),
    )
    .await;
    assert_eq!(status, 422);
    assert_eq!(
        log_in(&server, ALICE).await.0,
        200,
        "the old password stays"
    );
    let (_, _, document) = send_json(http().get(server.at("/openapi/petstore.json"))).await;
    assert_eq!(
        document.pointer("/components/schemas/User/properties/password/minLength"),
        Some(&json!(8))
    );
    server.stop().await;
}
