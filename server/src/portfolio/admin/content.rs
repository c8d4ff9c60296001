//! The site's content, managed: site information (replace), projects,
//! achievements and posts (create, replace, delete). The public reads serve
//! from the same tables, so a change shows there at once. The rules and
//! the one implementation of the three kinds' writes are in
//! [`ops::content`](crate::portfolio::ops::content); the handlers of each
//! kind are written by [`item_handlers!`], one operation apiece.

use axum::extract::State;
use axum::http::StatusCode;

use crate::error::Error;
use crate::extract::{JsonBody, Path};
use crate::portfolio::PortfolioState;
use crate::portfolio::auth::{ContentWrite, Private};
use crate::portfolio::model::{Achievement, Post, Project, SiteInfo, Slug, SlugParam};
use crate::portfolio::ops;

/// Replaces the site information.
#[utoipa::path(
    put,
    path = "/api/admin/site-info",
    operation_id = "replaceSiteInfo",
    tag = "admin",
    request_body(content((SiteInfo = "application/json"))),
    responses(
        (status = 200, description = "Replaced", body = SiteInfo),
        (status = 422, description = "A field breaks its rule; details.fields says which"),
    ),
    security(("oauth" = ["content:write"])),
)]
pub(crate) async fn replace_site_info(
    State(state): State<PortfolioState>,
    _caller: Private<ContentWrite>,
    JsonBody(site): JsonBody<SiteInfo>,
) -> Result<axum::Json<SiteInfo>, Error> {
    ops::content::replace_site_info(state.ops(), &site).await?;
    Ok(axum::Json(site))
}

/// The create, replace and delete handlers of one kind of item, with their
/// documentation: the three kinds differ only in names and words.
macro_rules! item_handlers {
    (
        $item:ty, $collection:tt, $one:tt,
        create: $create:ident = $create_id:tt, $create_doc:tt, $created:tt,
        replace: $replace:ident = $replace_id:tt, $replace_doc:tt,
        delete: $delete:ident = $delete_id:tt, $delete_doc:tt,
        missing: $missing:tt $(,)?
    ) => {
        #[doc = $create_doc]
        #[utoipa::path(
            post,
            path = $collection,
            operation_id = $create_id,
            tag = "admin",
            params(crate::idempotency::IdempotencyKeyHeader),
            request_body(content(($item = "application/json"))),
            responses(
                (status = 201, description = $created, body = $item),
                (status = 409, description = "The slug is taken"),
                (status = 422, description = "A field breaks its rule; details.fields says which"),
            ),
            security(("oauth" = ["content:write"])),
        )]
        pub(crate) async fn $create(
            State(state): State<PortfolioState>,
            _caller: Private<ContentWrite>,
            JsonBody(item): JsonBody<$item>,
        ) -> Result<(StatusCode, axum::Json<$item>), Error> {
            ops::content::create(state.ops(), &item).await?;
            Ok((StatusCode::CREATED, axum::Json(item)))
        }

        #[doc = $replace_doc]
        #[utoipa::path(
            put,
            path = $one,
            operation_id = $replace_id,
            tag = "admin",
            params(SlugParam),
            request_body(content(($item = "application/json"))),
            responses(
                (status = 200, description = "Replaced", body = $item),
                (status = 400, description = "Not a slug, or the body is not JSON of this shape"),
                (status = 404, description = $missing),
                (status = 422, description = "A field breaks its rule; details.fields says which"),
            ),
            security(("oauth" = ["content:write"])),
        )]
        pub(crate) async fn $replace(
            State(state): State<PortfolioState>,
            _caller: Private<ContentWrite>,
            Path(slug): Path<Slug>,
            JsonBody(item): JsonBody<$item>,
        ) -> Result<axum::Json<$item>, Error> {
            ops::content::replace(state.ops(), &slug, &item).await?;
            Ok(axum::Json(item))
        }

        #[doc = $delete_doc]
        #[utoipa::path(
            delete,
            path = $one,
            operation_id = $delete_id,
            tag = "admin",
            params(SlugParam),
            responses(
                (status = 204, description = "Deleted"),
                (status = 400, description = "Not a slug"),
                (status = 404, description = $missing),
            ),
            security(("oauth" = ["content:write"])),
        )]
        pub(crate) async fn $delete(
            State(state): State<PortfolioState>,
            _caller: Private<ContentWrite>,
            Path(slug): Path<Slug>,
        ) -> Result<StatusCode, Error> {
            ops::content::delete::<$item>(state.ops(), &slug).await?;
            Ok(StatusCode::NO_CONTENT)
        }
    };
}

item_handlers!(
    Project, "/api/admin/projects", "/api/admin/projects/{slug}",
    create: create_project = "createProject", " Adds a project.", "Added",
    replace: replace_project = "replaceProject", " Replaces a project.",
    delete: delete_project = "deleteProject", " Deletes a project.",
    missing: "No such project",
);

item_handlers!(
    Achievement, "/api/admin/achievements", "/api/admin/achievements/{slug}",
    create: create_achievement = "createAchievement", " Adds an achievement.", "Added",
    replace: replace_achievement = "replaceAchievement", " Replaces an achievement.",
    delete: delete_achievement = "deleteAchievement", " Deletes an achievement.",
    missing: "No such achievement",
);

item_handlers!(
    Post, "/api/admin/posts", "/api/admin/posts/{slug}",
    create: create_post = "createPost", " Publishes a post.", "Published",
    replace: replace_post = "replacePost", " Replaces a post.",
    delete: delete_post = "deletePost", " Deletes a post.",
    missing: "No such post",
);
