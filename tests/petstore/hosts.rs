//! A request must name its host once and unambiguously (HTTP/1.0 may leave
//! it out, as load balancers' health checks do), and nothing the
//! client says about its host chooses where a token goes: the implicit
//! flow's redirect URIs are compared with the public URL, never with `Host`.

use end_to_end_tests::{Db, TestServer, on_every_database, raw_exchange, send};
use petstore_portfolio_server::config::AuthMode;
use serde_json::json;

on_every_database!(
    a_host_header_cannot_send_a_token_to_another_site,
    with_a_public_url_a_host_header_cannot_either,
    requests_without_a_host_or_with_two_are_400_in_the_service_s_format,
);

const USER: &str = "keeper";
const PASSWORD: &str = "pw-keeper-1";

async fn server_with_user(db: Db, public_url: Option<&str>) -> TestServer {
    let server = TestServer::start_with(db, |c| {
        c.petstore.auth_mode = AuthMode::Enforce;
        c.public_url = public_url.map(str::to_owned);
    })
    .await;
    let (status, _, _) =
        send(server.post_json("/v2/user", json!({"username": USER, "password": PASSWORD}))).await;
    assert_eq!(status, 200);
    server
}

/// The sign-in form posted with `Host: <host>` and a redirect URI on it
/// (with the form's cookie and token, as from the page).
async fn sign_in_as_host(server: &TestServer, host: &str, redirect_uri: &str) -> String {
    let (cookie, token) = end_to_end_tests::sign_in_form(&server.url).await;
    let body = form_urlencoded::Serializer::new(String::new())
        .append_pair("csrf_token", &token)
        .append_pair("response_type", "token")
        .append_pair("client_id", "evil")
        .append_pair("redirect_uri", redirect_uri)
        .append_pair("username", USER)
        .append_pair("password", PASSWORD)
        .append_pair("action", "sign_in")
        .finish();
    let request = format!(
        "POST /oauth/authorize HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\
         Cookie: {cookie}\r\nContent-Type: application/x-www-form-urlencoded\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    raw_exchange(server, request.as_bytes()).await
}

async fn a_host_header_cannot_send_a_token_to_another_site(db: Db) {
    let server = server_with_user(db, None).await;
    for redirect_uri in [
        "http://evil.example/docs/oauth2-redirect.html",
        "https://evil.example/docs/oauth2-redirect.html",
    ] {
        let answer = sign_in_as_host(&server, "evil.example", redirect_uri).await;
        assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
        assert!(!answer.contains("access_token"), "{answer}");
        assert!(answer.contains("not registered"), "{answer}");
    }
    assert_eq!(server.count("user_sessions").await, 0, "no token was made");
    // The bound address's own Swagger UI still works.
    let own = format!("{}/docs/oauth2-redirect.html", server.url);
    let host = server.url.trim_start_matches("http://").to_owned();
    let answer = sign_in_as_host(&server, &host, &own).await;
    assert!(answer.starts_with("HTTP/1.1 303"), "{answer}");
    assert!(
        answer.contains(&format!("location: {own}#access_token=")),
        "{answer}"
    );
    server.stop().await;
}

async fn with_a_public_url_a_host_header_cannot_either(db: Db) {
    let server = server_with_user(db, Some("https://pets.example")).await;
    let answer = sign_in_as_host(
        &server,
        "evil.example",
        "https://evil.example/docs/oauth2-redirect.html",
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    let answer = sign_in_as_host(
        &server,
        "evil.example",
        "https://pets.example/docs/oauth2-redirect.html",
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 303"), "{answer}");
    assert!(
        answer.contains("location: https://pets.example/docs/oauth2-redirect.html#access_token="),
        "{answer}"
    );
    server.stop().await;
}

async fn requests_without_a_host_or_with_two_are_400_in_the_service_s_format(db: Db) {
    let server = server_with_user(db, None).await;
    let cases: [(&str, &str); 3] = [
        (
            "GET /v2/user/keeper HTTP/1.1\r\n",
            "\"type\":\"BAD_REQUEST\"",
        ),
        (
            "GET /api/site-info HTTP/1.1\r\n",
            "\"code\":\"BAD_REQUEST\"",
        ),
        (
            "GET /oauth/authorize?client_id=x HTTP/1.1\r\n",
            "BAD_REQUEST",
        ),
    ];
    for (request_line, error) in cases {
        let none = format!("{request_line}Connection: close\r\n\r\n");
        let answer = raw_exchange(&server, none.as_bytes()).await;
        assert!(answer.contains(" 400 "), "{answer}");
        assert!(answer.contains(error), "{answer}");
        assert!(answer.contains("no host"), "{answer}");
        let two = format!(
            "{request_line}Host: a.example\r\nHost: b.example\r\nConnection: close\r\n\r\n"
        );
        let answer = raw_exchange(&server, two.as_bytes()).await;
        assert!(answer.contains(" 400 "), "{answer}");
        assert!(answer.contains("more than one Host"), "{answer}");
    }
    // HTTP/1.0 has no Host requirement, and load balancers' health checks
    // send none (HAProxy's `option httpchk`): served. Two Hosts are not.
    let health = raw_exchange(&server, b"GET /api/health/ready HTTP/1.0\r\n\r\n").await;
    assert!(health.starts_with("HTTP/1.0 200"), "{health}");
    let two = raw_exchange(
        &server,
        b"GET /api/health HTTP/1.0\r\nHost: a.example\r\nHost: b.example\r\n\r\n",
    )
    .await;
    assert!(two.contains(" 400 "), "{two}");
    // An absolute URI whose host disagrees with Host.
    let answer = raw_exchange(
        &server,
        b"GET http://a.example/v2/user/keeper HTTP/1.1\r\nHost: b.example\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert!(answer.contains(" 400 "), "{answer}");
    // HTTP/2 (prior knowledge, as over h2c): a `host` header that disagrees
    // with `:authority` is refused; one that agrees, or none, is served.
    let h2 = reqwest::Client::builder()
        .http2_prior_knowledge()
        .build()
        .unwrap();
    let get = || h2.get(server.at("/v2/user/keeper"));
    let response = get().header("host", "evil.example").send().await.unwrap();
    assert_eq!(response.version(), reqwest::Version::HTTP_2);
    assert_eq!(
        response.status().as_u16(),
        400,
        "{:?}",
        response.text().await
    );
    assert_eq!(get().send().await.unwrap().status().as_u16(), 200);
    server.stop().await;
}
