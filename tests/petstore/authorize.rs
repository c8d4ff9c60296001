//! `/oauth/authorize`, the implicit flow's sign-in page (RFC 6749 section
//! 4.2): the page, a sign-in that sends the token in the fragment to a
//! registered redirect URI only, and the flow's errors.

use end_to_end_tests::{Db, TestServer, http, send, send_json};
use petstore_portfolio_server::config::AuthMode;
use serde_json::json;

use crate::auth::fragment;

const USER: &str = "signer";
const PASSWORD: &str = "pw-signer-1";

end_to_end_tests::on_every_database!(a_sign_in_not_from_the_page_is_refused);

async fn server_with_user(
    adjust: impl FnOnce(&mut petstore_portfolio_server::Config),
) -> TestServer {
    server_with_user_on(Db::Sqlite, adjust).await
}

async fn server_with_user_on(
    db: Db,
    adjust: impl FnOnce(&mut petstore_portfolio_server::Config),
) -> TestServer {
    let server = TestServer::start_with(db, |c| {
        c.petstore.auth_mode = AuthMode::Enforce;
        adjust(c);
    })
    .await;
    let (status, _, _) =
        send_json(server.post_json("/v2/user", json!({"username": USER, "password": PASSWORD})))
            .await;
    assert_eq!(status, 200);
    server
}

/// Swagger UI's redirect page on this server.
fn swagger_redirect(server: &TestServer) -> String {
    server.at("/docs/oauth2-redirect.html")
}

async fn sign_in(server: &TestServer, fields: &[(&str, &str)]) -> reqwest::Response {
    end_to_end_tests::post_sign_in(&server.url, fields).await
}

#[tokio::test]
async fn the_page_asks_for_a_name_and_password_and_escapes_what_it_shows() {
    let server = server_with_user(|_| {}).await;
    let redirect = swagger_redirect(&server);
    let response = http()
        .get(server.at("/oauth/authorize"))
        .query(&[
            ("response_type", "token"),
            ("client_id", "<script>alert(1)</script>"),
            ("redirect_uri", redirect.as_str()),
            ("scope", "read:pets"),
            ("state", "xyz\"><b>"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    let headers = response.headers().clone();
    assert!(
        headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html")
    );
    assert_eq!(headers["x-frame-options"], "DENY");
    assert_eq!(headers["cache-control"], "no-store");
    let page = response.text().await.unwrap();
    assert!(page.contains("name=\"password\""), "{page}");
    assert!(
        page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "{page}"
    );
    assert!(!page.contains("<script>"), "{page}");
    assert!(page.contains("value=\"xyz&quot;&gt;&lt;b&gt;\""), "{page}");
    server.stop().await;
}

#[tokio::test]
async fn signing_in_sends_the_token_in_the_fragment_and_it_works() {
    let server = server_with_user(|_| {}).await;
    let redirect = swagger_redirect(&server);
    let response = sign_in(
        &server,
        &[
            ("response_type", "token"),
            ("client_id", "swagger-ui"),
            ("redirect_uri", &redirect),
            ("scope", "write:pets read:pets"),
            ("state", "s-123"),
            ("username", USER),
            ("password", PASSWORD),
            ("action", "sign_in"),
        ],
    )
    .await;
    assert_eq!(response.status().as_u16(), 303);
    let location = response.headers()["location"].to_str().unwrap().to_owned();
    assert!(location.starts_with(&format!("{redirect}#")), "{location}");
    let params = fragment(&location);
    assert_eq!(params["token_type"], "Bearer");
    assert_eq!(params["scope"], "write:pets read:pets");
    assert_eq!(params["state"], "s-123");
    assert_eq!(params["expires_in"], "3600");
    let (status, _, body) = send_json(
        server
            .post_json("/v2/pet", json!({"name": "Rex", "photoUrls": []}))
            .bearer_auth(&params["access_token"]),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    // The token is a session: it is stored hashed, and logout ends it.
    assert_eq!(
        server
            .count_where(
                "user_sessions",
                &format!("token_hash = '{}'", params["access_token"])
            )
            .await,
        0
    );
    server.stop().await;
}

#[tokio::test]
async fn the_flow_refuses_what_it_must() {
    let server = server_with_user(|_| {}).await;
    let redirect = swagger_redirect(&server);
    let base = |extra: &[(&'static str, &'static str)]| {
        let mut fields = vec![
            ("response_type", "token"),
            ("client_id", "swagger-ui"),
            ("username", USER),
            ("password", PASSWORD),
        ];
        fields.extend_from_slice(extra);
        fields
    };

    // A wrong password shows the page again, with a reason.
    let mut fields = base(&[]);
    fields.retain(|(name, _)| *name != "password");
    fields.push(("password", "wrong"));
    let response = sign_in(&server, &fields).await;
    assert_eq!(response.status().as_u16(), 401);
    assert!(
        response
            .text()
            .await
            .unwrap()
            .contains("Wrong username or password")
    );

    // Errors go to the redirect URI, in the fragment.
    for (extra, error) in [
        (vec![("scope", "admin")], "invalid_scope"),
        (vec![("action", "cancel")], "access_denied"),
    ] {
        let response = sign_in(&server, &base(&extra)).await;
        assert_eq!(response.status().as_u16(), 303, "{error}");
        let location = response.headers()["location"].to_str().unwrap().to_owned();
        assert!(location.starts_with(&redirect), "{location}");
        assert_eq!(fragment(&location)["error"], error);
    }
    let mut code_flow = base(&[]);
    code_flow[0] = ("response_type", "code");
    let response = sign_in(&server, &code_flow).await;
    let location = response.headers()["location"].to_str().unwrap().to_owned();
    assert_eq!(fragment(&location)["error"], "unsupported_response_type");

    // A redirect URI that is not registered is never sent anything.
    let response = sign_in(
        &server,
        &base(&[("redirect_uri", "https://attacker.example/steal")]),
    )
    .await;
    assert_eq!(response.status().as_u16(), 400);
    assert!(response.headers().get("location").is_none());
    assert!(response.text().await.unwrap().contains("not registered"));
    let response = sign_in(&server, &[("response_type", "token")]).await;
    assert_eq!(response.status().as_u16(), 400, "no client_id");

    // Not a form; a method it does not have.
    let (status, _, _) =
        send(server.post_json("/oauth/authorize", json!({"client_id": "x"}))).await;
    assert_eq!(status, 415);
    let (status, _, body) = send_json(http().put(server.at("/oauth/authorize"))).await;
    assert_eq!(
        (status, &body["type"]),
        (405, &json!("METHOD_NOT_ALLOWED")),
        "{body}"
    );
    assert_eq!(server.count("user_sessions").await, 0, "no token was made");
    server.stop().await;
}

/// The operator's list of redirect URIs replaces the default.
#[tokio::test]
async fn only_the_registered_redirect_uris_are_used() {
    let server = server_with_user(|c| {
        c.petstore.oauth_redirect_uris = vec!["https://app.example/callback".to_owned()];
    })
    .await;
    let response = sign_in(
        &server,
        &[
            ("response_type", "token"),
            ("client_id", "app"),
            ("username", USER),
            ("password", PASSWORD),
        ],
    )
    .await;
    let location = response.headers()["location"].to_str().unwrap().to_owned();
    assert!(
        location.starts_with("https://app.example/callback#access_token="),
        "{location}"
    );
    let swagger = swagger_redirect(&server);
    let response = sign_in(
        &server,
        &[
            ("response_type", "token"),
            ("client_id", "app"),
            ("redirect_uri", &swagger),
            ("username", USER),
            ("password", PASSWORD),
        ],
    )
    .await;
    assert_eq!(response.status().as_u16(), 400);
    server.stop().await;
}

/// Login CSRF: another site's page posting the form (with the attacker's
/// name and password, to sign the victim's browser in as the attacker) has
/// neither the page's cookie (`SameSite=Strict`) nor its token: 403, and no
/// token is made.
async fn a_sign_in_not_from_the_page_is_refused(db: Db) {
    let server = server_with_user_on(db, |_| {}).await;
    let fields = [
        ("response_type", "token"),
        ("client_id", "app"),
        ("username", USER),
        ("password", PASSWORD),
        ("action", "sign_in"),
    ];
    let (cookie, token) = end_to_end_tests::sign_in_form(&server.url).await;
    let page = http()
        .get(server.at("/oauth/authorize?response_type=token&client_id=app"))
        .send()
        .await
        .unwrap();
    let set_cookie = page.headers()["set-cookie"].to_str().unwrap().to_owned();
    for attribute in ["HttpOnly", "SameSite=Strict", "Path=/oauth/authorize"] {
        assert!(set_cookie.contains(attribute), "{set_cookie}");
    }
    let post = |cookie: Option<&str>, token: Option<&str>| {
        let mut fields = fields.to_vec();
        if let Some(token) = token {
            fields.push(("csrf_token", token));
        }
        let mut request = http().post(server.at("/oauth/authorize")).form(&fields);
        if let Some(cookie) = cookie {
            request = request.header("cookie", cookie.to_owned());
        }
        request
    };
    let other_cookie = "petstore_signin=not-the-one";
    for (cookie, token) in [
        (None, None),
        (None, Some(token.as_str())),
        (Some(cookie.as_str()), None),
        (Some(other_cookie), Some(token.as_str())),
    ] {
        let (status, _, body) = send(post(cookie, token)).await;
        assert_eq!(status, 403, "{cookie:?} {token:?}: {body}");
        assert!(body.contains("open the sign-in page again"), "{body}");
    }
    assert_eq!(server.count("user_sessions").await, 0, "no token was made");
    server.stop().await;
}
