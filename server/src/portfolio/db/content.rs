//! Site information, projects, achievements and posts. Lists are stored as
//! JSON text; site information as one JSON document.

use chrono::NaiveDate;
use sqlx::{AnyConnection, FromRow};

use crate::core::clock;
use crate::portfolio::db;
use crate::portfolio::model::{Achievement, ContentFile, Post, Project, SiteInfo, Slug};
use crate::storage::{Database, StoreError, placeholders, time_from_text};

fn json_list(what: &str, text: &str) -> Result<Vec<String>, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::corrupt(format!("{what}: {e}")))
}

fn json_text<T: serde::Serialize>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(StoreError::corrupt)
}

/// True when no content has been loaded yet.
pub(crate) async fn is_empty(db: &Database) -> Result<bool, StoreError> {
    let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM site_info")
        .fetch_one(db.pool())
        .await?;
    Ok(count == 0)
}

/// Writes a whole content file into empty tables, in one transaction.
pub(crate) async fn load(db: &Database, content: &ContentFile) -> Result<(), StoreError> {
    let mut tx = db.begin_write().await?;
    tx.changed([db::CONTENT]);
    sqlx::query("INSERT INTO site_info (id, document) VALUES (1, $1)")
        .bind(json_text(&content.site)?)
        .execute(tx.conn())
        .await?;
    for project in &content.projects {
        insert(tx.conn(), project).await?;
    }
    for achievement in &content.achievements {
        insert(tx.conn(), achievement).await?;
    }
    for post in &content.posts {
        insert(tx.conn(), post).await?;
    }
    tx.commit().await
}

/// Replaces the site information.
pub(crate) async fn replace_site_info(
    conn: &mut AnyConnection,
    site: &SiteInfo,
) -> Result<(), StoreError> {
    sqlx::query("UPDATE site_info SET document = $1 WHERE id = 1")
        .bind(json_text(site)?)
        .execute(conn)
        .await?;
    Ok(())
}

/// What the store writes of each kind of item: its table, its columns
/// (the slug first), and its values in their order. One implementation of
/// insert, replace and delete serves all three kinds.
pub(crate) trait StoredItem: Sync {
    const TABLE: &'static str;
    const COLUMNS: &'static [&'static str];

    /// Binds the item's values, one per column.
    fn bind<'q>(&'q self, query: AnyQuery<'q>) -> Result<AnyQuery<'q>, StoreError>;
}

type AnyQuery<'q> = sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>>;

impl StoredItem for Project {
    const TABLE: &'static str = "projects";
    const COLUMNS: &'static [&'static str] = &[
        "slug",
        "title",
        "summary",
        "description",
        "url",
        "repository_url",
        "tags",
        "featured",
    ];

    fn bind<'q>(&'q self, query: AnyQuery<'q>) -> Result<AnyQuery<'q>, StoreError> {
        Ok(query
            .bind(&self.slug)
            .bind(&self.title)
            .bind(&self.summary)
            .bind(&self.description)
            .bind(&self.url)
            .bind(&self.repository_url)
            .bind(json_text(&self.tags)?)
            .bind(i32::from(self.featured)))
    }
}

impl StoredItem for Achievement {
    const TABLE: &'static str = "achievements";
    const COLUMNS: &'static [&'static str] = &["slug", "title", "description", "date", "url"];

    fn bind<'q>(&'q self, query: AnyQuery<'q>) -> Result<AnyQuery<'q>, StoreError> {
        Ok(query
            .bind(&self.slug)
            .bind(&self.title)
            .bind(&self.description)
            .bind(self.date.to_string())
            .bind(&self.url))
    }
}

impl StoredItem for Post {
    const TABLE: &'static str = "posts";
    const COLUMNS: &'static [&'static str] =
        &["slug", "title", "summary", "body", "tags", "published_at"];

    fn bind<'q>(&'q self, query: AnyQuery<'q>) -> Result<AnyQuery<'q>, StoreError> {
        Ok(query
            .bind(&self.slug)
            .bind(&self.title)
            .bind(&self.summary)
            .bind(&self.body)
            .bind(json_text(&self.tags)?)
            // To the second, so that the text sorts as the time does.
            .bind(clock::timestamp_secs(self.published_at)))
    }
}

/// Stores a new item (a taken slug is a conflict).
pub(crate) async fn insert<T: StoredItem>(
    conn: &mut AnyConnection,
    item: &T,
) -> Result<(), StoreError> {
    let sql = format!(
        "INSERT INTO {} ({}) VALUES ({})",
        T::TABLE,
        T::COLUMNS.join(", "),
        placeholders(T::COLUMNS.len())
    );
    item.bind(sqlx::query(&sql))?.execute(conn).await?;
    Ok(())
}

/// Replaces the item `slug` with `item`; false if there is no such item.
pub(crate) async fn replace<T: StoredItem>(
    conn: &mut AnyConnection,
    slug: &Slug,
    item: &T,
) -> Result<bool, StoreError> {
    let assignments: Vec<String> = (1..)
        .zip(T::COLUMNS)
        .map(|(n, column)| format!("{column} = ${n}"))
        .collect();
    let sql = format!(
        "UPDATE {} SET {} WHERE slug = ${}",
        T::TABLE,
        assignments.join(", "),
        T::COLUMNS.len() + 1
    );
    let replaced = item
        .bind(sqlx::query(&sql))?
        .bind(slug.as_str())
        .execute(conn)
        .await?;
    Ok(replaced.rows_affected() == 1)
}

/// Deletes the item `slug` of `T`'s kind; false if there is no such item.
pub(crate) async fn delete<T: StoredItem>(
    conn: &mut AnyConnection,
    slug: &Slug,
) -> Result<bool, StoreError> {
    let sql = format!("DELETE FROM {} WHERE slug = $1", T::TABLE);
    let deleted = sqlx::query(&sql).bind(slug.as_str()).execute(conn).await?;
    Ok(deleted.rows_affected() == 1)
}

/// The site information.
pub(crate) async fn site_info(conn: &mut AnyConnection) -> Result<SiteInfo, StoreError> {
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
pub(crate) async fn projects(conn: &mut AnyConnection) -> Result<Vec<Project>, StoreError> {
    let rows: Vec<ProjectRow> = sqlx::query_as(&format!(
        "SELECT {PROJECT_COLUMNS} FROM projects ORDER BY featured DESC, title, slug"
    ))
    .fetch_all(conn)
    .await?;
    rows.into_iter().map(Project::try_from).collect()
}

/// One project.
pub(crate) async fn project(db: &Database, slug: &Slug) -> Result<Option<Project>, StoreError> {
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
pub(crate) async fn achievements(conn: &mut AnyConnection) -> Result<Vec<Achievement>, StoreError> {
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
            published_at: time_from_text(&row.published_at)?,
            slug: row.slug,
            title: row.title,
            summary: row.summary,
            body: row.body,
        })
    }
}

const POST_COLUMNS: &str = "slug, title, summary, body, tags, published_at";

/// The posts, newest first; at most `limit` of them.
pub(crate) async fn recent_posts(
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
pub(crate) async fn post(
    conn: &mut AnyConnection,
    slug: &Slug,
) -> Result<Option<Post>, StoreError> {
    let row: Option<PostRow> =
        sqlx::query_as(&format!("SELECT {POST_COLUMNS} FROM posts WHERE slug = $1"))
            .bind(slug.as_str())
            .fetch_optional(conn)
            .await?;
    row.map(Post::try_from).transpose()
}
