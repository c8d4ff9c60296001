//! The site's content, managed: site information (replace), projects,
//! achievements and posts (create, replace, delete). The public reads serve
//! from the same tables, so a change shows there at once.
//!
//! A replacement keeps the item's slug: one in the body must match the
//! path (a rename is a create and a delete), so that what was recorded
//! under a slug (a post's notification, its publication) stays its own.

use axum::extract::State;
use axum::http::StatusCode;

use crate::error::{Error, OnConflict as _};
use crate::extract::{JsonBody, Path};
use crate::portfolio::PortfolioState;
use crate::portfolio::auth::{ContentWrite, Private};
use crate::portfolio::db;
use crate::portfolio::db::content::Item;
use crate::portfolio::fields::Fields;
use crate::portfolio::model::{
    Achievement, ContentFile, Link, Post, Project, SiteInfo, Slug, is_http_url,
};

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

pub fn check_site_info(site: &SiteInfo) -> Result<(), Error> {
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

pub fn check_project(project: &Project) -> Result<(), Error> {
    let mut fields = Fields::default();
    slug(&mut fields, &project.slug);
    fields.text("title", Some(&project.title), true, 200);
    fields.text("summary", Some(&project.summary), true, 500);
    fields.text("description", Some(&project.description), true, 20_000);
    url(&mut fields, "url", project.url.as_deref());
    url(
        &mut fields,
        "repository_url",
        project.repository_url.as_deref(),
    );
    tags(&mut fields, &project.tags);
    fields.check()
}

pub fn check_achievement(achievement: &Achievement) -> Result<(), Error> {
    let mut fields = Fields::default();
    slug(&mut fields, &achievement.slug);
    fields.text("title", Some(&achievement.title), true, 200);
    fields.text("description", Some(&achievement.description), true, 5000);
    url(&mut fields, "url", achievement.url.as_deref());
    fields.check()
}

pub fn check_post(post: &Post) -> Result<(), Error> {
    let mut fields = Fields::default();
    slug(&mut fields, &post.slug);
    fields.text("title", Some(&post.title), true, 200);
    fields.text("summary", Some(&post.summary), true, 1000);
    fields.text("body", Some(&post.body), true, 200_000);
    tags(&mut fields, &post.tags);
    fields.check()
}

/// The content file (or the sample) against the rules of the writes above,
/// so that what the public reads serve always keeps the documented schemas:
/// each problem, by item and field.
pub fn check_content_file(content: &ContentFile) -> Result<(), String> {
    let mut problems = Vec::new();
    let mut note = |item: String, checked: Result<(), Error>| {
        if let Err(error) = checked
            && let Some(fields) = error.details().get("fields").and_then(|f| f.as_object())
        {
            for (field, problem) in fields {
                let problem = problem.as_str().unwrap_or_default();
                problems.push(format!("{item}: {field}: {problem}"));
            }
        }
    };
    note("site".to_owned(), check_site_info(&content.site));
    for project in &content.projects {
        note(
            format!("project {:?}", project.slug),
            check_project(project),
        );
    }
    for achievement in &content.achievements {
        note(
            format!("achievement {:?}", achievement.slug),
            check_achievement(achievement),
        );
    }
    for post in &content.posts {
        note(format!("post {:?}", post.slug), check_post(post));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    }
}

/// 422 unless the body's slug is the path's.
fn same_slug(path: &Slug, body: &str) -> Result<(), Error> {
    if path.as_str() == body {
        return Ok(());
    }
    Err(Error::invalid_fields([(
        "slug".to_owned(),
        format!(
            "must be {:?}, the path's: a replacement keeps its slug (create the new one and delete the old)",
            path.as_str()
        ),
    )]))
}

fn taken(what: &str, slug: &str) -> Error {
    Error::conflict(format!("a {what} with the slug {slug:?} exists"))
}

fn missing(what: &str, slug: &Slug) -> Error {
    Error::not_found(format!("no {what} {:?}", slug.as_str()))
}

/// Replaces the site information.
#[utoipa::path(
    put,
    path = "/api/admin/site-info",
    operation_id = "replaceSiteInfo",
    tag = "admin",
    request_body(content((SiteInfo = "application/json"))),
    responses(
        (status = 200, description = "Replaced", body = SiteInfo),
        (status = 400, description = "The body is not JSON of this shape"),
        (status = 401, description = "No valid bearer token"),
        (status = 403, description = "The token lacks content:write"),
        (status = 422, description = "A field breaks its rule; details.fields says which"),
    ),
    security(("oauth" = ["content:write"])),
)]
pub async fn replace_site_info(
    State(state): State<PortfolioState>,
    _caller: Private<ContentWrite>,
    JsonBody(site): JsonBody<SiteInfo>,
) -> Result<axum::Json<SiteInfo>, Error> {
    check_site_info(&site)?;
    db::content::replace_site_info(&state.db, &site).await?;
    Ok(axum::Json(site))
}

/// Adds a project.
#[utoipa::path(
    post,
    path = "/api/admin/projects",
    operation_id = "createProject",
    tag = "admin",
    params(crate::idempotency::IdempotencyKeyHeader),
    request_body(content((Project = "application/json"))),
    responses(
        (status = 201, description = "Added", body = Project),
        (status = 400, description = "The body is not JSON of this shape"),
        (status = 401, description = "No valid bearer token"),
        (status = 403, description = "The token lacks content:write"),
        (status = 409, description = "The slug is taken"),
        (status = 422, description = "A field breaks its rule; details.fields says which"),
    ),
    security(("oauth" = ["content:write"])),
)]
pub async fn create_project(
    State(state): State<PortfolioState>,
    _caller: Private<ContentWrite>,
    JsonBody(project): JsonBody<Project>,
) -> Result<(StatusCode, axum::Json<Project>), Error> {
    check_project(&project)?;
    // In a write transaction: it takes SQLite's writers' turn and moves
    // the read caches' counter, as every write does.
    let mut tx = state.db.begin_write().await?;
    db::content::insert_project(tx.conn(), &project)
        .await
        .on_conflict(|_| taken("project", &project.slug))?;
    tx.commit().await?;
    Ok((StatusCode::CREATED, axum::Json(project)))
}

/// Replaces a project.
#[utoipa::path(
    put,
    path = "/api/admin/projects/{slug}",
    operation_id = "replaceProject",
    tag = "admin",
    params(("slug" = String, Path, pattern = "^[a-z0-9]+(-[a-z0-9]+)*$", max_length = 100,
        description = "The item's slug (lower-case letters, digits and dashes).")),
    request_body(content((Project = "application/json"))),
    responses(
        (status = 200, description = "Replaced", body = Project),
        (status = 400, description = "Not a slug, or the body is not JSON of this shape"),
        (status = 401, description = "No valid bearer token"),
        (status = 403, description = "The token lacks content:write"),
        (status = 404, description = "No such project"),
        (status = 422, description = "A field breaks its rule; details.fields says which"),
    ),
    security(("oauth" = ["content:write"])),
)]
pub async fn replace_project(
    State(state): State<PortfolioState>,
    _caller: Private<ContentWrite>,
    Path(slug): Path<Slug>,
    JsonBody(project): JsonBody<Project>,
) -> Result<axum::Json<Project>, Error> {
    check_project(&project)?;
    same_slug(&slug, &project.slug)?;
    if !db::content::replace_project(&state.db, &slug, &project).await? {
        return Err(missing("project", &slug));
    }
    Ok(axum::Json(project))
}

/// Deletes a project.
#[utoipa::path(
    delete,
    path = "/api/admin/projects/{slug}",
    operation_id = "deleteProject",
    tag = "admin",
    params(("slug" = String, Path, pattern = "^[a-z0-9]+(-[a-z0-9]+)*$", max_length = 100,
        description = "The item's slug (lower-case letters, digits and dashes).")),
    responses(
        (status = 204, description = "Deleted"),
        (status = 400, description = "Not a slug"),
        (status = 401, description = "No valid bearer token"),
        (status = 403, description = "The token lacks content:write"),
        (status = 404, description = "No such project"),
    ),
    security(("oauth" = ["content:write"])),
)]
pub async fn delete_project(
    State(state): State<PortfolioState>,
    _caller: Private<ContentWrite>,
    Path(slug): Path<Slug>,
) -> Result<StatusCode, Error> {
    if !db::content::delete(&state.db, Item::Project, &slug).await? {
        return Err(missing("project", &slug));
    }
    Ok(StatusCode::NO_CONTENT)
}

/// Adds an achievement.
#[utoipa::path(
    post,
    path = "/api/admin/achievements",
    operation_id = "createAchievement",
    tag = "admin",
    params(crate::idempotency::IdempotencyKeyHeader),
    request_body(content((Achievement = "application/json"))),
    responses(
        (status = 201, description = "Added", body = Achievement),
        (status = 400, description = "The body is not JSON of this shape"),
        (status = 401, description = "No valid bearer token"),
        (status = 403, description = "The token lacks content:write"),
        (status = 409, description = "The slug is taken"),
        (status = 422, description = "A field breaks its rule; details.fields says which"),
    ),
    security(("oauth" = ["content:write"])),
)]
pub async fn create_achievement(
    State(state): State<PortfolioState>,
    _caller: Private<ContentWrite>,
    JsonBody(achievement): JsonBody<Achievement>,
) -> Result<(StatusCode, axum::Json<Achievement>), Error> {
    check_achievement(&achievement)?;
    // In a write transaction: it takes SQLite's writers' turn and moves
    // the read caches' counter, as every write does.
    let mut tx = state.db.begin_write().await?;
    db::content::insert_achievement(tx.conn(), &achievement)
        .await
        .on_conflict(|_| taken("achievement", &achievement.slug))?;
    tx.commit().await?;
    Ok((StatusCode::CREATED, axum::Json(achievement)))
}

/// Replaces an achievement.
#[utoipa::path(
    put,
    path = "/api/admin/achievements/{slug}",
    operation_id = "replaceAchievement",
    tag = "admin",
    params(("slug" = String, Path, pattern = "^[a-z0-9]+(-[a-z0-9]+)*$", max_length = 100,
        description = "The item's slug (lower-case letters, digits and dashes).")),
    request_body(content((Achievement = "application/json"))),
    responses(
        (status = 200, description = "Replaced", body = Achievement),
        (status = 400, description = "Not a slug, or the body is not JSON of this shape"),
        (status = 401, description = "No valid bearer token"),
        (status = 403, description = "The token lacks content:write"),
        (status = 404, description = "No such achievement"),
        (status = 422, description = "A field breaks its rule; details.fields says which"),
    ),
    security(("oauth" = ["content:write"])),
)]
pub async fn replace_achievement(
    State(state): State<PortfolioState>,
    _caller: Private<ContentWrite>,
    Path(slug): Path<Slug>,
    JsonBody(achievement): JsonBody<Achievement>,
) -> Result<axum::Json<Achievement>, Error> {
    check_achievement(&achievement)?;
    same_slug(&slug, &achievement.slug)?;
    if !db::content::replace_achievement(&state.db, &slug, &achievement).await? {
        return Err(missing("achievement", &slug));
    }
    Ok(axum::Json(achievement))
}

/// Deletes an achievement.
#[utoipa::path(
    delete,
    path = "/api/admin/achievements/{slug}",
    operation_id = "deleteAchievement",
    tag = "admin",
    params(("slug" = String, Path, pattern = "^[a-z0-9]+(-[a-z0-9]+)*$", max_length = 100,
        description = "The item's slug (lower-case letters, digits and dashes).")),
    responses(
        (status = 204, description = "Deleted"),
        (status = 400, description = "Not a slug"),
        (status = 401, description = "No valid bearer token"),
        (status = 403, description = "The token lacks content:write"),
        (status = 404, description = "No such achievement"),
    ),
    security(("oauth" = ["content:write"])),
)]
pub async fn delete_achievement(
    State(state): State<PortfolioState>,
    _caller: Private<ContentWrite>,
    Path(slug): Path<Slug>,
) -> Result<StatusCode, Error> {
    if !db::content::delete(&state.db, Item::Achievement, &slug).await? {
        return Err(missing("achievement", &slug));
    }
    Ok(StatusCode::NO_CONTENT)
}

/// Publishes a post.
#[utoipa::path(
    post,
    path = "/api/admin/posts",
    operation_id = "createPost",
    tag = "admin",
    params(crate::idempotency::IdempotencyKeyHeader),
    request_body(content((Post = "application/json"))),
    responses(
        (status = 201, description = "Published", body = Post),
        (status = 400, description = "The body is not JSON of this shape"),
        (status = 401, description = "No valid bearer token"),
        (status = 403, description = "The token lacks content:write"),
        (status = 409, description = "The slug is taken"),
        (status = 422, description = "A field breaks its rule; details.fields says which"),
    ),
    security(("oauth" = ["content:write"])),
)]
pub async fn create_post(
    State(state): State<PortfolioState>,
    _caller: Private<ContentWrite>,
    JsonBody(post): JsonBody<Post>,
) -> Result<(StatusCode, axum::Json<Post>), Error> {
    check_post(&post)?;
    // In a write transaction: it takes SQLite's writers' turn and moves
    // the read caches' counter, as every write does.
    let mut tx = state.db.begin_write().await?;
    db::content::insert_post(tx.conn(), &post)
        .await
        .on_conflict(|_| taken("post", &post.slug))?;
    tx.commit().await?;
    Ok((StatusCode::CREATED, axum::Json(post)))
}

/// Replaces a post.
#[utoipa::path(
    put,
    path = "/api/admin/posts/{slug}",
    operation_id = "replacePost",
    tag = "admin",
    params(("slug" = String, Path, pattern = "^[a-z0-9]+(-[a-z0-9]+)*$", max_length = 100,
        description = "The item's slug (lower-case letters, digits and dashes).")),
    request_body(content((Post = "application/json"))),
    responses(
        (status = 200, description = "Replaced", body = Post),
        (status = 400, description = "Not a slug, or the body is not JSON of this shape"),
        (status = 401, description = "No valid bearer token"),
        (status = 403, description = "The token lacks content:write"),
        (status = 404, description = "No such post"),
        (status = 422, description = "A field breaks its rule; details.fields says which"),
    ),
    security(("oauth" = ["content:write"])),
)]
pub async fn replace_post(
    State(state): State<PortfolioState>,
    _caller: Private<ContentWrite>,
    Path(slug): Path<Slug>,
    JsonBody(post): JsonBody<Post>,
) -> Result<axum::Json<Post>, Error> {
    check_post(&post)?;
    same_slug(&slug, &post.slug)?;
    if !db::content::replace_post(&state.db, &slug, &post).await? {
        return Err(missing("post", &slug));
    }
    Ok(axum::Json(post))
}

/// Deletes a post.
#[utoipa::path(
    delete,
    path = "/api/admin/posts/{slug}",
    operation_id = "deletePost",
    tag = "admin",
    params(("slug" = String, Path, pattern = "^[a-z0-9]+(-[a-z0-9]+)*$", max_length = 100,
        description = "The item's slug (lower-case letters, digits and dashes).")),
    responses(
        (status = 204, description = "Deleted"),
        (status = 400, description = "Not a slug"),
        (status = 401, description = "No valid bearer token"),
        (status = 403, description = "The token lacks content:write"),
        (status = 404, description = "No such post"),
    ),
    security(("oauth" = ["content:write"])),
)]
pub async fn delete_post(
    State(state): State<PortfolioState>,
    _caller: Private<ContentWrite>,
    Path(slug): Path<Slug>,
) -> Result<StatusCode, Error> {
    if !db::content::delete(&state.db, Item::Post, &slug).await? {
        return Err(missing("post", &slug));
    }
    Ok(StatusCode::NO_CONTENT)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problems(value: &str) -> usize {
        let mut fields = Fields::default();
        url(&mut fields, "url", Some(value));
        fields.check().map_or_else(|e| e.details().len(), |()| 0)
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
