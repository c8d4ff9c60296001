//! The access matrix: every operation that asks for a credential, against
//! every kind of credential: none, malformed, unknown, one character off,
//! too long, in the query string, revoked, expired, of the wrong kind, of
//! the other service, with the wrong scope and with the right one. Each
//! answer's status and body are checked whole.

use end_to_end_tests::{Db, TestServer, http, on_every_database, send, send_json};
use petstore_portfolio_server::config::Scope;
use petstore_portfolio_server::fixtures;
use reqwest::header::HeaderValue;
use serde_json::{Value, json};

on_every_database!(every_protected_operation_refuses_every_bad_credential);

/// Which credentials an operation takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    /// An API key.
    Protected,
    /// An API key or a bearer token.
    Authenticated,
    /// A bearer token.
    Private,
}

impl Level {
    fn takes_keys(self) -> bool {
        self != Level::Private
    }

    fn takes_tokens(self) -> bool {
        self != Level::Protected
    }

    fn headers(self) -> Vec<&'static str> {
        match self {
            Level::Protected => vec!["X-API-Key"],
            Level::Authenticated => vec!["X-API-Key", "Authorization"],
            Level::Private => vec!["Authorization"],
        }
    }

    fn missing(self) -> &'static str {
        match self {
            Level::Protected => "this operation needs an API key in the X-API-Key header",
            Level::Authenticated => {
                "this operation needs an API key in the X-API-Key header or a bearer token \
                 (Authorization: Bearer)"
            }
            Level::Private => {
                "this operation needs a bearer token (Authorization: Bearer, from \
                 POST /api/oauth/token)"
            }
        }
    }

    /// The whole 401 body.
    fn unauthorized(self, message: &str) -> Value {
        let headers = self.headers();
        json!({"error": {
            "code": "UNAUTHORIZED",
            "message": message,
            "details": {"required_header": headers[0], "accepted_headers": headers},
        }})
    }
}

/// One operation: how to call it with a body that is right, the scope it
/// needs, and what it answers when the credential is right.
struct Operation {
    method: &'static str,
    path: &'static str,
    body: Option<Value>,
    level: Level,
    scope: Scope,
    succeeds_with: u16,
}

fn op(
    method: &'static str,
    path: &'static str,
    body: Option<Value>,
    level: Level,
    scope: Scope,
    succeeds_with: u16,
) -> Operation {
    Operation {
        method,
        path,
        body,
        level,
        scope,
        succeeds_with,
    }
}

/// Every operation with a credential, in an order where each right call
/// finds what it needs (a project is made before it is replaced).
fn operations() -> Vec<Operation> {
    use Level::{Authenticated, Private, Protected};
    let contact = json!({"name": "Ada", "email": "ada@example.test"});
    let post_slug = json!({"post_slug": "why-contract-first"});
    let site = json!({"name": "Ada", "headline": "Engineer", "bio": "Builds things.", "links": []});
    let project = json!({
        "slug": "matrix", "title": "Matrix", "summary": "s", "description": "d",
        "tags": ["t"], "featured": false
    });
    let achievement =
        json!({"slug": "matrix", "title": "Matrix", "description": "d", "date": "2026-01-02"});
    let post = json!({
        "slug": "matrix", "title": "Matrix", "summary": "s", "body": "b", "tags": [],
        "published_at": "2026-01-02T03:04:05Z"
    });
    let manage = json!({"name": "matrix", "scopes": ["keys:manage"]});
    vec![
        op(
            "GET",
            "/api/llm-context",
            None,
            Protected,
            Scope::ContextRead,
            200,
        ),
        op(
            "POST",
            "/api/contact",
            Some(contact),
            Protected,
            Scope::ContactWrite,
            201,
        ),
        op(
            "GET",
            "/api/analytics/summary",
            None,
            Protected,
            Scope::AnalyticsRead,
            200,
        ),
        op(
            "POST",
            "/api/social-publish",
            Some(post_slug.clone()),
            Authenticated,
            Scope::SocialPublish,
            200,
        ),
        op(
            "POST",
            "/social-publish",
            Some(post_slug.clone()),
            Authenticated,
            Scope::SocialPublish,
            200,
        ),
        op(
            "POST",
            "/api/notify-subscribers",
            Some(post_slug.clone()),
            Authenticated,
            Scope::SubscribersNotify,
            202,
        ),
        op(
            "POST",
            "/notify-subscribers",
            Some(post_slug),
            Authenticated,
            Scope::SubscribersNotify,
            202,
        ),
        op(
            "PUT",
            "/api/admin/site-info",
            Some(site),
            Private,
            Scope::ContentWrite,
            200,
        ),
        op(
            "POST",
            "/api/admin/projects",
            Some(project.clone()),
            Private,
            Scope::ContentWrite,
            201,
        ),
        op(
            "PUT",
            "/api/admin/projects/matrix",
            Some(project),
            Private,
            Scope::ContentWrite,
            200,
        ),
        op(
            "DELETE",
            "/api/admin/projects/matrix",
            None,
            Private,
            Scope::ContentWrite,
            204,
        ),
        op(
            "POST",
            "/api/admin/achievements",
            Some(achievement.clone()),
            Private,
            Scope::ContentWrite,
            201,
        ),
        op(
            "PUT",
            "/api/admin/achievements/matrix",
            Some(achievement),
            Private,
            Scope::ContentWrite,
            200,
        ),
        op(
            "DELETE",
            "/api/admin/achievements/matrix",
            None,
            Private,
            Scope::ContentWrite,
            204,
        ),
        op(
            "POST",
            "/api/admin/posts",
            Some(post.clone()),
            Private,
            Scope::ContentWrite,
            201,
        ),
        op(
            "PUT",
            "/api/admin/posts/matrix",
            Some(post),
            Private,
            Scope::ContentWrite,
            200,
        ),
        op(
            "DELETE",
            "/api/admin/posts/matrix",
            None,
            Private,
            Scope::ContentWrite,
            204,
        ),
        op(
            "GET",
            "/api/admin/subscribers",
            None,
            Private,
            Scope::SubscribersRead,
            200,
        ),
        op(
            "DELETE",
            "/api/admin/subscribers/999999",
            None,
            Private,
            Scope::SubscribersWrite,
            404,
        ),
        op(
            "GET",
            "/api/admin/contact-submissions",
            None,
            Private,
            Scope::Admin,
            200,
        ),
        op(
            "GET",
            "/api/admin/api-keys",
            None,
            Private,
            Scope::KeysManage,
            200,
        ),
        op(
            "POST",
            "/api/admin/api-keys",
            Some(manage.clone()),
            Private,
            Scope::KeysManage,
            201,
        ),
        op(
            "POST",
            "/api/admin/api-keys/nope/rotate",
            None,
            Private,
            Scope::KeysManage,
            404,
        ),
        op(
            "POST",
            "/api/admin/api-keys/nope/revoke",
            None,
            Private,
            Scope::KeysManage,
            404,
        ),
        op(
            "GET",
            "/api/admin/key-requests",
            None,
            Private,
            Scope::KeysManage,
            200,
        ),
        op(
            "POST",
            "/api/admin/key-requests/nope/approve",
            Some(json!({"scopes": ["keys:manage"]})),
            Private,
            Scope::KeysManage,
            404,
        ),
        op(
            "POST",
            "/api/admin/key-requests/nope/reject",
            None,
            Private,
            Scope::KeysManage,
            404,
        ),
        op(
            "GET",
            "/api/admin/oauth-clients",
            None,
            Private,
            Scope::KeysManage,
            200,
        ),
        op(
            "POST",
            "/api/admin/oauth-clients",
            Some(manage),
            Private,
            Scope::KeysManage,
            201,
        ),
        op(
            "POST",
            "/api/admin/oauth-clients/nope/revoke",
            None,
            Private,
            Scope::KeysManage,
            404,
        ),
        op(
            "GET",
            "/api/admin/outbox/failed",
            None,
            Private,
            Scope::Admin,
            200,
        ),
        op(
            "POST",
            "/api/admin/outbox/requeue",
            Some(json!({})),
            Private,
            Scope::Admin,
            200,
        ),
    ]
}

/// A scope that is not `scope` and grants nothing more.
fn another_scope(scope: Scope) -> Scope {
    if scope == Scope::SubscribersRead {
        Scope::ContextRead
    } else {
        Scope::SubscribersRead
    }
}

/// How a request presents its credential.
#[derive(Debug, Clone)]
enum Presented {
    Nothing,
    Key(String),
    /// Raw bytes in `X-API-Key` (not text).
    KeyBytes(Vec<u8>),
    Bearer(String),
    Authorization(String),
    /// A credential in the query string, and a good key in the header.
    KeyInQuery(&'static str, String),
}

async fn call(
    server: &TestServer,
    operation: &Operation,
    presented: &Presented,
) -> (u16, Value, Vec<String>) {
    let mut url = server.at(operation.path);
    if let Presented::KeyInQuery(name, key) = presented {
        url = format!("{url}?{name}={key}");
    }
    let method = reqwest::Method::from_bytes(operation.method.as_bytes()).unwrap();
    let mut request = http().request(method, url);
    if let Some(body) = &operation.body {
        request = request
            .header("content-type", "application/json")
            .body(body.to_string());
    }
    request = match presented {
        Presented::Nothing => request,
        Presented::Key(key) | Presented::KeyInQuery(_, key) => request.header("x-api-key", key),
        Presented::KeyBytes(bytes) => {
            request.header("x-api-key", HeaderValue::from_bytes(bytes).unwrap())
        }
        Presented::Bearer(token) => request.bearer_auth(token),
        Presented::Authorization(value) => request.header("authorization", value),
    };
    let response = request.send().await.expect("the server answers");
    let status = response.status().as_u16();
    let challenges = response
        .headers()
        .get_all("www-authenticate")
        .iter()
        .map(|v| v.to_str().unwrap_or_default().to_owned())
        .collect();
    let text = response.text().await.unwrap_or_default();
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (status, body, challenges)
}

/// Keys and tokens of every kind, made through the admin API and the
/// token endpoint (and one expired token written straight to the
/// database, as time would leave it).
struct Credentials {
    admin_token: String,
}

impl Credentials {
    async fn new(server: &TestServer) -> Self {
        Credentials {
            admin_token: server.bearer_token(&[Scope::Admin]).await,
        }
    }

    async fn key(&self, server: &TestServer, scopes: &[Scope]) -> (String, String) {
        let (status, _, body) = send_json(
            server
                .post_json(
                    "/api/admin/api-keys",
                    json!({"name": "matrix", "scopes": scopes}),
                )
                .bearer_auth(&self.admin_token),
        )
        .await;
        assert_eq!(status, 201, "{body}");
        (
            body["api_key"]["id"].as_str().unwrap().to_owned(),
            body["key"].as_str().unwrap().to_owned(),
        )
    }

    async fn revoked_key(&self, server: &TestServer) -> String {
        let (id, key) = self.key(server, &[Scope::Admin]).await;
        let (status, _, _) = send_json(
            http()
                .post(server.at(&format!("/api/admin/api-keys/{id}/revoke")))
                .bearer_auth(&self.admin_token),
        )
        .await;
        assert_eq!(status, 200);
        key
    }

    /// A key rotated with no grace: expired at once.
    async fn expired_key(&self, server: &TestServer) -> String {
        let (id, key) = self.key(server, &[Scope::Admin]).await;
        let (status, _, _) = send_json(
            http()
                .post(server.at(&format!(
                    "/api/admin/api-keys/{id}/rotate?old_key_valid_for_hours=0"
                )))
                .bearer_auth(&self.admin_token),
        )
        .await;
        assert_eq!(status, 200);
        key
    }

    async fn revoked_token(&self, server: &TestServer) -> String {
        let (id, secret) = server.oauth_client(&[Scope::Admin]).await;
        let (_, _, body) = send_json(
            http()
                .post(server.at("/api/oauth/token"))
                .basic_auth(&id, Some(&secret))
                .form(&[("grant_type", "client_credentials")]),
        )
        .await;
        let token = body["access_token"].as_str().unwrap().to_owned();
        let (status, _, _) = send(
            http()
                .post(server.at("/api/oauth/revoke"))
                .basic_auth(&id, Some(&secret))
                .form(&[("token", token.as_str())]),
        )
        .await;
        assert_eq!(status, 200);
        token
    }

    async fn expired_token(server: &TestServer) -> String {
        let (client_id, _) = server.oauth_client(&[Scope::Admin]).await;
        fixtures::insert_expired_token(&server.database_url(), &client_id, &[Scope::Admin])
            .await
            .expect("the expired token is stored")
    }

    /// A session token of the pet store (a user logged in).
    async fn petstore_session(server: &TestServer) -> String {
        let (status, _, _) = send_json(server.post_json(
            "/v2/user",
            json!({"username": "matrix", "password": "pw-matrix-1"}),
        ))
        .await;
        assert_eq!(status, 200);
        let (status, _, body) =
            send_json(http().get(server.at("/v2/user/login?username=matrix&password=pw-matrix-1")))
                .await;
        assert_eq!(status, 200, "{body}");
        body.as_str().unwrap().to_owned()
    }
}

/// One character changed at the end.
fn one_off(secret: &str) -> String {
    let mut changed = secret.to_owned();
    let last = changed.pop().unwrap_or('A');
    changed.push(if last == 'A' { 'B' } else { 'A' });
    changed
}

async fn every_protected_operation_refuses_every_bad_credential(db: Db) {
    let server = TestServer::start(db).await;
    let made = Credentials::new(&server).await;
    let revoked_key = made.revoked_key(&server).await;
    let expired_key = made.expired_key(&server).await;
    let revoked_token = made.revoked_token(&server).await;
    let expired_token = Credentials::expired_token(&server).await;
    let session = Credentials::petstore_session(&server).await;
    let (_, any_key) = made.key(&server, &[Scope::Admin]).await;
    let any_token = server.bearer_token(&[Scope::Admin]).await;
    let (_, petstore_key) = {
        // A key of the pet store's opens nothing here.
        let (status, _, body) = send_json(
            server
                .post_json(
                    "/api/admin/api-keys",
                    json!({"name": "shop", "service": "petstore"}),
                )
                .bearer_auth(&made.admin_token),
        )
        .await;
        assert_eq!(status, 201, "{body}");
        ((), body["key"].as_str().unwrap().to_owned())
    };
    let unknown_key = format!("pk_0123456789ab_{}", "A".repeat(43));
    let unknown_token = format!("pt_0123456789abcdef_{}", "A".repeat(43));
    let mut checked = 0;

    for operation in operations() {
        let level = operation.level;
        let name = format!("{} {}", operation.method, operation.path);
        let (_, right_key) = made.key(&server, &[operation.scope]).await;
        let (_, wrong_key) = made.key(&server, &[another_scope(operation.scope)]).await;
        let right_token = server.bearer_token(&[operation.scope]).await;
        let wrong_token = server.bearer_token(&[another_scope(operation.scope)]).await;

        let key_not_valid = level.unauthorized(if level.takes_keys() {
            "the API key is not valid"
        } else {
            level.missing()
        });
        let key_no_longer = level.unauthorized(if level.takes_keys() {
            "the API key is revoked or expired"
        } else {
            level.missing()
        });
        let token_not_valid = level.unauthorized(if level.takes_tokens() {
            "the bearer token is not valid"
        } else {
            level.missing()
        });
        let token_no_longer = level.unauthorized(if level.takes_tokens() {
            "the bearer token is revoked or expired"
        } else {
            level.missing()
        });
        // Credentials of the kind the operation does not take.
        let key_instead = match level {
            Level::Private => level.unauthorized(
                "this operation takes a bearer token (Authorization: Bearer, from \
                 POST /api/oauth/token), not an API key",
            ),
            _ => key_not_valid.clone(),
        };
        let key_instead_no_longer = match level {
            Level::Private => key_instead.clone(),
            _ => key_no_longer.clone(),
        };
        let token_instead = match level {
            Level::Protected => level.unauthorized(
                "this operation takes an API key in the X-API-Key header, not a bearer token",
            ),
            _ => token_not_valid.clone(),
        };
        let token_instead_no_longer = match level {
            Level::Protected => token_instead.clone(),
            _ => token_no_longer.clone(),
        };
        let scheme = if level.takes_tokens() {
            level.unauthorized(&format!(
                "{}; the Authorization header must use the Bearer scheme",
                level.missing()
            ))
        } else {
            level.unauthorized(level.missing())
        };
        let in_query = level.unauthorized(&format!(
            "credentials are refused in the query string (api_key=...): {}",
            match level {
                Level::Protected => "send the API key in the X-API-Key header",
                Level::Authenticated => {
                    "send an API key in the X-API-Key header, or a token in Authorization: Bearer"
                }
                Level::Private => "send the token in Authorization: Bearer",
            }
        ));
        let forbidden = |what: &str| {
            json!({"error": {
                "code": "FORBIDDEN",
                "message": format!("the {what} lacks the scope {}", operation.scope),
                "details": {"required_scope": operation.scope.as_str()},
            }})
        };

        let refused: Vec<(&str, Presented, u16, Value)> = vec![
            (
                "no credential",
                Presented::Nothing,
                401,
                level.unauthorized(level.missing()),
            ),
            (
                "odd bytes",
                Presented::KeyBytes(b"pk_\xff\xfe".to_vec()),
                401,
                key_instead.clone(),
            ),
            (
                "unknown key",
                Presented::Key(unknown_key.clone()),
                401,
                key_instead.clone(),
            ),
            (
                "a key one character off",
                Presented::Key(one_off(&any_key)),
                401,
                key_instead.clone(),
            ),
            (
                "a key far too long",
                Presented::Key("k".repeat(4096)),
                401,
                key_instead.clone(),
            ),
            (
                "a revoked key",
                Presented::Key(revoked_key.clone()),
                401,
                key_instead_no_longer.clone(),
            ),
            (
                "an expired key",
                Presented::Key(expired_key.clone()),
                401,
                key_instead_no_longer,
            ),
            (
                "a pet store key",
                Presented::Key(petstore_key.clone()),
                401,
                key_instead.clone(),
            ),
            (
                "unknown token",
                Presented::Bearer(unknown_token.clone()),
                401,
                token_instead.clone(),
            ),
            (
                "a token one character off",
                Presented::Bearer(one_off(&any_token)),
                401,
                token_instead.clone(),
            ),
            (
                "a token far too long",
                Presented::Bearer("t".repeat(4096)),
                401,
                token_instead.clone(),
            ),
            (
                "a revoked token",
                Presented::Bearer(revoked_token.clone()),
                401,
                token_instead_no_longer.clone(),
            ),
            (
                "an expired token",
                Presented::Bearer(expired_token.clone()),
                401,
                token_instead_no_longer,
            ),
            (
                "a pet store session",
                Presented::Bearer(session.clone()),
                401,
                token_instead,
            ),
            (
                "Basic, not Bearer",
                Presented::Authorization("Basic bWF0cml4OnB3".to_owned()),
                401,
                scheme,
            ),
            (
                "a key in the query",
                Presented::KeyInQuery("api_key", any_key.clone()),
                401,
                in_query,
            ),
        ];
        let mut cases = refused;
        if level.takes_keys() {
            cases.push((
                "a key without the scope",
                Presented::Key(wrong_key),
                403,
                forbidden("API key"),
            ));
        }
        if level.takes_tokens() {
            cases.push((
                "a token without the scope",
                Presented::Bearer(wrong_token),
                403,
                forbidden("bearer token"),
            ));
        }
        for (case, presented, status, expected) in cases {
            let (got, body, challenges) = call(&server, &operation, &presented).await;
            assert_eq!((got, &body), (status, &expected), "{name}, {case}");
            if status == 401 {
                assert_eq!(
                    challenges
                        .iter()
                        .any(|c| c.starts_with("ApiKey realm=\"portfolio\"")),
                    level.takes_keys(),
                    "{name}, {case}: {challenges:?}"
                );
                assert_eq!(
                    challenges
                        .iter()
                        .any(|c| c.starts_with("Bearer realm=\"portfolio\"")),
                    level.takes_tokens(),
                    "{name}, {case}: {challenges:?}"
                );
            }
            checked += 1;
        }

        // The right scope opens it, with each credential it takes.
        let mut right = Vec::new();
        if level.takes_keys() {
            right.push(Presented::Key(right_key));
        }
        if level.takes_tokens() {
            right.push(Presented::Bearer(right_token));
        }
        for presented in right {
            let (status, body, _) = call(&server, &operation, &presented).await;
            assert_eq!(
                status, operation.succeeds_with,
                "{name} with {presented:?}: {body}"
            );
            checked += 1;
        }
    }
    println!("checked {checked} answers");
    server.stop().await;
}
