//! Site information, projects, achievements and posts: served from the
//! database, which is filled from a content file on first start.

use std::path::Path;

use anyhow::Context as _;
use axum::extract::State;
use axum::http::HeaderMap;
use chrono::{DateTime, NaiveDate, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};
use sqlx::{AnyConnection, FromRow};
use utoipa::ToSchema;

use super::PortfolioState;
use super::auth::Scope;
use super::error::PortfolioError;
use crate::storage::Database;

/// The sample content that ships with the project.
pub const SAMPLE_CONTENT: &str = include_str!("../../../content/sample.toml");

/// How many posts the LLM context carries.
const RECENT_POSTS_IN_CONTEXT: usize = 10;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SiteInfo {
    pub name: String,
    pub headline: String,
    pub bio: String,
    #[schema(nullable = false)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    #[schema(format = Email, nullable = false)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contact_email: Option<String>,
    #[schema(nullable = false)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub website: Option<String>,
    pub links: Vec<Link>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Link {
    pub label: String,
    pub url: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Project {
    pub slug: String,
    pub title: String,
    pub summary: String,
    pub description: String,
    #[schema(nullable = false)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[schema(nullable = false)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository_url: Option<String>,
    pub tags: Vec<String>,
    pub featured: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Achievement {
    pub slug: String,
    pub title: String,
    pub description: String,
    pub date: NaiveDate,
    #[schema(nullable = false)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct PostSummary {
    pub slug: String,
    pub title: String,
    pub summary: String,
    pub tags: Vec<String>,
    pub published_at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Post {
    pub slug: String,
    pub title: String,
    pub summary: String,
    /// Markdown.
    pub body: String,
    pub tags: Vec<String>,
    pub published_at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct LlmContext {
    pub generated_at: DateTime<Utc>,
    pub site: SiteInfo,
    pub projects: Vec<Project>,
    pub achievements: Vec<Achievement>,
    pub recent_posts: Vec<Post>,
}

/// The content file: what the server publishes.
#[derive(Debug, Clone, Deserialize)]
pub struct ContentFile {
    pub site: SiteInfo,
    #[serde(default)]
    pub projects: Vec<Project>,
    #[serde(default)]
    pub achievements: Vec<Achievement>,
    #[serde(default)]
    pub posts: Vec<Post>,
}

/// Is this a slug (lower-case letters and digits in dash-separated runs, at
/// most 100 characters)?
pub fn is_slug(value: &str) -> bool {
    value.len() <= 100
        && !value.is_empty()
        && value.split('-').all(|run| {
            !run.is_empty()
                && run
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
}

impl ContentFile {
    /// Parses a content file; an unknown key (a typo) is an error.
    pub fn parse(text: &str) -> anyhow::Result<Self> {
        let mut unknown = Vec::new();
        let content: ContentFile =
            serde_ignored::deserialize(toml::Deserializer::new(text), |path| {
                unknown.push(path.to_string());
            })?;
        anyhow::ensure!(unknown.is_empty(), "unknown keys: {}", unknown.join(", "));
        let slugs = content
            .projects
            .iter()
            .map(|p| &p.slug)
            .chain(content.achievements.iter().map(|a| &a.slug))
            .chain(content.posts.iter().map(|p| &p.slug));
        for slug in slugs {
            anyhow::ensure!(
                is_slug(slug),
                "{slug:?} is not a slug (lower-case letters, digits, dashes)"
            );
        }
        Ok(content)
    }

    pub fn load(path: Option<&Path>) -> anyhow::Result<Self> {
        match path {
            None => Self::parse(SAMPLE_CONTENT).context("the sample content"),
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("cannot read the content file {}", path.display()))?;
                Self::parse(&text).with_context(|| format!("the content file {}", path.display()))
            }
        }
    }
}

fn rfc3339(at: &DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// Fills the content tables from the file, if they are empty (first start).
pub async fn load_if_empty(db: &Database, file: Option<&Path>) -> anyhow::Result<()> {
    let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM site_info")
        .fetch_one(db.pool())
        .await?;
    if count > 0 {
        return Ok(());
    }
    let content = ContentFile::load(file)?;
    let mut tx = db.begin_write().await?;
    sqlx::query("INSERT INTO site_info (id, document) VALUES (1, $1)")
        .bind(serde_json::to_string(&content.site)?)
        .execute(tx.conn())
        .await?;
    for p in &content.projects {
        sqlx::query(
            "INSERT INTO projects (slug, title, summary, description, url, repository_url, tags, featured) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(&p.slug)
        .bind(&p.title)
        .bind(&p.summary)
        .bind(&p.description)
        .bind(&p.url)
        .bind(&p.repository_url)
        .bind(serde_json::to_string(&p.tags)?)
        .bind(i32::from(p.featured))
        .execute(tx.conn())
        .await
        .with_context(|| format!("project {}", p.slug))?;
    }
    for a in &content.achievements {
        sqlx::query("INSERT INTO achievements (slug, title, description, date, url) VALUES ($1, $2, $3, $4, $5)")
            .bind(&a.slug)
            .bind(&a.title)
            .bind(&a.description)
            .bind(a.date.to_string())
            .bind(&a.url)
            .execute(tx.conn())
            .await
            .with_context(|| format!("achievement {}", a.slug))?;
    }
    for p in &content.posts {
        sqlx::query(
            "INSERT INTO posts (slug, title, summary, body, tags, published_at) VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(&p.slug)
        .bind(&p.title)
        .bind(&p.summary)
        .bind(&p.body)
        .bind(serde_json::to_string(&p.tags)?)
        .bind(rfc3339(&p.published_at))
        .execute(tx.conn())
        .await
        .with_context(|| format!("post {}", p.slug))?;
    }
    tx.commit().await?;
    tracing::info!(
        projects = content.projects.len(),
        achievements = content.achievements.len(),
        posts = content.posts.len(),
        "loaded the portfolio content"
    );
    Ok(())
}

// ---- reading -------------------------------------------------------------

fn corrupt(what: &str, detail: impl std::fmt::Display) -> PortfolioError {
    PortfolioError::internal("corrupt content row", format!("{what}: {detail}"))
}

fn json_list(what: &str, text: &str) -> Result<Vec<String>, PortfolioError> {
    serde_json::from_str(text).map_err(|e| corrupt(what, e))
}

fn timestamp(what: &str, text: &str) -> Result<DateTime<Utc>, PortfolioError> {
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| corrupt(what, e))
}

async fn site_info(conn: &mut AnyConnection) -> Result<SiteInfo, PortfolioError> {
    let document: Option<String> =
        sqlx::query_scalar("SELECT document FROM site_info WHERE id = 1")
            .fetch_optional(conn)
            .await?;
    let document = document.ok_or_else(|| corrupt("site_info", "missing"))?;
    serde_json::from_str(&document).map_err(|e| corrupt("site_info", e))
}

#[derive(FromRow)]
struct ProjectRow {
    slug: String,
    title: String,
    summary: String,
    description: String,
    url: Option<String>,
    repository_url: Option<String>,
    tags: String,
    featured: i32,
}

impl TryFrom<ProjectRow> for Project {
    type Error = PortfolioError;

    fn try_from(row: ProjectRow) -> Result<Self, PortfolioError> {
        Ok(Project {
            tags: json_list(&row.slug, &row.tags)?,
            slug: row.slug,
            title: row.title,
            summary: row.summary,
            description: row.description,
            url: row.url,
            repository_url: row.repository_url,
            featured: row.featured != 0,
        })
    }
}

const PROJECT_COLUMNS: &str =
    "slug, title, summary, description, url, repository_url, tags, featured";

async fn projects(conn: &mut AnyConnection) -> Result<Vec<Project>, PortfolioError> {
    let rows: Vec<ProjectRow> = sqlx::query_as(&format!(
        "SELECT {PROJECT_COLUMNS} FROM projects ORDER BY featured DESC, title, slug"
    ))
    .fetch_all(conn)
    .await?;
    rows.into_iter().map(Project::try_from).collect()
}

#[derive(FromRow)]
struct AchievementRow {
    slug: String,
    title: String,
    description: String,
    date: String,
    url: Option<String>,
}

async fn achievements(conn: &mut AnyConnection) -> Result<Vec<Achievement>, PortfolioError> {
    let rows: Vec<AchievementRow> = sqlx::query_as(
        "SELECT slug, title, description, date, url FROM achievements ORDER BY date DESC, slug",
    )
    .fetch_all(conn)
    .await?;
    rows.into_iter()
        .map(|row| {
            Ok(Achievement {
                date: row.date.parse().map_err(|e| corrupt(&row.slug, e))?,
                slug: row.slug,
                title: row.title,
                description: row.description,
                url: row.url,
            })
        })
        .collect()
}

#[derive(FromRow)]
struct PostRow {
    slug: String,
    title: String,
    summary: String,
    body: String,
    tags: String,
    published_at: String,
}

impl TryFrom<PostRow> for Post {
    type Error = PortfolioError;

    fn try_from(row: PostRow) -> Result<Self, PortfolioError> {
        Ok(Post {
            tags: json_list(&row.slug, &row.tags)?,
            published_at: timestamp(&row.slug, &row.published_at)?,
            slug: row.slug,
            title: row.title,
            summary: row.summary,
            body: row.body,
        })
    }
}

impl From<Post> for PostSummary {
    fn from(post: Post) -> Self {
        PostSummary {
            slug: post.slug,
            title: post.title,
            summary: post.summary,
            tags: post.tags,
            published_at: post.published_at,
        }
    }
}

const POST_COLUMNS: &str = "slug, title, summary, body, tags, published_at";

async fn recent_posts(
    conn: &mut AnyConnection,
    limit: Option<usize>,
) -> Result<Vec<Post>, PortfolioError> {
    let limit = limit.map(|n| format!(" LIMIT {n}")).unwrap_or_default();
    let rows: Vec<PostRow> = sqlx::query_as(&format!(
        "SELECT {POST_COLUMNS} FROM posts ORDER BY published_at DESC, slug{limit}"
    ))
    .fetch_all(conn)
    .await?;
    rows.into_iter().map(Post::try_from).collect()
}

/// One post, by slug.
pub async fn load_post(
    conn: &mut AnyConnection,
    slug: &str,
) -> Result<Option<Post>, PortfolioError> {
    let row: Option<PostRow> =
        sqlx::query_as(&format!("SELECT {POST_COLUMNS} FROM posts WHERE slug = $1"))
            .bind(slug)
            .fetch_optional(conn)
            .await?;
    row.map(Post::try_from).transpose()
}

/// Reads the `slug` path parameter: 400 unless it is a slug.
fn checked_slug(slug: String) -> Result<String, PortfolioError> {
    if is_slug(&slug) {
        Ok(slug)
    } else {
        Err(PortfolioError::bad_request(format!(
            "{slug:?} is not a slug: lower-case letters and digits in dash-separated runs, at most 100"
        )))
    }
}

// ---- handlers ------------------------------------------------------------

/// Site information.
#[utoipa::path(
    get,
    path = "/api/site-info",
    operation_id = "getSiteInfo",
    tag = "content",
    responses((status = 200, description = "The site information", body = SiteInfo)),
)]
pub async fn get_site_info(
    State(state): State<PortfolioState>,
) -> Result<axum::Json<SiteInfo>, PortfolioError> {
    let mut conn = state.db.pool().acquire().await?;
    Ok(axum::Json(site_info(&mut conn).await?))
}

/// Lists the projects.
#[utoipa::path(
    get,
    path = "/api/projects",
    operation_id = "listProjects",
    tag = "content",
    responses((status = 200, description = "The projects", body = Vec<Project>)),
)]
pub async fn list_projects(
    State(state): State<PortfolioState>,
) -> Result<axum::Json<Vec<Project>>, PortfolioError> {
    let mut conn = state.db.pool().acquire().await?;
    Ok(axum::Json(projects(&mut conn).await?))
}

/// One project.
#[utoipa::path(
    get,
    path = "/api/projects/{slug}",
    operation_id = "getProject",
    tag = "content",
    params(("slug" = String, Path, pattern = "^[a-z0-9]+(-[a-z0-9]+)*$", max_length = 100,
        description = "The item's slug (lower-case letters, digits and dashes).")),
    responses(
        (status = 200, description = "The project", body = Project),
        (status = 400, description = "Not a slug"),
        (status = 404, description = "No such project"),
    ),
)]
pub async fn get_project(
    State(state): State<PortfolioState>,
    super::PathParam(slug): super::PathParam<String>,
) -> Result<axum::Json<Project>, PortfolioError> {
    let slug = checked_slug(slug)?;
    let row: Option<ProjectRow> = sqlx::query_as(&format!(
        "SELECT {PROJECT_COLUMNS} FROM projects WHERE slug = $1"
    ))
    .bind(&slug)
    .fetch_optional(state.db.pool())
    .await?;
    let row = row.ok_or_else(|| PortfolioError::not_found(format!("no project {slug:?}")))?;
    Ok(axum::Json(Project::try_from(row)?))
}

/// Lists the achievements.
#[utoipa::path(
    get,
    path = "/api/achievements",
    operation_id = "listAchievements",
    tag = "content",
    responses((status = 200, description = "The achievements", body = Vec<Achievement>)),
)]
pub async fn list_achievements(
    State(state): State<PortfolioState>,
) -> Result<axum::Json<Vec<Achievement>>, PortfolioError> {
    let mut conn = state.db.pool().acquire().await?;
    Ok(axum::Json(achievements(&mut conn).await?))
}

/// Lists the posts.
#[utoipa::path(
    get,
    path = "/api/posts",
    operation_id = "listPosts",
    tag = "content",
    responses((status = 200, description = "The posts", body = Vec<PostSummary>)),
)]
pub async fn list_posts(
    State(state): State<PortfolioState>,
) -> Result<axum::Json<Vec<PostSummary>>, PortfolioError> {
    let mut conn = state.db.pool().acquire().await?;
    let posts = recent_posts(&mut conn, None).await?;
    Ok(axum::Json(
        posts.into_iter().map(PostSummary::from).collect(),
    ))
}

/// One post, with its body.
#[utoipa::path(
    get,
    path = "/api/posts/{slug}",
    operation_id = "getPost",
    tag = "content",
    params(("slug" = String, Path, pattern = "^[a-z0-9]+(-[a-z0-9]+)*$", max_length = 100,
        description = "The item's slug (lower-case letters, digits and dashes).")),
    responses(
        (status = 200, description = "The post", body = Post),
        (status = 400, description = "Not a slug"),
        (status = 404, description = "No such post"),
    ),
)]
pub async fn get_post(
    State(state): State<PortfolioState>,
    super::PathParam(slug): super::PathParam<String>,
) -> Result<axum::Json<Post>, PortfolioError> {
    let slug = checked_slug(slug)?;
    let mut conn = state.db.pool().acquire().await?;
    let post = load_post(&mut conn, &slug)
        .await?
        .ok_or_else(|| PortfolioError::not_found(format!("no post {slug:?}")))?;
    Ok(axum::Json(post))
}

/// Everything about the site, for a language model.
#[utoipa::path(
    get,
    path = "/api/llm-context",
    operation_id = "getLlmContext",
    tag = "content",
    responses(
        (status = 200, description = "The context", body = LlmContext),
        (status = 401, description = "No valid API key"),
        (status = 403, description = "The key lacks context:read"),
    ),
    security(("api_key" = [])),
)]
pub async fn get_llm_context(
    State(state): State<PortfolioState>,
    headers: HeaderMap,
) -> Result<axum::Json<LlmContext>, PortfolioError> {
    state.keys.authorize(&headers, Scope::ContextRead)?;
    let mut conn = state.db.pool().acquire().await?;
    Ok(axum::Json(LlmContext {
        generated_at: Utc::now(),
        site: site_info(&mut conn).await?,
        projects: projects(&mut conn).await?,
        achievements: achievements(&mut conn).await?,
        recent_posts: recent_posts(&mut conn, Some(RECENT_POSTS_IN_CONTEXT)).await?,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sample_content_is_valid() {
        let content = ContentFile::parse(SAMPLE_CONTENT);
        assert!(
            content
                .as_ref()
                .is_ok_and(|c| !c.projects.is_empty() && !c.posts.is_empty()),
            "{content:?}"
        );
    }

    #[test]
    fn unknown_keys_in_the_content_file_are_errors() {
        let text = SAMPLE_CONTENT.replace("headline =", "headlin =");
        let error = ContentFile::parse(&text)
            .map(|_| ())
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(error.contains("headlin"), "{error}");
    }

    #[test]
    fn slugs() {
        for good in ["a", "why-contract-first", "tide-2"] {
            assert!(is_slug(good), "{good}");
        }
        for bad in ["", "A", "a--b", "-a", "a-", "a b", "a_b", &"a".repeat(101)] {
            assert!(!is_slug(bad), "{bad}");
        }
    }
}
