//! Site information, projects, achievements and posts: served from the
//! database (`reads::content`), which is filled from a content file on
//! first start.

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse as _, Response};
use bytes::Bytes;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::http::error::Error;
use crate::http::extract::Path as PathParam;
use crate::portfolio::api::auth::{ContextRead, Protected};
use crate::portfolio::api::paging::{Slice, SliceQuery};
use crate::portfolio::model::{Achievement, Post, PostSummary, Project, SiteInfo, Slug, SlugParam};
use crate::portfolio::reads::content;
use crate::portfolio::state::PortfolioState;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub(crate) struct LlmContext {
    pub(crate) generated_at: DateTime<Utc>,
    pub(crate) site: SiteInfo,
    pub(crate) projects: Vec<Project>,
    pub(crate) achievements: Vec<Achievement>,
    pub(crate) recent_posts: Vec<Post>,
}

fn json_response(body: Bytes) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// Site information.
#[utoipa::path(
    get, path = "/api/site-info",
    tag = "content",
    responses((status = 200, description = "The site information", body = SiteInfo)),
)]
pub(crate) async fn get_site_info(State(state): State<PortfolioState>) -> Result<Response, Error> {
    Ok(json_response(content::site_info(state.reads()).await?))
}

/// Lists the projects.
#[utoipa::path(
    get, path = "/api/projects",
    tag = "content",
    params(SliceQuery),
    responses(
        (status = 200, description = "The projects", body = Vec<Project>,
            headers(("Link" = String, description = "Where the next slice is"))),
        (status = 400, description = "A malformed limit or cursor"),
    ),
)]
pub(crate) async fn list_projects(
    State(state): State<PortfolioState>,
    slice: Slice,
) -> Result<Response, Error> {
    slice.answer(content::projects(state.reads()).await?)
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
    Ok(axum::Json(content::project(&state.db, &slug).await?))
}

/// Lists the achievements.
#[utoipa::path(
    get, path = "/api/achievements",
    tag = "content",
    params(SliceQuery),
    responses(
        (status = 200, description = "The achievements", body = Vec<Achievement>,
            headers(("Link" = String, description = "Where the next slice is"))),
        (status = 400, description = "A malformed limit or cursor"),
    ),
)]
pub(crate) async fn list_achievements(
    State(state): State<PortfolioState>,
    slice: Slice,
) -> Result<Response, Error> {
    slice.answer_items(&content::achievements(&state.db).await?)
}

/// Lists the posts.
#[utoipa::path(
    get, path = "/api/posts",
    tag = "content",
    params(SliceQuery),
    responses(
        (status = 200, description = "The posts", body = Vec<PostSummary>,
            headers(("Link" = String, description = "Where the next slice is"))),
        (status = 400, description = "A malformed limit or cursor"),
    ),
)]
pub(crate) async fn list_posts(
    State(state): State<PortfolioState>,
    slice: Slice,
) -> Result<Response, Error> {
    slice.answer(content::posts(state.reads()).await?)
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
    Ok(axum::Json(content::post(&state.db, &slug).await?))
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
    Ok(json_response(content::llm_context(state.reads()).await?))
}
