//! Site information, projects, achievements and posts. Lists are stored as
//! JSON text; site information as one JSON document.

use chrono::NaiveDate;
use sqlx::{AnyConnection, FromRow};

use crate::clock;
use crate::portfolio::model::{Achievement, ContentFile, Post, Project, SiteInfo, Slug};
use crate::storage::{Database, StoreError};

fn json_list(what: &str, text: &str) -> Result<Vec<String>, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::corrupt(format!("{what}: {e}")))
}

fn json_text<T: serde::Serialize>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(StoreError::corrupt)
}

/// True when no content has been loaded yet.
pub async fn is_empty(db: &Database) -> Result<bool, StoreError> {
    let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM site_info")
        .fetch_one(db.pool())
        .await?;
    Ok(count == 0)
}

/// Writes a whole content file into empty tables, in one transaction.
pub async fn load(db: &Database, content: &ContentFile) -> Result<(), StoreError> {
    let mut tx = db.begin_write().await?;
    sqlx::query("INSERT INTO site_info (id, document) VALUES (1, $1)")
        .bind(json_text(&content.site)?)
        .execute(tx.conn())
        .await?;
    for project in &content.projects {
        insert_project(tx.conn(), project).await?;
    }
    for achievement in &content.achievements {
        insert_achievement(tx.conn(), achievement).await?;
    }
    for post in &content.posts {
        insert_post(tx.conn(), post).await?;
    }
    tx.commit().await
}

/// Replaces the site information.
pub async fn replace_site_info(db: &Database, site: &SiteInfo) -> Result<(), StoreError> {
    let mut tx = db.begin_write().await?;
    sqlx::query("UPDATE site_info SET document = $1 WHERE id = 1")
        .bind(json_text(site)?)
        .execute(tx.conn())
        .await?;
    tx.commit().await
}

/// Stores a new project (a taken slug is a conflict).
pub async fn insert_project(conn: &mut AnyConnection, p: &Project) -> Result<(), StoreError> {
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
    .bind(json_text(&p.tags)?)
    .bind(i32::from(p.featured))
    .execute(conn)
    .await?;
    Ok(())
}

/// Replaces project `slug` with `p` (which may carry a new slug); false if
/// there is no such project.
pub async fn replace_project(db: &Database, slug: &Slug, p: &Project) -> Result<bool, StoreError> {
    let mut tx = db.begin_write().await?;
    let replaced = sqlx::query(
        "UPDATE projects SET slug = $1, title = $2, summary = $3, description = $4, url = $5, \
         repository_url = $6, tags = $7, featured = $8 WHERE slug = $9",
    )
    .bind(&p.slug)
    .bind(&p.title)
    .bind(&p.summary)
    .bind(&p.description)
    .bind(&p.url)
    .bind(&p.repository_url)
    .bind(json_text(&p.tags)?)
    .bind(i32::from(p.featured))
    .bind(slug.as_str())
    .execute(tx.conn())
    .await?;
    tx.commit().await?;
    Ok(replaced.rows_affected() == 1)
}

/// Stores a new achievement (a taken slug is a conflict).
pub async fn insert_achievement(
    conn: &mut AnyConnection,
    a: &Achievement,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO achievements (slug, title, description, date, url) VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(&a.slug)
    .bind(&a.title)
    .bind(&a.description)
    .bind(a.date.to_string())
    .bind(&a.url)
    .execute(conn)
    .await?;
    Ok(())
}

/// Replaces achievement `slug` with `a`; false if there is no such one.
pub async fn replace_achievement(
    db: &Database,
    slug: &Slug,
    a: &Achievement,
) -> Result<bool, StoreError> {
    let mut tx = db.begin_write().await?;
    let replaced = sqlx::query(
        "UPDATE achievements SET slug = $1, title = $2, description = $3, date = $4, url = $5 \
         WHERE slug = $6",
    )
    .bind(&a.slug)
    .bind(&a.title)
    .bind(&a.description)
    .bind(a.date.to_string())
    .bind(&a.url)
    .bind(slug.as_str())
    .execute(tx.conn())
    .await?;
    tx.commit().await?;
    Ok(replaced.rows_affected() == 1)
}

/// Stores a new post (a taken slug is a conflict).
pub async fn insert_post(conn: &mut AnyConnection, p: &Post) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO posts (slug, title, summary, body, tags, published_at) VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(&p.slug)
    .bind(&p.title)
    .bind(&p.summary)
    .bind(&p.body)
    .bind(json_text(&p.tags)?)
    // To the second, so that the text sorts as the time does.
    .bind(clock::timestamp_secs(p.published_at))
    .execute(conn)
    .await?;
    Ok(())
}

/// Replaces post `slug` with `p`; false if there is no such post.
pub async fn replace_post(db: &Database, slug: &Slug, p: &Post) -> Result<bool, StoreError> {
    let mut tx = db.begin_write().await?;
    let replaced = sqlx::query(
        "UPDATE posts SET slug = $1, title = $2, summary = $3, body = $4, tags = $5, \
         published_at = $6 WHERE slug = $7",
    )
    .bind(&p.slug)
    .bind(&p.title)
    .bind(&p.summary)
    .bind(&p.body)
    .bind(json_text(&p.tags)?)
    .bind(clock::timestamp_secs(p.published_at))
    .bind(slug.as_str())
    .execute(tx.conn())
    .await?;
    tx.commit().await?;
    Ok(replaced.rows_affected() == 1)
}

/// What can be deleted by slug.
#[derive(Debug, Clone, Copy)]
pub enum Item {
    Project,
    Achievement,
    Post,
}

/// Deletes an item; false if there is no such one.
pub async fn delete(db: &Database, item: Item, slug: &Slug) -> Result<bool, StoreError> {
    let query = match item {
        Item::Project => "DELETE FROM projects WHERE slug = $1",
        Item::Achievement => "DELETE FROM achievements WHERE slug = $1",
        Item::Post => "DELETE FROM posts WHERE slug = $1",
    };
    let mut tx = db.begin_write().await?;
    let deleted = sqlx::query(query)
        .bind(slug.as_str())
        .execute(tx.conn())
        .await?;
    tx.commit().await?;
    Ok(deleted.rows_affected() == 1)
}

/// The site information.
pub async fn site_info(conn: &mut AnyConnection) -> Result<SiteInfo, StoreError> {
    let document: Option<String> =
        sqlx::query_scalar("SELECT document FROM site_info WHERE id = 1")
            .fetch_optional(conn)
            .await?;
    let document = document.ok_or_else(|| StoreError::corrupt("site_info: missing"))?;
    serde_json::from_str(&document).map_err(|e| StoreError::corrupt(format!("site_info: {e}")))
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
    type Error = StoreError;

    fn try_from(row: ProjectRow) -> Result<Self, StoreError> {
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

/// The projects, featured first, then by title.
pub async fn projects(conn: &mut AnyConnection) -> Result<Vec<Project>, StoreError> {
    let rows: Vec<ProjectRow> = sqlx::query_as(&format!(
        "SELECT {PROJECT_COLUMNS} FROM projects ORDER BY featured DESC, title, slug"
    ))
    .fetch_all(conn)
    .await?;
    rows.into_iter().map(Project::try_from).collect()
}

/// One project.
pub async fn project(db: &Database, slug: &Slug) -> Result<Option<Project>, StoreError> {
    let row: Option<ProjectRow> = sqlx::query_as(&format!(
        "SELECT {PROJECT_COLUMNS} FROM projects WHERE slug = $1"
    ))
    .bind(slug.as_str())
    .fetch_optional(db.pool())
    .await?;
    row.map(Project::try_from).transpose()
}

#[derive(FromRow)]
struct AchievementRow {
    slug: String,
    title: String,
    description: String,
    date: String,
    url: Option<String>,
}

/// The achievements, newest first.
pub async fn achievements(conn: &mut AnyConnection) -> Result<Vec<Achievement>, StoreError> {
    let rows: Vec<AchievementRow> = sqlx::query_as(
        "SELECT slug, title, description, date, url FROM achievements ORDER BY date DESC, slug",
    )
    .fetch_all(conn)
    .await?;
    rows.into_iter()
        .map(|row| {
            Ok(Achievement {
                date: row
                    .date
                    .parse::<NaiveDate>()
                    .map_err(|e| StoreError::corrupt(format!("{}: {e}", row.slug)))?,
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
    type Error = StoreError;

    fn try_from(row: PostRow) -> Result<Self, StoreError> {
        Ok(Post {
            tags: json_list(&row.slug, &row.tags)?,
            published_at: clock::parse_timestamp(&row.published_at)
                .map_err(|e| StoreError::corrupt(format!("{}: {e}", row.slug)))?,
            slug: row.slug,
            title: row.title,
            summary: row.summary,
            body: row.body,
        })
    }
}

const POST_COLUMNS: &str = "slug, title, summary, body, tags, published_at";

/// The posts, newest first; at most `limit` of them.
pub async fn recent_posts(
    conn: &mut AnyConnection,
    limit: Option<usize>,
) -> Result<Vec<Post>, StoreError> {
    let limit = limit.map(|n| format!(" LIMIT {n}")).unwrap_or_default();
    let rows: Vec<PostRow> = sqlx::query_as(&format!(
        "SELECT {POST_COLUMNS} FROM posts ORDER BY published_at DESC, slug{limit}"
    ))
    .fetch_all(conn)
    .await?;
    rows.into_iter().map(Post::try_from).collect()
}

/// One post.
pub async fn post(conn: &mut AnyConnection, slug: &Slug) -> Result<Option<Post>, StoreError> {
    let row: Option<PostRow> =
        sqlx::query_as(&format!("SELECT {POST_COLUMNS} FROM posts WHERE slug = $1"))
            .bind(slug.as_str())
            .fetch_optional(conn)
            .await?;
    row.map(Post::try_from).transpose()
}
