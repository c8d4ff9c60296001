//! Site information, projects, achievements and posts: served from the
//! database, which is filled from a content file on first start.

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse as _, Response};
use bytes::Bytes;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sqlx::AnyConnection;
use utoipa::ToSchema;

use crate::http::error::Error;
use crate::http::extract::Path as PathParam;
use crate::portfolio::PortfolioState;
use crate::portfolio::api::auth::{ContextRead, Protected};
use crate::portfolio::db;
use crate::portfolio::model::{Achievement, Post, PostSummary, Project, SiteInfo, Slug, SlugParam};
use crate::storage::Generations;

/// How many posts the LLM context carries.
const RECENT_POSTS_IN_CONTEXT: usize = 10;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub(crate) struct LlmContext {
    pub(crate) generated_at: DateTime<Utc>,
    pub(crate) site: SiteInfo,
    pub(crate) projects: Vec<Project>,
    pub(crate) achievements: Vec<Achievement>,
    pub(crate) recent_posts: Vec<Post>,
}

/// The content's answers kept in memory (`read_cache.rs`), each until the
/// content changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Cached {
    SiteInfo,
    Projects,
    Posts,
    /// `llm-context` without `generated_at`, which is the time of each answer.
    LlmContext,
}

impl Cached {
    pub(crate) const COUNT: usize = 4;

    pub(crate) fn ticket(generations: &Generations, _: &Cached) -> u64 {
        generations.ticket([db::CONTENT])
    }
}

/// What `llm-context` answers but its time, as kept.
#[derive(Serialize)]
struct LlmContextContent {
    site: SiteInfo,
    projects: Vec<Project>,
    achievements: Vec<Achievement>,
    recent_posts: Vec<Post>,
}

/// A JSON answer from memory, or from `load` (the database) when what is
/// kept for `key` is stale.
async fn cached_json<T: Serialize>(
    state: &PortfolioState,
    key: Cached,
    load: impl AsyncFnOnce(&mut AnyConnection) -> Result<T, Error>,
) -> Result<Bytes, Error> {
    let body = state
        .content
        .get(&state.db, key, async || {
            let value = load(&mut *state.db.conn().await?).await?;
            serde_json::to_vec(&value)
                .map(|json| Some(Bytes::from(json)))
                .map_err(|err| Error::internal("cannot write the content as JSON", err))
        })
        .await?
        .ok_or_else(|| Error::internal("content", "no content was read"))?;
    Ok(Bytes::clone(&body))
}

fn json_response(body: Bytes) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// The post with this slug; 404 if there is none.
pub(crate) async fn find_post(conn: &mut AnyConnection, slug: &Slug) -> Result<Post, Error> {
    db::content::post(conn, slug)
        .await?
        .ok_or_else(|| Error::not_found(format!("no post {:?}", slug.as_str())))
}

/// Site information.
#[utoipa::path(
    get, path = "/api/site-info",
    tag = "content",
    responses((status = 200, description = "The site information", body = SiteInfo)),
)]
pub(crate) async fn get_site_info(State(state): State<PortfolioState>) -> Result<Response, Error> {
    let body = cached_json(&state, Cached::SiteInfo, async |conn| {
        Ok(db::content::site_info(conn).await?)
    })
    .await?;
    Ok(json_response(body))
}

/// Lists the projects.
#[utoipa::path(
    get, path = "/api/projects",
    tag = "content",
    responses((status = 200, description = "The projects", body = Vec<Project>)),
)]
pub(crate) async fn list_projects(State(state): State<PortfolioState>) -> Result<Response, Error> {
    let body = cached_json(&state, Cached::Projects, async |conn| {
        Ok(db::content::projects(conn).await?)
    })
    .await?;
    Ok(json_response(body))
}

/// One project.
#[utoipa::path(
    get, path = "/api/projects/{slug}",
    tag = "content",
    params(SlugParam),
    responses(
        (status = 200, description = "The project", body = Project),
        (status = 400, description = "Not a slug"),
    ),
)]
pub(crate) async fn get_project(
    State(state): State<PortfolioState>,
    PathParam(slug): PathParam<Slug>,
) -> Result<axum::Json<Project>, Error> {
    let project = db::content::project(&state.db, &slug)
        .await?
        .ok_or_else(|| Error::not_found(format!("no project {:?}", slug.as_str())))?;
    Ok(axum::Json(project))
}

/// Lists the achievements.
#[utoipa::path(
    get, path = "/api/achievements",
    tag = "content",
    responses((status = 200, description = "The achievements", body = Vec<Achievement>)),
)]
pub(crate) async fn list_achievements(
    State(state): State<PortfolioState>,
) -> Result<axum::Json<Vec<Achievement>>, Error> {
    let achievements = db::content::achievements(&mut *state.db.conn().await?).await?;
    Ok(axum::Json(achievements))
}

/// Lists the posts.
#[utoipa::path(
    get, path = "/api/posts",
    tag = "content",
    responses((status = 200, description = "The posts", body = Vec<PostSummary>)),
)]
pub(crate) async fn list_posts(State(state): State<PortfolioState>) -> Result<Response, Error> {
    let body = cached_json(&state, Cached::Posts, async |conn| {
        let posts = db::content::recent_posts(conn, None).await?;
        Ok(posts.into_iter().map(PostSummary::from).collect::<Vec<_>>())
    })
    .await?;
    Ok(json_response(body))
}

/// One post, with its body.
#[utoipa::path(
    get, path = "/api/posts/{slug}",
    tag = "content",
    params(SlugParam),
    responses(
        (status = 200, description = "The post", body = Post),
        (status = 400, description = "Not a slug"),
    ),
)]
pub(crate) async fn get_post(
    State(state): State<PortfolioState>,
    PathParam(slug): PathParam<Slug>,
) -> Result<axum::Json<Post>, Error> {
    let post = find_post(&mut *state.db.conn().await?, &slug).await?;
    Ok(axum::Json(post))
}

/// Everything about the site, for a language model.
#[utoipa::path(
    get, path = "/api/llm-context",
    tag = "content",
    responses(
        (status = 200, description = "The context", body = LlmContext),
        (status = 403, description = "The key lacks context:read"),
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn get_llm_context(
    State(state): State<PortfolioState>,
    _caller: Protected<ContextRead>,
) -> Result<Response, Error> {
    let content = cached_json(&state, Cached::LlmContext, async |conn| {
        Ok(LlmContextContent {
            site: db::content::site_info(conn).await?,
            projects: db::content::projects(conn).await?,
            achievements: db::content::achievements(conn).await?,
            recent_posts: db::content::recent_posts(conn, Some(RECENT_POSTS_IN_CONTEXT)).await?,
        })
    })
    .await?;
    // `{"generated_at":"…",` and the kept object without its `{`: the
    // fields in `LlmContext`'s order.
    let generated_at = serde_json::to_vec(&Utc::now())
        .map_err(|err| Error::internal("cannot write the time", err))?;
    let rest = content.get(1..).unwrap_or_default();
    let mut body = Vec::with_capacity(content.len() + generated_at.len() + 20);
    body.extend_from_slice(b"{\"generated_at\":");
    body.extend_from_slice(&generated_at);
    body.push(b',');
    body.extend_from_slice(rest);
    Ok(json_response(Bytes::from(body)))
}
