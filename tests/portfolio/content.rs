//! Content, LLM context and liveness: served from the database, filled from
//! the content file.

use end_to_end_tests::{Db, TestServer, keys, on_every_database};
use petstore_portfolio_client::portfolio::types;

use crate::support::{api_error, assert_envelope, send_json};

on_every_database!(
    site_info_projects_achievements_and_posts,
    unknown_and_malformed_slugs,
    llm_context_needs_a_key_with_its_scope,
    health_says_alive,
    a_content_file_of_ones_own,
    routing_errors_are_envelopes,
);

async fn site_info_projects_achievements_and_posts(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.portfolio();
    let site = client
        .get_site_info()
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .into_inner();
    assert_eq!(site.name, "Ada Example");
    assert_eq!(site.links.len(), 2);

    let projects = client
        .list_projects()
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .into_inner();
    let slugs: Vec<&str> = projects.iter().map(|p| p.slug.as_str()).collect();
    assert_eq!(
        slugs,
        ["petstore-portfolio", "tide-tables"],
        "featured first"
    );
    let project = client
        .get_project()
        .slug("tide-tables")
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(project.title, "Tide tables");
    assert!(!project.featured);

    let achievements = client
        .list_achievements()
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .into_inner();
    assert_eq!(
        achievements.first().map(|a| a.slug.as_str()),
        Some("talk-contracts-2026"),
        "newest first"
    );

    let posts = client
        .list_posts()
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .into_inner();
    let slugs: Vec<&str> = posts.iter().map(|p| p.slug.as_str()).collect();
    assert_eq!(
        slugs,
        ["outbox-pattern", "why-contract-first"],
        "newest first"
    );
    let post = client
        .get_post()
        .slug("outbox-pattern")
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(post.body.contains("same transaction"));
    server.stop().await;
}

async fn unknown_and_malformed_slugs(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.portfolio();
    let (status, error) = api_error(client.get_project().slug("no-such-project").send().await);
    assert_eq!((status, error.code.as_str()), (404, "NOT_FOUND"));
    let (status, error) = api_error(client.get_post().slug("no-such-post").send().await);
    assert_eq!((status, error.code.as_str()), (404, "NOT_FOUND"));
    // The SDK checks the slug pattern itself; raw HTTP reaches the server.
    for bad in ["Not_A_Slug", "a--b", &"a".repeat(101)] {
        let (status, _, body) =
            send_json(reqwest::Client::new().get(server.at(&format!("/api/posts/{bad}")))).await;
        assert_eq!(status, 400, "{bad}: {body}");
        assert_envelope(&body, "BAD_REQUEST");
    }
    server.stop().await;
}

async fn llm_context_needs_a_key_with_its_scope(db: Db) {
    let server = TestServer::start(db).await;
    let (status, error) = api_error(server.portfolio().get_llm_context().send().await);
    assert_eq!((status, error.code.as_str()), (401, "UNAUTHORIZED"));
    assert_eq!(
        error.details.get("required_header"),
        Some(&serde_json::json!("X-API-Key"))
    );

    let (status, error) = api_error(
        server
            .portfolio_with_key(Some("wrong-key"))
            .get_llm_context()
            .send()
            .await,
    );
    assert_eq!((status, error.code.as_str()), (401, "UNAUTHORIZED"));
    assert_eq!(
        error.details.get("required_header"),
        Some(&serde_json::json!("X-API-Key"))
    );

    let (status, error) = api_error(
        server
            .portfolio_with_key(Some(keys::NO_SCOPE))
            .get_llm_context()
            .send()
            .await,
    );
    assert_eq!((status, error.code.as_str()), (403, "FORBIDDEN"));
    assert_eq!(
        error.details.get("required_scope"),
        Some(&serde_json::json!("context:read"))
    );

    let before = chrono::Utc::now();
    let context = server
        .portfolio_with_key(Some(keys::CONTEXT_READER))
        .get_llm_context()
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .into_inner();
    assert!(context.generated_at >= before - chrono::Duration::seconds(1));
    assert_eq!(context.site.name, "Ada Example");
    assert_eq!(context.projects.len(), 2);
    assert_eq!(context.achievements.len(), 2);
    assert_eq!(context.recent_posts.len(), 2);
    assert!(
        context.recent_posts.iter().all(|p| !p.body.is_empty()),
        "posts come with their bodies"
    );
    server.stop().await;
}

async fn health_says_alive(db: Db) {
    let server = TestServer::start(db).await;
    let health = server
        .portfolio()
        .get_health()
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .into_inner();
    assert_eq!(health.status, types::HealthStatus::Ok);
    assert_eq!(health.version, env!("CARGO_PKG_VERSION"));
    server.stop().await;
}

async fn a_content_file_of_ones_own(db: Db) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let file = dir.path().join("content.toml");
    std::fs::write(
        &file,
        "[site]\nname = \"Bo\"\nheadline = \"h\"\nbio = \"b\"\nlinks = []\n\n[[posts]]\nslug = \"hello\"\n\
         title = \"Hello\"\nsummary = \"s\"\nbody = \"Hi.\"\ntags = []\npublished_at = \"2026-01-01T00:00:00Z\"\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let server = TestServer::start_with(db, |c| c.portfolio.content_file = Some(file)).await;
    let client = server.portfolio();
    let site = client
        .get_site_info()
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(site.name, "Bo");
    assert!(
        client
            .list_projects()
            .send()
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .is_empty()
    );
    let post = client
        .get_post()
        .slug("hello")
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(post.body, "Hi.");
    server.stop().await;
}

async fn routing_errors_are_envelopes(db: Db) {
    let server = TestServer::start(db).await;
    let http = reqwest::Client::new();
    for (request, status, code) in [
        (http.get(server.at("/api/nothing-here")), 404, "NOT_FOUND"),
        (http.get(server.at("/elsewhere")), 404, "NOT_FOUND"),
        (
            http.post(server.at("/api/site-info")),
            405,
            "METHOD_NOT_ALLOWED",
        ),
        (
            http.delete(server.at("/api/posts/why-contract-first")),
            405,
            "METHOD_NOT_ALLOWED",
        ),
    ] {
        let (got, content_type, body) = send_json(request).await;
        assert_eq!(got, status, "{body}");
        assert!(content_type.starts_with("application/json"));
        assert_envelope(&body, code);
    }
    server.stop().await;
}

#[tokio::test]
async fn static_files_from_the_configured_folder() {
    use futures::TryStreamExt as _;
    let folder = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(folder.path().join("hello.txt"), "hello, static world\n")
        .unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(folder.path().join(".secret"), "no").unwrap_or_else(|e| panic!("{e}"));
    let dir = folder.path().to_path_buf();
    let server =
        TestServer::start_with(Db::Sqlite, move |c| c.portfolio.static_dir = Some(dir)).await;
    let client = server.portfolio();
    let file = client
        .get_static_file()
        .file("hello.txt")
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        file.headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.starts_with("text/plain"))
    );
    let chunks: Vec<bytes::Bytes> = file
        .into_inner()
        .into_inner()
        .try_collect()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(chunks.concat(), b"hello, static world\n");

    let (status, error) = api_error(client.get_static_file().file("missing.txt").send().await);
    assert_eq!((status, error.code.as_str()), (404, "NOT_FOUND"));
    for (path, status, code) in [
        ("/api/static/.secret", 400, "BAD_REQUEST"),
        ("/api/static/..%2Fsecret", 400, "BAD_REQUEST"),
        ("/api/static/sub%2Fhello.txt", 400, "BAD_REQUEST"),
    ] {
        let (got, _, body) = send_json(reqwest::Client::new().get(server.at(path))).await;
        assert_eq!(got, status, "{path}: {body}");
        assert_envelope(&body, code);
    }
    server.stop().await;

    // Without a folder, there are no static files.
    let server = TestServer::start(Db::Sqlite).await;
    let (status, _) = api_error(
        server
            .portfolio()
            .get_static_file()
            .file("hello.txt")
            .send()
            .await,
    );
    assert_eq!(status, 404);
    server.stop().await;
}

#[tokio::test]
async fn error_bodies_snapshot() {
    let server = TestServer::start(Db::Sqlite).await;
    let http = reqwest::Client::new();
    let json_post = |path: &str, key: Option<&str>, body: serde_json::Value| {
        let mut request = http
            .post(server.at(path))
            .header("content-type", "application/json")
            .body(body.to_string());
        if let Some(key) = key {
            request = request.header("x-api-key", key);
        }
        request
    };
    let mut bodies = Vec::new();
    for (name, request) in [
        ("unknown_route", http.get(server.at("/api/nothing"))),
        (
            "method_not_allowed",
            http.delete(server.at("/api/site-info")),
        ),
        (
            "unknown_post",
            http.get(server.at("/api/posts/no-such-post")),
        ),
        ("bad_slug", http.get(server.at("/api/posts/Not_A_Slug"))),
        ("missing_key", http.get(server.at("/api/llm-context"))),
        (
            "wrong_key",
            http.get(server.at("/api/llm-context"))
                .header("x-api-key", "wrong"),
        ),
        (
            "missing_scope",
            http.get(server.at("/api/llm-context"))
                .header("x-api-key", keys::NO_SCOPE),
        ),
        (
            "invalid_fields",
            json_post(
                "/api/contact",
                Some(keys::ADMIN),
                serde_json::json!({"email": "not an address"}),
            ),
        ),
        (
            "malformed_json",
            http.post(server.at("/api/newsletter"))
                .header("content-type", "application/json")
                .body("{"),
        ),
        (
            "not_json",
            http.post(server.at("/api/newsletter"))
                .header("content-type", "text/plain")
                .body("x"),
        ),
        (
            "unknown_token",
            http.get(server.at("/api/newsletter/unsubscribe?token=nope")),
        ),
    ] {
        let (_, _, body) = send_json(request).await;
        bodies.push(serde_json::json!({"case": name, "body": body}));
    }
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| insta::assert_json_snapshot!("portfolio_error_bodies", bodies));
    server.stop().await;
}
