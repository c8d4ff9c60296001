//! The site's content: site information (replace), and projects,
//! achievements and posts (create, replace, delete), with the rules each
//! kind of item keeps. One implementation of create, replace and delete
//! serves the three kinds ([`Item`]).
//!
//! A replacement keeps the item's slug: one in the body must match the
//! path (a rename is a create and a delete), so that what was recorded
//! under a slug (a post's notification, its publication) stays its own.

use std::path::Path;

use anyhow::Context as _;

use super::Context;
use crate::core::failure::{Failure, OnConflict as _};
use crate::portfolio::db;
use crate::portfolio::db::content::StoredItem;
use crate::portfolio::model::fields::Fields;
use crate::portfolio::model::{
    Achievement, ContentFile, Link, Post, Project, SiteInfo, Slug, is_http_url,
};
use crate::storage::Database;

/// A kind of content item: what it is called, its slug, its rules.
pub(crate) trait Item: StoredItem {
    /// What people call it ("project").
    const NAME: &'static str;

    fn slug(&self) -> &str;

    /// The item's problems, by field (the rules of its fields).
    fn check(&self) -> Result<(), Failure>;
}

impl Item for Project {
    const NAME: &'static str = "project";

    fn check(&self) -> Result<(), Failure> {
        let mut fields = item_fields(&self.slug, &self.title);
        fields.text("summary", Some(&self.summary), true, 500);
        fields.text("description", Some(&self.description), true, 20_000);
        url(&mut fields, "url", self.url.as_deref());
        url(
            &mut fields,
            "repository_url",
            self.repository_url.as_deref(),
        );
        tags(&mut fields, &self.tags);
        fields.check()
    }

    fn slug(&self) -> &str {
        &self.slug
    }
}

impl Item for Achievement {
    const NAME: &'static str = "achievement";

    fn check(&self) -> Result<(), Failure> {
        let mut fields = item_fields(&self.slug, &self.title);
        fields.text("description", Some(&self.description), true, 5000);
        url(&mut fields, "url", self.url.as_deref());
        fields.check()
    }

    fn slug(&self) -> &str {
        &self.slug
    }
}

impl Item for Post {
    const NAME: &'static str = "post";

    fn check(&self) -> Result<(), Failure> {
        let mut fields = item_fields(&self.slug, &self.title);
        fields.text("summary", Some(&self.summary), true, 1000);
        fields.text("body", Some(&self.body), true, 200_000);
        tags(&mut fields, &self.tags);
        fields.check()
    }

    fn slug(&self) -> &str {
        &self.slug
    }
}

/// Fills the content tables from the file (or the sample), if they are
/// empty (first start).
pub(crate) async fn load_if_empty(db: &Database, file: Option<&Path>) -> anyhow::Result<()> {
    if !db::content::is_empty(db).await? {
        return Ok(());
    }
    let content = checked_content(file)?;
    db::content::load(db, &content)
        .await
        .context("cannot store the content")?;
    tracing::info!(
        projects = content.projects.len(),
        achievements = content.achievements.len(),
        posts = content.posts.len(),
        "loaded the portfolio content"
    );
    Ok(())
}

/// The content file checked: the file's (or the sample's) content, once
/// every field keeps its rule.
fn checked_content(file: Option<&Path>) -> anyhow::Result<ContentFile> {
    let content = ContentFile::load(file)?;
    check_content_file(&content).map_err(|problems| {
        let source = file.map_or_else(
            || "the sample content".to_owned(),
            |path| format!("the content file {}", path.display()),
        );
        anyhow::anyhow!("{source} breaks the rules of its fields: {problems}")
    })?;
    Ok(content)
}

/// How the content file differs from the database: what an import adds or
/// changes, and what it keeps that the file does not have (items made
/// through the API or the console since). Items are named `project <slug>`.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub(crate) struct ContentDiff {
    /// The site information differs.
    pub(crate) site_changed: bool,
    pub(crate) added: Vec<String>,
    pub(crate) changed: Vec<String>,
    /// In the database and not in the file: left as they are.
    pub(crate) kept: Vec<String>,
}

impl ContentDiff {
    /// Whether an import would change nothing.
    pub(crate) fn is_empty(&self) -> bool {
        !self.site_changed && self.added.is_empty() && self.changed.is_empty()
    }

    /// One line per change, for people (the log, the CLI).
    pub(crate) fn lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        if self.site_changed {
            lines.push("~ site".to_owned());
        }
        lines.extend(self.added.iter().map(|item| format!("+ {item}")));
        lines.extend(self.changed.iter().map(|item| format!("~ {item}")));
        lines.extend(
            self.kept
                .iter()
                .map(|item| format!("= {item} (not in the file: kept)")),
        );
        lines
    }

    /// Notes `wanted` (the file's items of a kind) against `stored` (the
    /// database's): the ones to add, and the ones to replace.
    fn note<'a, T: Item + PartialEq>(&mut self, wanted: &'a [T], stored: &[T]) -> Vec<&'a T> {
        let mut to_write = Vec::new();
        for item in wanted {
            match stored.iter().find(|s| s.slug() == item.slug()) {
                None => {
                    self.added.push(format!("{} {}", T::NAME, item.slug()));
                    to_write.push(item);
                }
                Some(kept) if kept != item => {
                    self.changed.push(format!("{} {}", T::NAME, item.slug()));
                    to_write.push(item);
                }
                Some(_) => {}
            }
        }
        for item in stored {
            if !wanted.iter().any(|w| w.slug() == item.slug()) {
                self.kept.push(format!("{} {}", T::NAME, item.slug()));
            }
        }
        to_write
    }
}

/// Loads the content file (or the sample) into the database: what it adds
/// and changes, in one transaction; nothing it lacks is removed. With
/// `dry_run`, only says what it would do.
pub(crate) async fn import(
    db: &Database,
    file: Option<&Path>,
    dry_run: bool,
) -> anyhow::Result<ContentDiff> {
    let mut content = checked_content(file)?;
    // Stored to the second: compared so.
    for post in &mut content.posts {
        post.published_at = crate::core::clock::to_the_second(post.published_at);
    }
    let mut tx = db.begin_write().await?;
    tx.changed([db::CONTENT]);
    let site = db::content::site_info(tx.conn()).await?;
    let mut diff = ContentDiff {
        site_changed: site != content.site,
        ..ContentDiff::default()
    };
    let projects = db::content::projects(tx.conn()).await?;
    let achievements = db::content::achievements(tx.conn()).await?;
    let posts = db::content::recent_posts(tx.conn(), None).await?;
    let projects = diff.note(&content.projects, &projects);
    let achievements = diff.note(&content.achievements, &achievements);
    let posts = diff.note(&content.posts, &posts);
    if dry_run || diff.is_empty() {
        return Ok(diff);
    }
    if diff.site_changed {
        db::content::replace_site_info(tx.conn(), &content.site).await?;
    }
    write_all(tx.conn(), &projects).await?;
    write_all(tx.conn(), &achievements).await?;
    write_all(tx.conn(), &posts).await?;
    tx.commit().await?;
    Ok(diff)
}

/// Has this process read the content from the database again: for a change
/// it did not make (an import by the CLI on SQLite, whose writes other
/// processes are not told of).
pub(crate) fn forget_cached(db: &Database) {
    let mut content = crate::storage::Changes::nothing_cached();
    content.add([db::CONTENT]);
    db.generations().advance(&content);
}

/// Stores each item, replacing the one of its slug if there is one.
async fn write_all<T: Item>(
    conn: &mut sqlx::AnyConnection,
    items: &[&T],
) -> Result<(), crate::storage::StoreError> {
    for item in items {
        let slug =
            Slug::try_from(item.slug().to_owned()).map_err(crate::storage::StoreError::corrupt)?;
        if !db::content::replace(&mut *conn, &slug, *item).await? {
            db::content::insert(&mut *conn, *item).await?;
        }
    }
    Ok(())
}

/// Replaces the site information.
pub(crate) async fn replace_site_info(ctx: Context<'_>, site: &SiteInfo) -> Result<(), Failure> {
    check_site_info(site)?;
    let mut tx = ctx.db.begin_write().await?;
    tx.changed([db::CONTENT]);
    db::content::replace_site_info(tx.conn(), site).await?;
    tx.commit().await?;
    Ok(())
}

/// Adds an item; a taken slug is a conflict.
pub(crate) async fn create<T: Item>(ctx: Context<'_>, item: &T) -> Result<(), Failure> {
    item.check()?;
    let mut tx = ctx.db.begin_write().await?;
    tx.changed([db::CONTENT]);
    db::content::insert(tx.conn(), item)
        .await
        .on_conflict(|_| {
            Failure::conflict(format!(
                "a {} with the slug {:?} exists",
                T::NAME,
                item.slug()
            ))
        })?;
    tx.commit().await?;
    Ok(())
}

/// Replaces the item `slug`, keeping its slug.
pub(crate) async fn replace<T: Item>(
    ctx: Context<'_>,
    slug: &Slug,
    item: &T,
) -> Result<(), Failure> {
    item.check()?;
    same_slug(slug, item.slug())?;
    let mut tx = ctx.db.begin_write().await?;
    tx.changed([db::CONTENT]);
    if !db::content::replace(tx.conn(), slug, item).await? {
        return Err(missing::<T>(slug));
    }
    tx.commit().await?;
    Ok(())
}

/// Deletes the item `slug` of `T`'s kind.
pub(crate) async fn delete<T: Item>(ctx: Context<'_>, slug: &Slug) -> Result<(), Failure> {
    let mut tx = ctx.db.begin_write().await?;
    tx.changed([db::CONTENT]);
    if !db::content::delete::<T>(tx.conn(), slug).await? {
        return Err(missing::<T>(slug));
    }
    tx.commit().await?;
    Ok(())
}

/// Unless the body's slug is the path's: a replacement keeps its slug.
fn same_slug(path: &Slug, body: &str) -> Result<(), Failure> {
    if path.as_str() == body {
        return Ok(());
    }
    Err(Failure::invalid_fields([(
        "slug".to_owned(),
        format!(
            "must be {:?}, the path's: a replacement keeps its slug (create the new one and delete the old)",
            path.as_str()
        ),
    )]))
}

fn missing<T: Item>(slug: &Slug) -> Failure {
    Failure::not_found(format!("no {} {:?}", T::NAME, slug.as_str()))
}

const MAX_TAGS: usize = 20;
const MAX_LINKS: usize = 20;

/// An http(s) URL of at most 2000 characters, if given.
fn url(fields: &mut Fields, name: &str, value: Option<&str>) {
    if let Some(text) = fields.text(name, value, false, 2000)
        && !is_http_url(&text)
    {
        fields.problem(name, "not an http(s) URL");
    }
}

/// The rules every item keeps: a slug, and a title of at most 200
/// characters.
fn item_fields(slug_value: &str, title: &str) -> Fields {
    let mut fields = Fields::default();
    slug(&mut fields, slug_value);
    fields.text("title", Some(title), true, 200);
    fields
}

fn slug(fields: &mut Fields, value: &str) {
    if Slug::try_from(value.to_owned()).is_err() {
        fields.problem(
            "slug",
            "lower-case letters and digits in dash-separated runs, at most 100 characters",
        );
    }
}

fn tags(fields: &mut Fields, tags: &[String]) {
    if tags.len() > MAX_TAGS {
        fields.problem("tags", &format!("at most {MAX_TAGS} tags"));
    }
    for (i, tag) in tags.iter().enumerate() {
        fields.text(&format!("tags[{i}]"), Some(tag), true, 50);
    }
}

fn links(fields: &mut Fields, links: &[Link]) {
    if links.len() > MAX_LINKS {
        fields.problem("links", &format!("at most {MAX_LINKS} links"));
    }
    for (i, link) in links.iter().enumerate() {
        fields.text(&format!("links[{i}].label"), Some(&link.label), true, 100);
        fields.text(&format!("links[{i}].url"), Some(&link.url), true, 2000);
        url(fields, &format!("links[{i}].url"), Some(&link.url));
    }
}

pub(crate) fn check_site_info(site: &SiteInfo) -> Result<(), Failure> {
    let mut fields = Fields::default();
    fields.text("name", Some(&site.name), true, 100);
    fields.text("headline", Some(&site.headline), true, 200);
    fields.text("bio", Some(&site.bio), true, 5000);
    fields.text("location", site.location.as_deref(), false, 100);
    fields.email("contact_email", site.contact_email.as_deref(), false);
    url(&mut fields, "website", site.website.as_deref());
    links(&mut fields, &site.links);
    fields.check()
}

/// The content file (or the sample) against the rules of the writes above,
/// so that what the public reads serve always keeps the documented schemas:
/// each problem, by item and field.
pub(crate) fn check_content_file(content: &ContentFile) -> Result<(), String> {
    let mut problems = Vec::new();
    note_problems("site", check_site_info(&content.site), &mut problems);
    note_items(&content.projects, &mut problems);
    note_items(&content.achievements, &mut problems);
    note_items(&content.posts, &mut problems);
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    }
}

fn note_items<T: Item>(items: &[T], problems: &mut Vec<String>) {
    for item in items {
        let name = format!("{} {:?}", T::NAME, item.slug());
        note_problems(&name, item.check(), problems);
    }
}

/// `item: field: problem` for each field `checked` found broken.
fn note_problems(item: &str, checked: Result<(), Failure>, problems: &mut Vec<String>) {
    if let Err(Failure::Invalid { fields, .. }) = checked {
        for (field, problem) in fields {
            problems.push(format!("{item}: {field}: {problem}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problems(value: &str) -> usize {
        let mut fields = Fields::default();
        url(&mut fields, "url", Some(value));
        fields.check().map_or_else(
            |e| match e {
                Failure::Invalid { fields, .. } => fields.len(),
                _ => 0,
            },
            |()| 0,
        )
    }

    #[test]
    fn the_sample_content_keeps_the_rules_and_a_bad_file_is_refused() {
        let sample = ContentFile::load(None).unwrap();
        assert_eq!(check_content_file(&sample), Ok(()));
        let mut bad = sample;
        bad.projects[0].url = Some("javascript:alert(1)".to_owned());
        bad.site.name = String::new();
        let problems = check_content_file(&bad).unwrap_err();
        assert!(problems.contains("site: name: required"), "{problems}");
        let slug = &bad.projects[0].slug;
        assert!(
            problems.contains(&format!("project {slug:?}: url: not an http(s) URL")),
            "{problems}"
        );
    }

    #[test]
    fn links_are_http_urls_as_the_pattern_says() {
        for good in [
            "https://example.com",
            "http://localhost:8080/a/b?c=d#e",
            "http://127.0.0.1:65535/",
            "https://a-b.c-d.example/ümlaut?q=\u{1}",
            "HTTPS://EXAMPLE.COM/".to_lowercase().as_str(),
        ] {
            assert!(url::Url::parse(good).is_ok(), "{good}");
            assert_eq!(problems(good), 0, "{good}");
        }
        for bad in [
            "javascript:alert(1)",
            "ftp://example.com/",
            "http://",
            "http://[::1]/",
            "http://user:pw@example.com/",
            "http://1.2.3.999/",
            "http://1.2.3.4.5/",
            "http://example.com:65536/",
            "http://example.com:0/",
            "http://xn--a.com/",
            "http://a..b/",
            "http://example.com/a b",
        ] {
            assert_eq!(problems(bad), 1, "{bad}");
        }
    }
}
