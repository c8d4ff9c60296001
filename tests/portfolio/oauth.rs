//! OAuth 2.0 for the portfolio: the client credentials grant (RFC 6749
//! section 4.4), revocation (RFC 7009), metadata (RFC 8414), and the SDK's
//! client credentials, which fetch and refresh tokens.

use std::time::Duration;

use end_to_end_tests::{
    Db, TestServer, header, http, on_every_database, send, send_json, wait_until,
};
use petstore_portfolio_client::portfolio;
use petstore_portfolio_server::config::Scope;
use serde_json::{Value, json};

on_every_database!(
    a_client_gets_a_token_by_basic_or_form_authentication,
    bad_token_requests_get_oauth_errors,
    a_revoked_token_or_client_stops_working_at_once,
    tokens_expire_and_the_sdk_fetches_new_ones,
    the_metadata_names_the_endpoints,
    guessing_client_secrets_is_limited,
);

/// `POST /api/oauth/token` with `form`, authenticated by Basic if given.
async fn token_request(
    server: &TestServer,
    basic: Option<(&str, &str)>,
    form: &[(&str, &str)],
) -> (u16, reqwest::header::HeaderMap, Value) {
    let mut request = http().post(server.at("/api/oauth/token")).form(form);
    if let Some((id, secret)) = basic {
        request = request.basic_auth(id, Some(secret));
    }
    let response = request.send().await.expect("the token endpoint answers");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = response.json().await.unwrap_or(Value::Null);
    (status, headers, body)
}

/// The status of `GET /api/admin/api-keys` with `token`, and the error.
async fn admin_read(server: &TestServer, token: &str) -> (u16, Value) {
    let (status, _, body) = send_json(
        http()
            .get(server.at("/api/admin/api-keys"))
            .bearer_auth(token),
    )
    .await;
    (status, body)
}

async fn a_client_gets_a_token_by_basic_or_form_authentication(db: Db) {
    let server = TestServer::start(db).await;
    let (id, secret) = server
        .oauth_client(&[Scope::KeysManage, Scope::ContentWrite])
        .await;
    let grant = [("grant_type", "client_credentials")];

    let (status, headers, body) = token_request(&server, Some((&id, &secret)), &grant).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(header(&headers, "cache-control"), Some("no-store"));
    assert_eq!(header(&headers, "pragma"), Some("no-cache"));
    assert_eq!(body["token_type"], "Bearer");
    assert_eq!(body["expires_in"], 3600);
    assert_eq!(body["scope"], "content:write keys:manage");
    let token = body["access_token"].as_str().unwrap();
    assert!(token.starts_with("pt_"), "{token}");
    assert_eq!(admin_read(&server, token).await.0, 200);

    // The secret in the body, and a narrower scope.
    let form = [
        ("grant_type", "client_credentials"),
        ("client_id", id.as_str()),
        ("client_secret", secret.as_str()),
        ("scope", "content:write"),
    ];
    let (status, _, body) = token_request(&server, None, &form).await;
    assert_eq!(
        (status, &body["scope"]),
        (200, &json!("content:write")),
        "{body}"
    );
    let narrow = body["access_token"].as_str().unwrap();
    let (status, refused) = admin_read(&server, narrow).await;
    assert_eq!(status, 403, "{refused}");
    assert_eq!(refused["error"]["details"]["required_scope"], "keys:manage");
    server.stop().await;
}

/// HTTP Basic credentials, the form, and the status, error code and words
/// of the description expected.
type BadTokenRequest<'a> = (
    Option<(&'a str, &'a str)>,
    Vec<(&'a str, &'a str)>,
    u16,
    &'a str,
    &'a str,
);

async fn bad_token_requests_get_oauth_errors(db: Db) {
    let server = TestServer::start(db).await;
    let (id, secret) = server.oauth_client(&[Scope::ContentWrite]).await;
    let (other, _) = server.oauth_client(&[Scope::Admin]).await;
    let basic = Some((id.as_str(), secret.as_str()));
    let grant = ("grant_type", "client_credentials");
    let cases: Vec<BadTokenRequest> = vec![
        (
            basic,
            vec![],
            400,
            "invalid_request",
            "grant_type is required",
        ),
        (
            basic,
            vec![("grant_type", "password")],
            400,
            "unsupported_grant_type",
            "not supported",
        ),
        (
            basic,
            vec![grant, ("scope", "admin")],
            400,
            "invalid_scope",
            "may not have the scope admin",
        ),
        (
            basic,
            vec![grant, ("scope", "root")],
            400,
            "invalid_scope",
            "unknown scope",
        ),
        (
            basic,
            vec![grant, ("client_secret", secret.as_str())],
            400,
            "invalid_request",
            "not both",
        ),
        (
            basic,
            vec![grant, ("grant_type", "client_credentials")],
            400,
            "invalid_request",
            "more than once",
        ),
        (
            None,
            vec![grant],
            401,
            "invalid_client",
            "authenticate the client",
        ),
        (
            Some((id.as_str(), "wrong")),
            vec![grant],
            401,
            "invalid_client",
            "client authentication failed",
        ),
        (
            Some((other.as_str(), secret.as_str())),
            vec![grant],
            401,
            "invalid_client",
            "client authentication failed",
        ),
        (
            Some(("pc_unknown", secret.as_str())),
            vec![grant],
            401,
            "invalid_client",
            "client authentication failed",
        ),
    ];
    for (auth, form, status, error, description) in cases {
        let (got, headers, body) = token_request(&server, auth, &form).await;
        assert_eq!(
            (got, body["error"].as_str()),
            (status, Some(error)),
            "{form:?}: {body}"
        );
        let said = body["error_description"].as_str().unwrap_or_default();
        assert!(said.contains(description), "{form:?}: {said}");
        assert_eq!(header(&headers, "cache-control"), Some("no-store"));
        if status == 401 {
            assert_eq!(
                header(&headers, "www-authenticate"),
                Some("Basic realm=\"portfolio\"")
            );
        }
    }
    // Not a form at all.
    let (status, _, body) = send_json(
        server
            .post_json(
                "/api/oauth/token",
                json!({"grant_type": "client_credentials"}),
            )
            .basic_auth(&id, Some(&secret)),
    )
    .await;
    assert_eq!(
        (status, &body["error"]),
        (400, &json!("invalid_request")),
        "{body}"
    );
    // A bearer token is no way for a client to authenticate (RFC 6749
    // section 5.2: an unsupported method), credentials in the body or not.
    let (status, _, body) = send_json(
        http()
            .post(server.at("/api/oauth/token"))
            .bearer_auth("pt_0123456789abcdef_token")
            .form(&[grant, ("client_id", &id), ("client_secret", &secret)]),
    )
    .await;
    assert_eq!(
        (status, &body["error"]),
        (401, &json!("invalid_client")),
        "{body}"
    );
    assert!(
        body["error_description"]
            .as_str()
            .unwrap()
            .contains("Basic scheme"),
        "{body}"
    );
    // A script of a web page (Swagger UI's Authorize) gets the error without
    // the Basic challenge, which would make the browser show a password
    // dialog of its own and hold the request.
    for (name, value) in [
        ("sec-fetch-mode", "cors"),
        ("x-requested-with", "XMLHttpRequest"),
    ] {
        let response = http()
            .post(server.at("/api/oauth/token"))
            .basic_auth(&id, Some("not-the-secret"))
            .header(name, value)
            .form(&[grant])
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), 401, "{name}");
        assert_eq!(
            header(response.headers(), "www-authenticate"),
            None,
            "{name}"
        );
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["error"], "invalid_client", "{name}");
    }
    server.stop().await;
}

async fn a_revoked_token_or_client_stops_working_at_once(db: Db) {
    let server = TestServer::start(db).await;
    let (id, secret) = server.oauth_client(&[Scope::KeysManage]).await;
    let grant = [("grant_type", "client_credentials")];
    let mut tokens = Vec::new();
    for _ in 0..3 {
        let (_, _, body) = token_request(&server, Some((&id, &secret)), &grant).await;
        tokens.push(body["access_token"].as_str().unwrap().to_owned());
    }
    let revoke = |token: &str, client: (&str, &str)| {
        http()
            .post(server.at("/api/oauth/revoke"))
            .basic_auth(client.0, Some(client.1))
            .form(&[("token", token), ("token_type_hint", "access_token")])
    };

    // RFC 7009: the token ends at once; revoking it again, or a token that
    // was never ours, is no error.
    let (status, _, body) = send(revoke(&tokens[0], (&id, &secret))).await;
    assert_eq!((status, body.as_str()), (200, ""));
    let (status, refused) = admin_read(&server, &tokens[0]).await;
    assert_eq!(status, 401, "{refused}");
    assert_eq!(
        refused["error"]["message"],
        "the bearer token is revoked or expired"
    );
    for token in [tokens[0].as_str(), "pt_0123456789abcdef_nope", "garbage"] {
        let (status, _, _) = send(revoke(token, (&id, &secret))).await;
        assert_eq!(status, 200, "{token}");
    }
    // Another client may not revoke this one's tokens.
    let (other, other_secret) = server.oauth_client(&[Scope::ContextRead]).await;
    let (status, _, body) = send_json(revoke(&tokens[1], (&other, &other_secret))).await;
    assert_eq!(
        (status, &body["error"]),
        (400, &json!("unauthorized_client")),
        "{body}"
    );
    assert_eq!(admin_read(&server, &tokens[1]).await.0, 200, "still good");

    // Revoking the client ends every token it holds, and it gets no more.
    let admin = server.portfolio_with_scopes(&[Scope::Admin]).await;
    let revoked = admin
        .revoke_oauth_client()
        .client_id(&id)
        .send()
        .await
        .expect("the client is revoked");
    assert!(revoked.revoked_at.is_some());
    for token in &tokens[1..] {
        let (status, refused) = admin_read(&server, token).await;
        assert_eq!(status, 401, "{refused}");
    }
    let (status, _, body) = token_request(&server, Some((&id, &secret)), &grant).await;
    assert_eq!((status, &body["error"]), (401, &json!("invalid_client")));
    server.stop().await;
}

async fn tokens_expire_and_the_sdk_fetches_new_ones(db: Db) {
    let server = TestServer::start_with(db, |c| c.portfolio.oauth.token_ttl_secs = 1).await;
    let (id, secret) = server.oauth_client(&[Scope::KeysManage]).await;
    let (_, _, body) = token_request(
        &server,
        Some((&id, &secret)),
        &[("grant_type", "client_credentials")],
    )
    .await;
    assert_eq!(body["expires_in"], 1);
    let token = body["access_token"].as_str().unwrap().to_owned();
    wait_until(Duration::from_secs(10), "the token expires", async || {
        admin_read(&server, &token).await
            == (
                401,
                json!({"error": {
                    "code": "UNAUTHORIZED",
                    "message": "the bearer token is revoked or expired",
                    "details": {"required_header": "Authorization", "accepted_headers": ["Authorization"]}
                }}),
            )
    })
    .await;

    // The SDK's client credentials outlive any one token.
    let client = portfolio::ClientBuilder::new(&server.url)
        .client_credentials(&id, &secret)
        .build()
        .unwrap();
    let started = std::time::Instant::now();
    let mut calls = 0;
    while started.elapsed() < Duration::from_millis(2500) {
        client
            .list_api_keys()
            .send()
            .await
            .expect("every call carries a token in force");
        calls += 1;
    }
    assert!(calls > 2, "{calls}");
    server.stop().await;
}

async fn the_metadata_names_the_endpoints(db: Db) {
    let server = TestServer::start(db).await;
    let metadata = server
        .portfolio()
        .get_authorization_server_metadata()
        .send()
        .await
        .expect("the metadata")
        .into_inner();
    assert_eq!(metadata.issuer, server.url);
    assert_eq!(metadata.token_endpoint, server.at("/api/oauth/token"));
    assert_eq!(metadata.revocation_endpoint, server.at("/api/oauth/revoke"));
    assert_eq!(metadata.grant_types_supported, ["client_credentials"]);
    assert!(
        metadata
            .scopes_supported
            .contains(&"keys:manage".to_owned())
    );
    assert_eq!(
        metadata.token_endpoint_auth_methods_supported,
        ["client_secret_basic", "client_secret_post"]
    );
    server.stop().await;
}

/// Guessing secrets at the token endpoint is limited per client and
/// address: past the limit even the right secret is refused from there
/// until the minute ends. One address cannot lock a client out for
/// everyone: the client, and the address, have ten times higher ceilings.
async fn guessing_client_secrets_is_limited(db: Db) {
    let server = TestServer::start_with(db, |c| {
        c.portfolio.oauth.failed_client_auth_per_minute = 3;
    })
    .await;
    end_to_end_tests::inside_a_fresh_minute().await;
    let (id, secret) = server.oauth_client(&[Scope::ContextRead]).await;
    let grant = [("grant_type", "client_credentials")];
    for guess in ["a", "b", "c"] {
        let (status, _, _) = token_request(&server, Some((&id, guess)), &grant).await;
        assert_eq!(status, 401);
    }
    let (status, headers, body) = token_request(&server, Some((&id, &secret)), &grant).await;
    assert_eq!(status, 429, "{body}");
    assert_eq!(body["error"]["code"], "RATE_LIMITED");
    let retry_after: u64 = header(&headers, "retry-after").unwrap().parse().unwrap();
    assert!((1..=61).contains(&retry_after), "{retry_after}");
    let elsewhere = end_to_end_tests::http_from(std::net::IpAddr::from([127, 0, 0, 9]))
        .post(server.at("/api/oauth/token"))
        .basic_auth(&id, Some(&secret))
        .form(&grant);
    let (status, _, body) = end_to_end_tests::send_json(elsewhere).await;
    assert_eq!(status, 200, "the real client from elsewhere: {body}");
    let (other, other_secret) = server.oauth_client(&[Scope::ContextRead]).await;
    let (status, _, _) = token_request(&server, Some((&other, &other_secret)), &grant).await;
    assert_eq!(status, 200, "another client from this address");
    server.stop().await;
}
