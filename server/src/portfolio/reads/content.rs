//! The site's content (site information, projects, achievements, posts)
//! as the public reads answer it: the lists and `llm-context` from memory
//! until the content changes, as the bytes sent.

use bytes::Bytes;
use chrono::Utc;
use serde::Serialize;
use sqlx::AnyConnection;

use super::Context;
use crate::http::error::Error;
use crate::portfolio::db;
use crate::portfolio::model::{Achievement, Post, PostSummary, Project, SiteInfo, Slug};
use crate::storage::{Database, Generations};

/// How many posts the LLM context carries.
const RECENT_POSTS_IN_CONTEXT: usize = 10;

/// The content's answers kept in memory, each until the content changes.
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
}

/// What every cached answer depends on: the content.
pub(crate) fn ticket(generations: &Generations, _: &Cached) -> u64 {
    generations.ticket([db::CONTENT])
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
    ctx: Context<'_>,
    key: Cached,
    load: impl AsyncFnOnce(&mut AnyConnection) -> Result<T, Error>,
) -> Result<Bytes, Error> {
    let body = ctx
        .caches
        .content
        .get(ctx.db, key, async || {
            let value = load(&mut *ctx.db.conn().await?).await?;
            serde_json::to_vec(&value)
                .map(|json| Some(Bytes::from(json)))
                .map_err(|err| Error::internal("cannot write the content as JSON", err))
        })
        .await?
        .ok_or_else(|| Error::internal("content", "no content was read"))?;
    Ok(Bytes::clone(&body))
}

/// The site information, as JSON.
pub(crate) async fn site_info(ctx: Context<'_>) -> Result<Bytes, Error> {
    cached_json(ctx, Cached::SiteInfo, async |conn| {
        Ok(db::content::site_info(conn).await?)
    })
    .await
}

/// The projects, as JSON.
pub(crate) async fn projects(ctx: Context<'_>) -> Result<Bytes, Error> {
    cached_json(ctx, Cached::Projects, async |conn| {
        Ok(db::content::projects(conn).await?)
    })
    .await
}

/// The posts without their bodies, newest first, as JSON.
pub(crate) async fn posts(ctx: Context<'_>) -> Result<Bytes, Error> {
    cached_json(ctx, Cached::Posts, async |conn| {
        let posts = db::content::recent_posts(conn, None).await?;
        Ok(posts.into_iter().map(PostSummary::from).collect::<Vec<_>>())
    })
    .await
}

/// The project with this slug; 404 if there is none.
pub(crate) async fn project(db: &Database, slug: &Slug) -> Result<Project, Error> {
    db::content::project(db, slug)
        .await?
        .ok_or_else(|| Error::not_found(format!("no project {:?}", slug.as_str())))
}

/// The achievements.
pub(crate) async fn achievements(db: &Database) -> Result<Vec<Achievement>, Error> {
    Ok(db::content::achievements(&mut *db.conn().await?).await?)
}

/// The post with this slug; 404 if there is none.
pub(crate) async fn post(db: &Database, slug: &Slug) -> Result<Post, Error> {
    db::content::post(&mut *db.conn().await?, slug)
        .await?
        .ok_or_else(|| Error::not_found(format!("no post {:?}", slug.as_str())))
}

/// Everything about the site, for a language model, as JSON: the kept
/// content with the time of this answer first.
pub(crate) async fn llm_context(ctx: Context<'_>) -> Result<Bytes, Error> {
    let content = cached_json(ctx, Cached::LlmContext, async |conn| {
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
    Ok(Bytes::from(body))
}
