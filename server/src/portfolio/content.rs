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

use super::PortfolioState;
use super::auth::{ContextRead, Protected};
use super::db;
use super::model::{Achievement, Post, PostSummary, Project, SiteInfo, Slug, SlugParam};
use crate::error::Error;
use crate::extract::Path as PathParam;

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
    // From memory when nothing was written since it was read (read_cache.rs).
    let body = state
        .site_info
        .get(&state.db, (), async || {
            let site = db::content::site_info(&mut *state.db.conn().await?).await?;
            serde_json::to_vec(&site)
                .map(|json| Some(Bytes::from(json)))
                .map_err(|err| Error::internal("cannot write the site information", err))
        })
        .await?
        .ok_or_else(|| Error::internal("getSiteInfo", "no site information was read"))?;
    Ok((
        [(header::CONTENT_TYPE, "application/json")],
        Bytes::clone(&body),
    )
        .into_response())
}

/// Lists the projects.
#[utoipa::path(
    get, path = "/api/projects",
    tag = "content",
    responses((status = 200, description = "The projects", body = Vec<Project>)),
)]
pub(crate) async fn list_projects(
    State(state): State<PortfolioState>,
) -> Result<axum::Json<Vec<Project>>, Error> {
    let projects = db::content::projects(&mut *state.db.conn().await?).await?;
    Ok(axum::Json(projects))
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
pub(crate) async fn list_posts(
    State(state): State<PortfolioState>,
) -> Result<axum::Json<Vec<PostSummary>>, Error> {
    let posts = db::content::recent_posts(&mut *state.db.conn().await?, None).await?;
    Ok(axum::Json(
        posts.into_iter().map(PostSummary::from).collect(),
    ))
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
) -> Result<axum::Json<LlmContext>, Error> {
    let mut conn = state.db.conn().await?;
    Ok(axum::Json(LlmContext {
        generated_at: Utc::now(),
        site: db::content::site_info(&mut conn).await?,
        projects: db::content::projects(&mut conn).await?,
        achievements: db::content::achievements(&mut conn).await?,
        recent_posts: db::content::recent_posts(&mut conn, Some(RECENT_POSTS_IN_CONTEXT)).await?,
    }))
}
