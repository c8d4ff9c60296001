//! Content, LLM context and liveness: served from the database, filled from
//! the content file.

use end_to_end_tests::{Db, TestServer, header, http, keys, on_every_database, send};
use petstore_portfolio_client::portfolio::{Error, types};

use crate::support::{api_error, assert_api_error, assert_refused};

on_every_database!(
    the_site_info_is_served,
    projects_are_listed_featured_first,
    a_project_is_found_by_its_slug,
    achievements_are_listed_newest_first,
    posts_are_listed_newest_first,
    a_post_is_found_by_its_slug_with_its_body,
    an_unknown_project_is_404,
    an_unknown_post_is_404,
    malformed_slugs_are_400,
    the_llm_context_without_a_key_is_401,
    the_llm_context_with_an_unknown_key_is_401,
    the_llm_context_without_its_scope_is_403,
    the_llm_context_gathers_site_projects_achievements_and_posts,
    health_says_alive,
    a_content_file_of_ones_own,
    unknown_routes_are_404,
    unsupported_methods_are_405,
);

async fn the_site_info_is_served(db: Db) {
    let server = TestServer::start(db).await;
    let site = server
        .portfolio()
        .get_site_info()
        .send()
        .await
        .expect("getSiteInfo");
    assert_eq!(*site.name, "Ada Example");
    assert_eq!(site.links.len(), 2);
    server.stop().await;
}

async fn projects_are_listed_featured_first(db: Db) {
    let server = TestServer::start(db).await;
    let projects = server
        .portfolio()
        .list_projects()
        .send()
        .await
        .expect("listProjects");
    let slugs: Vec<&str> = projects.iter().map(|p| p.slug.as_str()).collect();
    assert_eq!(
        slugs,
        ["petstore-portfolio", "tide-tables"],
        "featured first"
    );
    server.stop().await;
}

async fn a_project_is_found_by_its_slug(db: Db) {
    let server = TestServer::start(db).await;
    let project = server
        .portfolio()
        .get_project()
        .slug("tide-tables")
        .send()
        .await
        .expect("getProject");
    assert_eq!(*project.title, "Tide tables");
    assert!(!project.featured);
    server.stop().await;
}

async fn achievements_are_listed_newest_first(db: Db) {
    let server = TestServer::start(db).await;
    let achievements = server
        .portfolio()
        .list_achievements()
        .send()
        .await
        .expect("listAchievements");
    assert_eq!(
        achievements.first().map(|a| a.slug.as_str()),
        Some("talk-contracts-2026"),
        "newest first"
    );
    server.stop().await;
}

async fn posts_are_listed_newest_first(db: Db) {
    let server = TestServer::start(db).await;
    let posts = server
        .portfolio()
        .list_posts()
        .send()
        .await
        .expect("listPosts");
    let slugs: Vec<&str> = posts.iter().map(|p| p.slug.as_str()).collect();
    assert_eq!(
        slugs,
        ["outbox-pattern", "why-contract-first"],
        "newest first"
    );
    server.stop().await;
}

async fn a_post_is_found_by_its_slug_with_its_body(db: Db) {
    let server = TestServer::start(db).await;
    let post = server
        .portfolio()
        .get_post()
        .slug("outbox-pattern")
        .send()
        .await
        .expect("getPost");
    assert!(post.body.contains("same transaction"));
    server.stop().await;
}

async fn an_unknown_project_is_404(db: Db) {
    let server = TestServer::start(db).await;
    let project = server
        .portfolio()
        .get_project()
        .slug("no-such-project")
        .send()
        .await;
    assert_api_error(project, 404, "NOT_FOUND");
    server.stop().await;
}

async fn an_unknown_post_is_404(db: Db) {
    let server = TestServer::start(db).await;
    let post = server
        .portfolio()
        .get_post()
        .slug("no-such-post")
        .send()
        .await;
    let error = assert_api_error(post, 404, "NOT_FOUND");
    insta::allow_duplicates! {
        insta::assert_json_snapshot!(error, @r#"
        {
          "code": "NOT_FOUND",
          "details": {},
          "message": "no post \"no-such-post\""
        }
        "#);
    }
    server.stop().await;
}

/// The SDK checks the slug pattern itself; raw HTTP reaches the server.
async fn malformed_slugs_are_400(db: Db) {
    let server = TestServer::start(db).await;
    let post = |slug: &str| http().get(server.at(&format!("/api/posts/{slug}")));
    let body = assert_refused(post("Not_A_Slug"), 400, "BAD_REQUEST").await;
    insta::allow_duplicates! {
        insta::assert_json_snapshot!(body, @r#"
        {
          "error": {
            "code": "BAD_REQUEST",
            "details": {},
            "message": "\"Not_A_Slug\" is not a slug: lower-case letters and digits in dash-separated runs, at most 100"
          }
        }
        "#);
    }
    for bad in ["a--b", &"a".repeat(101)] {
        assert_refused(post(bad), 400, "BAD_REQUEST").await;
    }
    server.stop().await;
}

/// The LLM context as asked for with `key`.
async fn llm_context(server: &TestServer, key: Option<&str>) -> Result<types::LlmContext, Error> {
    let answer = server
        .portfolio_with_key(key)
        .get_llm_context()
        .send()
        .await;
    answer.map(|context| context.into_inner())
}

async fn the_llm_context_without_a_key_is_401(db: Db) {
    let server = TestServer::start(db).await;
    let error = assert_api_error(llm_context(&server, None).await, 401, "UNAUTHORIZED");
    assert_eq!(
        error.details.get("required_header"),
        Some(&serde_json::json!("X-API-Key"))
    );
    insta::allow_duplicates! {
        insta::assert_json_snapshot!(error, @r#"
        {
          "code": "UNAUTHORIZED",
          "details": {
            "accepted_headers": [
              "X-API-Key"
            ],
            "required_header": "X-API-Key"
          },
          "message": "this operation needs an API key in the X-API-Key header"
        }
        "#);
    }
    server.stop().await;
}

async fn the_llm_context_with_an_unknown_key_is_401(db: Db) {
    let server = TestServer::start(db).await;
    let context = llm_context(&server, Some("wrong-key")).await;
    let error = assert_api_error(context, 401, "UNAUTHORIZED");
    assert_eq!(
        error.details.get("required_header"),
        Some(&serde_json::json!("X-API-Key"))
    );
    insta::allow_duplicates! {
        insta::assert_json_snapshot!(error, @r#"
        {
          "code": "UNAUTHORIZED",
          "details": {
            "accepted_headers": [
              "X-API-Key"
            ],
            "required_header": "X-API-Key"
          },
          "message": "the API key is not valid"
        }
        "#);
    }
    server.stop().await;
}

async fn the_llm_context_without_its_scope_is_403(db: Db) {
    let server = TestServer::start(db).await;
    let context = llm_context(&server, Some(keys::NO_SCOPE)).await;
    let error = assert_api_error(context, 403, "FORBIDDEN");
    assert_eq!(
        error.details.get("required_scope"),
        Some(&serde_json::json!("context:read"))
    );
    insta::allow_duplicates! {
        insta::assert_json_snapshot!(error, @r#"
        {
          "code": "FORBIDDEN",
          "details": {
            "required_scope": "context:read"
          },
          "message": "the API key lacks the scope context:read"
        }
        "#);
    }
    server.stop().await;
}

async fn the_llm_context_gathers_site_projects_achievements_and_posts(db: Db) {
    let server = TestServer::start(db).await;
    let before = chrono::Utc::now();
    let context = llm_context(&server, Some(keys::CONTEXT_READER))
        .await
        .expect("getLlmContext");
    assert!(context.generated_at >= before - chrono::Duration::seconds(1));
    assert_eq!(*context.site.name, "Ada Example");
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
        .expect("getHealth");
    assert_eq!(health.status, types::HealthStatus::Ok);
    assert_eq!(health.version, env!("CARGO_PKG_VERSION"));
    server.stop().await;
}

async fn a_content_file_of_ones_own(db: Db) {
    let dir = tempfile::tempdir().expect("a folder for the content file");
    let file = dir.path().join("content.toml");
    std::fs::write(
        &file,
        "[site]\nname = \"Bo\"\nheadline = \"h\"\nbio = \"b\"\nlinks = []\n\n[[posts]]\nslug = \"hello\"\n\
         title = \"Hello\"\nsummary = \"s\"\nbody = \"Hi.\"\ntags = []\npublished_at = \"2026-01-01T00:00:00Z\"\n",
    )
    .expect("the content file");
    let server = TestServer::start_with(db, |c| c.portfolio.content_file = Some(file)).await;
    let client = server.portfolio();
    let site = client.get_site_info().send().await.expect("getSiteInfo");
    assert_eq!(*site.name, "Bo");
    let projects = client.list_projects().send().await.expect("listProjects");
    assert!(projects.is_empty());
    let post = client
        .get_post()
        .slug("hello")
        .send()
        .await
        .expect("getPost");
    assert_eq!(*post.body, "Hi.");
    server.stop().await;
}

async fn unknown_routes_are_404(db: Db) {
    let server = TestServer::start(db).await;
    let body = assert_refused(http().get(server.at("/api/nothing")), 404, "NOT_FOUND").await;
    insta::allow_duplicates! {
        insta::assert_json_snapshot!(body, @r#"
        {
          "error": {
            "code": "NOT_FOUND",
            "details": {},
            "message": "no such route: the pet store is under /v2, the portfolio under /api; see /docs"
          }
        }
        "#);
    }
    for path in ["/api/nothing-here", "/elsewhere"] {
        assert_refused(http().get(server.at(path)), 404, "NOT_FOUND").await;
    }
    server.stop().await;
}

async fn unsupported_methods_are_405(db: Db) {
    let server = TestServer::start(db).await;
    let delete_site_info = http().delete(server.at("/api/site-info"));
    let body = assert_refused(delete_site_info, 405, "METHOD_NOT_ALLOWED").await;
    insta::allow_duplicates! {
        insta::assert_json_snapshot!(body, @r#"
        {
          "error": {
            "code": "METHOD_NOT_ALLOWED",
            "details": {},
            "message": "this method is not allowed on this path"
          }
        }
        "#);
    }
    for request in [
        http().post(server.at("/api/site-info")),
        http().delete(server.at("/api/posts/why-contract-first")),
    ] {
        assert_refused(request, 405, "METHOD_NOT_ALLOWED").await;
    }
    server.stop().await;
}

/// A server whose static files come from `public/` in a temporary folder:
/// `hello.txt`, a hidden `.secret`, `out.txt`, a link to `../outside.txt`,
/// and `hi.txt`, a link to `hello.txt`. The folder goes when it is dropped.
async fn start_with_static_files() -> (TestServer, tempfile::TempDir) {
    let folder = tempfile::tempdir().expect("a temporary folder");
    let public = folder.path().join("public");
    std::fs::create_dir(&public).expect("public/");
    std::fs::write(public.join("hello.txt"), "hello, static world\n").expect("hello.txt");
    std::fs::write(public.join(".secret"), "no").expect(".secret");
    std::fs::write(folder.path().join("outside.txt"), "outside").expect("outside.txt");
    std::os::unix::fs::symlink(folder.path().join("outside.txt"), public.join("out.txt"))
        .expect("out.txt");
    std::os::unix::fs::symlink(public.join("hello.txt"), public.join("hi.txt")).expect("hi.txt");
    let dir = public;
    let server =
        TestServer::start_with(Db::Sqlite, move |c| c.portfolio.static_dir = Some(dir)).await;
    (server, folder)
}

#[tokio::test]
async fn a_static_file_is_served_with_its_type() {
    use futures::TryStreamExt as _;
    let (server, _folder) = start_with_static_files().await;
    let file = server
        .portfolio()
        .get_static_file()
        .file("hello.txt")
        .send()
        .await
        .expect("getStaticFile");
    assert!(header(file.headers(), "content-type").is_some_and(|t| t.starts_with("text/plain")));
    let chunks: Vec<bytes::Bytes> = file
        .into_inner()
        .into_inner()
        .try_collect()
        .await
        .expect("the file's bytes");
    assert_eq!(chunks.concat(), b"hello, static world\n");
    server.stop().await;
}

#[tokio::test]
async fn a_missing_static_file_is_404() {
    let (server, _folder) = start_with_static_files().await;
    let file = server
        .portfolio()
        .get_static_file()
        .file("missing.txt")
        .send()
        .await;
    assert_api_error(file, 404, "NOT_FOUND");
    server.stop().await;
}

#[tokio::test]
async fn static_paths_that_leave_the_folder_are_400() {
    let (server, _folder) = start_with_static_files().await;
    for path in [
        "/api/static/a%5Cb",
        "/api/static/..%2Foutside.txt",
        "/api/static/sub%2Fhello.txt",
    ] {
        assert_refused(http().get(server.at(path)), 400, "BAD_REQUEST").await;
    }
    server.stop().await;
}

#[tokio::test]
async fn a_hidden_static_file_is_404() {
    let (server, _folder) = start_with_static_files().await;
    assert_refused(
        http().get(server.at("/api/static/.secret")),
        404,
        "NOT_FOUND",
    )
    .await;
    server.stop().await;
}

#[tokio::test]
async fn a_symlink_out_of_the_static_folder_is_404() {
    let (server, _folder) = start_with_static_files().await;
    let body = assert_refused(
        http().get(server.at("/api/static/out.txt")),
        404,
        "NOT_FOUND",
    )
    .await;
    assert!(!body.to_string().contains("outside"), "{body}");
    server.stop().await;
}

#[tokio::test]
async fn a_symlink_within_the_static_folder_is_served() {
    let (server, _folder) = start_with_static_files().await;
    let (status, _, text) = send(http().get(server.at("/api/static/hi.txt"))).await;
    assert_eq!((status, text.as_str()), (200, "hello, static world\n"));
    server.stop().await;
}

#[tokio::test]
async fn without_a_static_folder_there_are_no_static_files() {
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
