//! The pet store's security in auth mode `enforce` (and `open`, which
//! ignores credentials, as upstream): `petstore_auth` tokens (loginUser
//! sessions, the implicit flow's tokens), HTTP Basic, `api_key`; every
//! secured operation against every kind of credential; the SDK's builders.

use end_to_end_tests::{Db, TestServer, http, on_every_database, send, send_json};
use petstore_portfolio_client::petstore::{self, Refusal, refusal};
use petstore_portfolio_server::config::{AuthMode, Scope};
use serde_json::{Value, json};

use crate::support::pet;

on_every_database!(
    every_secured_operation_checks_every_kind_of_credential,
    unsecured_operations_need_nothing_even_in_enforce_mode,
    the_sdk_signs_requests_as_its_builder_says,
    a_session_ends_at_logout,
    a_script_in_a_browser_gets_no_basic_challenge,
);

const USER: &str = "keeper";
const PASSWORD: &str = "pw-keeper-1";

async fn enforcing(db: Db) -> TestServer {
    TestServer::start_with(db, |c| c.petstore.auth_mode = AuthMode::Enforce).await
}

/// Creates the user [`USER`] (no credential needed) and logs in: a session.
async fn log_in(server: &TestServer) -> String {
    let (status, _, _) =
        send_json(server.post_json("/v2/user", json!({"username": USER, "password": PASSWORD})))
            .await;
    assert!(status == 200 || status == 409, "{status}");
    let (status, _, token) = send_json(http().get(server.at(&format!(
        "/v2/user/login?username={USER}&password={PASSWORD}"
    ))))
    .await;
    assert_eq!(status, 200, "{token}");
    token.as_str().unwrap().to_owned()
}

/// A token of the implicit flow with `scope`, by the sign-in page.
async fn implicit_token(server: &TestServer, scope: &str) -> String {
    let response = end_to_end_tests::post_sign_in(
        &server.url,
        &[
            ("response_type", "token"),
            ("client_id", "tests"),
            ("scope", scope),
            ("username", USER),
            ("password", PASSWORD),
            ("action", "sign_in"),
        ],
    )
    .await;
    assert_eq!(response.status().as_u16(), 303);
    let location = response.headers()["location"].to_str().unwrap().to_owned();
    fragment(&location)["access_token"].clone()
}

/// The parameters in a URL's fragment.
pub fn fragment(location: &str) -> std::collections::HashMap<String, String> {
    let (_, fragment) = location.split_once('#').unwrap_or_default();
    form_urlencoded::parse(fragment.as_bytes())
        .map(|(name, value)| (name.into_owned(), value.into_owned()))
        .collect()
}

fn basic(user: &str, password: &str) -> String {
    use base64::Engine as _;
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
    )
}

/// Which schemes an operation takes in `enforce` mode.
struct Secured {
    method: &'static str,
    path: String,
    body: Option<Value>,
    api_key: bool,
    /// `petstore_auth` (and Basic) with these scopes; empty: not at all.
    scopes: &'static [&'static str],
    succeeds_with: u16,
}

fn secured(pet_id: i64, image_path: &str) -> Vec<Secured> {
    let both: &'static [&'static str] = &["write:pets", "read:pets"];
    let a_pet = json!({"name": "Rex", "photoUrls": []});
    let s = |method, path: String, body, api_key, scopes, succeeds_with| Secured {
        method,
        path,
        body,
        api_key,
        scopes,
        succeeds_with,
    };
    vec![
        s(
            "POST",
            "/v2/pet".into(),
            Some(a_pet.clone()),
            false,
            both,
            200,
        ),
        s(
            "PUT",
            "/v2/pet".into(),
            Some(json!({"id": pet_id, "name": "Rex", "photoUrls": []})),
            false,
            both,
            200,
        ),
        s(
            "GET",
            "/v2/pet/findByStatus?status=available".into(),
            None,
            false,
            both,
            200,
        ),
        s(
            "GET",
            "/v2/pet/findByTags?tags=a".into(),
            None,
            false,
            both,
            200,
        ),
        s("GET", format!("/v2/pet/{pet_id}"), None, true, both, 200),
        s(
            "POST",
            format!("/v2/pet/{pet_id}?name=Max"),
            None,
            false,
            both,
            200,
        ),
        s(
            "GET",
            image_path.to_owned(),
            None,
            true,
            &["read:pets"],
            200,
        ),
        s("GET", "/v2/store/inventory".into(), None, true, &[], 200),
        s("DELETE", "/v2/pet/999999".into(), None, false, both, 404),
    ]
}

async fn call(
    server: &TestServer,
    operation: &Secured,
    headers: &[(&str, &str)],
    query: Option<&str>,
) -> (u16, Value, Vec<String>) {
    let mut url = server.at(&operation.path);
    if let Some(query) = query {
        url.push(if url.contains('?') { '&' } else { '?' });
        url.push_str(query);
    }
    let method = reqwest::Method::from_bytes(operation.method.as_bytes()).unwrap();
    let mut request = http().request(method, url);
    if let Some(body) = &operation.body {
        request = request
            .header("content-type", "application/json")
            .body(body.to_string());
    }
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let challenges = response
        .headers()
        .get_all("www-authenticate")
        .iter()
        .map(|v| v.to_str().unwrap_or_default().to_owned())
        .collect();
    let text = response.text().await.unwrap_or_default();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
        challenges,
    )
}

/// A case: its name, the headers and query sent, the status and body
/// expected.
type Case<'a> = (
    &'a str,
    Vec<(&'a str, &'a str)>,
    Option<&'a str>,
    u16,
    Value,
);

fn api_response(code: u16, kind: &str, message: &str) -> Value {
    json!({"code": code, "type": kind, "message": message})
}

async fn every_secured_operation_checks_every_kind_of_credential(db: Db) {
    let server = enforcing(db).await;
    let session = log_in(&server).await;
    let key = server.petstore_key().await;
    let read_only = implicit_token(&server, "read:pets").await;
    let full = implicit_token(&server, "read:pets write:pets").await;
    let portfolio_token = server.bearer_token(&[Scope::Admin]).await;
    let bearer = |token: &str| format!("Bearer {token}");

    // A pet with an image, made with a session.
    let (status, _, added) = send_json(
        server
            .post_json("/v2/pet", json!({"name": "Rex", "photoUrls": []}))
            .header("authorization", bearer(&session)),
    )
    .await;
    assert_eq!(status, 200, "{added}");
    let pet_id = added["id"].as_i64().unwrap();
    let (status, _, uploaded) = send_json(
        http()
            .post(server.at(&format!("/v2/pet/{pet_id}/uploadImage")))
            .header("authorization", bearer(&session))
            .header("content-type", "application/octet-stream")
            .body(end_to_end_tests::TINY_PNG),
    )
    .await;
    assert_eq!(status, 200, "{uploaded}");
    let (_, _, stored) = send_json(
        http()
            .get(server.at(&format!("/v2/pet/{pet_id}")))
            .header("authorization", bearer(&session)),
    )
    .await;
    let image_url = stored["photoUrls"][0].as_str().unwrap().to_owned();
    let image_path = image_url.trim_start_matches(&server.url).to_owned();

    let mut checked = 0;
    for operation in secured(pet_id, &image_path) {
        let name = format!("{} {}", operation.method, operation.path);
        let oauth = !operation.scopes.is_empty();
        let takes = match (operation.api_key, oauth) {
            (true, true) => "an api_key header, a bearer token or HTTP Basic",
            (true, false) => "an api_key header",
            (false, true) => "a bearer token or HTTP Basic",
            (false, false) => unreachable!(),
        };
        let unauthorized = |message: &str| api_response(401, "UNAUTHORIZED", message);
        let needs = unauthorized(&format!("this operation needs {takes}"));
        let other_kind = unauthorized(&format!("this operation takes {takes}"));
        let bad_token = if oauth {
            unauthorized("the bearer token is not valid or has expired")
        } else {
            other_kind.clone()
        };
        let bad_key = if operation.api_key {
            unauthorized("the api_key is not valid")
        } else {
            other_kind.clone()
        };
        let wrong_password = if oauth {
            unauthorized("invalid username/password supplied")
        } else {
            other_kind.clone()
        };
        let session_header = bearer(&session);
        let other_service = bearer(&portfolio_token);
        let one_off = {
            let mut token = session.clone();
            let last = token.pop().unwrap();
            token.push(if last == 'A' { 'B' } else { 'A' });
            bearer(&token)
        };
        let long_token = bearer(&"t".repeat(4096));
        let wrong = basic(USER, "wrong-password");
        let right = basic(USER, PASSWORD);
        let refused: Vec<Case> = vec![
            ("nothing", vec![], None, 401, needs.clone()),
            (
                "an unknown token",
                vec![("authorization", "Bearer nope")],
                None,
                401,
                bad_token.clone(),
            ),
            (
                "a token one character off",
                vec![("authorization", &one_off)],
                None,
                401,
                bad_token.clone(),
            ),
            (
                "a token far too long",
                vec![("authorization", &long_token)],
                None,
                401,
                bad_token.clone(),
            ),
            (
                "a portfolio token",
                vec![("authorization", &other_service)],
                None,
                401,
                bad_token.clone(),
            ),
            (
                "a wrong password",
                vec![("authorization", &wrong)],
                None,
                401,
                wrong_password,
            ),
            (
                "an unknown key",
                vec![("api_key", "pk_0123456789ab_nope")],
                None,
                401,
                bad_key.clone(),
            ),
            (
                "a portfolio key",
                vec![("api_key", end_to_end_tests::keys::ADMIN)],
                None,
                401,
                bad_key,
            ),
            (
                "a key in the query",
                vec![],
                Some("api_key=whatever"),
                401,
                unauthorized(&format!(
                    "credentials are refused in the query string (api_key=...): send {takes}"
                )),
            ),
        ];
        for (case, headers, query, status, expected) in refused {
            let (got, body, challenges) = call(&server, &operation, &headers, query).await;
            assert_eq!((got, &body), (status, &expected), "{name}, {case}");
            assert_eq!(
                challenges
                    .iter()
                    .any(|c| c.starts_with("Bearer realm=\"petstore\"")),
                oauth,
                "{name}, {case}"
            );
            assert_eq!(
                challenges.iter().any(|c| c.starts_with("ApiKey")),
                operation.api_key,
                "{name}, {case}"
            );
            checked += 1;
        }

        // Each credential it takes opens it; the others are refused.
        let mut right_ones: Vec<(&str, Vec<(&str, &str)>)> = Vec::new();
        let full_header = bearer(&full);
        if oauth {
            right_ones.push(("a session", vec![("authorization", &session_header)]));
            right_ones.push(("an implicit token", vec![("authorization", &full_header)]));
            right_ones.push(("Basic", vec![("authorization", &right)]));
        }
        if operation.api_key {
            right_ones.push(("an api_key", vec![("api_key", &key)]));
        }
        for (case, headers) in right_ones {
            let (status, body, _) = call(&server, &operation, &headers, None).await;
            assert_eq!(status, operation.succeeds_with, "{name}, {case}: {body}");
            checked += 1;
        }
        if !operation.api_key {
            let (status, body, _) = call(&server, &operation, &[("api_key", &key)], None).await;
            assert_eq!((status, body), (401, other_kind.clone()), "{name}, a key");
        }
        if !oauth {
            let (status, body, _) = call(
                &server,
                &operation,
                &[("authorization", &session_header)],
                None,
            )
            .await;
            assert_eq!(
                (status, body),
                (401, other_kind.clone()),
                "{name}, a session"
            );
        }
        // A token with only read:pets opens what needs only read:pets.
        if oauth {
            let read_header = bearer(&read_only);
            let (status, body, _) = call(
                &server,
                &operation,
                &[("authorization", &read_header)],
                None,
            )
            .await;
            if operation.scopes == ["read:pets"] {
                assert_eq!(status, operation.succeeds_with, "{name}, read:pets: {body}");
            } else {
                assert_eq!(
                    (status, body),
                    (
                        403,
                        api_response(403, "FORBIDDEN", "the token lacks the scope write:pets")
                    ),
                    "{name}, read:pets"
                );
            }
        }
    }
    println!("checked {checked} answers");
    server.stop().await;
}

async fn unsecured_operations_need_nothing_even_in_enforce_mode(db: Db) {
    let server = enforcing(db).await;
    let (status, _, _) = send_json(server.post_json(
        "/v2/user",
        json!({"username": "walker", "password": "pw-walker-1"}),
    ))
    .await;
    assert_eq!(status, 200);
    let (status, _, _) = send_json(http().get(server.at("/v2/user/walker"))).await;
    assert_eq!(status, 200);
    let (status, _, order) = send_json(http().get(server.at("/v2/store/order/1"))).await;
    assert_eq!(status, 404, "{order}");
    // In open mode (the default), credentials are not even looked at.
    let open = TestServer::start(Db::Sqlite).await;
    let (status, _, _) = send_json(
        open.post_json("/v2/pet", json!({"name": "Rex", "photoUrls": []}))
            .header("authorization", "Bearer nonsense")
            .header("api_key", "nonsense"),
    )
    .await;
    assert_eq!(status, 200);
    open.stop().await;
    server.stop().await;
}

async fn the_sdk_signs_requests_as_its_builder_says(db: Db) {
    let server = enforcing(db).await;
    let session = log_in(&server).await;
    let key = server.petstore_key().await;
    let with = |builder: petstore::ClientBuilder| builder.build().unwrap();
    let nobody = with(petstore::ClientBuilder::new(&server.url));
    let refused = nobody.add_pet().body(pet("Rex", &[])).send().await;
    match refused.err().as_ref().and_then(refusal) {
        Some(Refusal::Unauthorized {
            message,
            challenges,
            ..
        }) => {
            assert_eq!(message, "this operation needs a bearer token or HTTP Basic");
            assert!(
                challenges.contains(&"Basic realm=\"petstore\"".to_owned()),
                "{challenges:?}"
            );
        }
        other => panic!("expected a 401, got {other:?}"),
    }
    let by_session = with(petstore::ClientBuilder::new(&server.url).session(&session));
    let added = by_session
        .add_pet()
        .body(pet("Rex", &[]))
        .send()
        .await
        .unwrap();
    let id = added.id.unwrap().get();
    let by_basic = with(petstore::ClientBuilder::new(&server.url).basic_auth(USER, PASSWORD));
    by_basic.get_pet_by_id().pet_id(id).send().await.unwrap();
    let by_key = with(petstore::ClientBuilder::new(&server.url).api_key(&key));
    by_key.get_inventory().send().await.unwrap();
    let refused = by_key.add_pet().body(pet("Max", &[])).send().await;
    assert!(matches!(
        refused.err().as_ref().and_then(refusal),
        Some(Refusal::Unauthorized { .. })
    ));
    server.stop().await;
}

async fn a_session_ends_at_logout(db: Db) {
    let server = enforcing(db).await;
    let session = log_in(&server).await;
    let get_pets = || {
        http()
            .get(server.at("/v2/pet/findByStatus?status=available"))
            .bearer_auth(&session)
    };
    assert_eq!(send(get_pets()).await.0, 200);
    let (status, _, _) = send(
        http()
            .get(server.at("/v2/user/logout"))
            .bearer_auth(&session),
    )
    .await;
    assert_eq!(status, 200);
    let (status, _, body) = send_json(get_pets()).await;
    assert_eq!(status, 401, "{body}");
    assert_eq!(
        body["message"],
        "the bearer token is not valid or has expired"
    );
    server.stop().await;
}

/// Failed Basic credentials count as failed logins: past the limit, 429,
/// before the password is checked. A password that verified a moment ago
/// (remembered, never refused for failures) still works.
#[tokio::test]
async fn guessing_passwords_through_basic_is_limited() {
    let server = TestServer::start_with(Db::Sqlite, |c| {
        c.petstore.auth_mode = AuthMode::Enforce;
        c.petstore.failed_logins_per_minute = 3;
    })
    .await;
    end_to_end_tests::inside_a_fresh_minute().await;
    log_in(&server).await;
    for guess in ["a", "b", "c"] {
        let (status, _, _) = send_json(
            http()
                .get(server.at("/v2/pet/findByStatus"))
                .header("authorization", basic(USER, guess)),
        )
        .await;
        assert_eq!(status, 401);
    }
    let (status, headers, body) = {
        let response = http()
            .get(server.at("/v2/pet/findByStatus"))
            .header("authorization", basic(USER, "d"))
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        (status, headers, response.json::<Value>().await.unwrap())
    };
    assert_eq!(status, 429, "{body}");
    assert_eq!(body["type"], "RATE_LIMITED");
    assert!(headers.contains_key("retry-after"));
    let (status, _, _) = send(
        http()
            .get(server.at("/v2/pet/findByStatus"))
            .header("authorization", basic(USER, PASSWORD)),
    )
    .await;
    assert_eq!(status, 200, "log_in verified it a moment ago");
    server.stop().await;
}

/// A session (a loginUser token, or one of the implicit flow) ends when its
/// time is up.
#[tokio::test]
async fn an_expired_session_is_refused() {
    let server = TestServer::start_with(Db::Sqlite, |c| {
        c.petstore.auth_mode = AuthMode::Enforce;
        c.petstore.session_ttl_secs = 1;
    })
    .await;
    let session = log_in(&server).await;
    let find = || {
        http()
            .get(server.at("/v2/pet/findByStatus"))
            .bearer_auth(&session)
    };
    assert_eq!(send(find()).await.0, 200);
    end_to_end_tests::wait_until(
        std::time::Duration::from_secs(10),
        "the session expires",
        async || send(find()).await.0 == 401,
    )
    .await;
    let (_, _, body) = send_json(find()).await;
    assert_eq!(
        body["message"],
        "the bearer token is not valid or has expired"
    );
    server.stop().await;
}

/// Scripts of web pages (Swagger UI's "Try it out") are refused without the
/// `Basic` challenge, which would make the browser show a password dialog of
/// its own and hold the request; everyone else gets every challenge.
async fn a_script_in_a_browser_gets_no_basic_challenge(db: Db) {
    let server = enforcing(db).await;
    let challenges = |headers: &reqwest::header::HeaderMap| -> Vec<String> {
        headers
            .get_all("www-authenticate")
            .iter()
            .map(|v| v.to_str().unwrap().to_owned())
            .collect()
    };
    let add = || server.post_json("/v2/pet", json!({"name": "Rex", "photoUrls": []}));
    let response = add().send().await.unwrap();
    assert_eq!(response.status().as_u16(), 401);
    assert_eq!(
        challenges(response.headers()),
        ["Bearer realm=\"petstore\"", "Basic realm=\"petstore\""]
    );
    for (name, value) in [
        ("sec-fetch-mode", "cors"),
        ("sec-fetch-mode", "same-origin"),
        ("x-requested-with", "XMLHttpRequest"),
    ] {
        let response = add().header(name, value).send().await.unwrap();
        assert_eq!(response.status().as_u16(), 401, "{name}: {value}");
        assert_eq!(
            challenges(response.headers()),
            ["Bearer realm=\"petstore\""],
            "{name}: {value}"
        );
    }
    // A page the browser navigates to is no script: the browser may ask.
    let response = add()
        .header("sec-fetch-mode", "navigate")
        .send()
        .await
        .unwrap();
    assert_eq!(challenges(response.headers()).len(), 2);
    server.stop().await;
}
