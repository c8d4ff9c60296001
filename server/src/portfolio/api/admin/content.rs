//! The site's content, managed: site information (replace), projects,
//! achievements and posts (create, replace, delete). The public reads serve
//! from the same tables, so a change shows there at once. The rules and
//! the one implementation of the three kinds' writes are in
//! [`ops::content`](crate::portfolio::ops::content); the handlers of each
//! kind are written by [`item_handlers!`], one operation apiece.

use axum::extract::State;
use axum::http::StatusCode;

use crate::http::error::Error;
use crate::http::extract::{JsonBody, Path};
use crate::http::idempotency::Idempotent;
use crate::portfolio::api::auth::{ContentWrite, Private};
use crate::portfolio::model::{Achievement, Post, Project, SiteInfo, Slug, SlugParam};
use crate::portfolio::ops;
use crate::portfolio::state::PortfolioState;

/// Replaces the site information.
#[utoipa::path(
    put, path = "/api/admin/site-info",
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
/// documentation: the three kinds differ only in names and words. The
/// handlers are `$create`, `$replace` and `$delete` (their names are their
/// operations' ids), at `/api/admin/$plural` and `/api/admin/$plural/{slug}`.
macro_rules! item_handlers {
    ($item:ty, $noun:literal, $plural:literal: $create:ident, $replace:ident, $delete:ident) => {
        #[doc = concat!(" Adds a new ", $noun, ".")]
        #[utoipa::path(
            post, path = concat!("/api/admin/", $plural),
            tag = "admin",
            params(crate::http::idempotency::IdempotencyKeyHeader),
            request_body(content(($item = "application/json"))),
            responses(
                (status = 201, description = "Added", body = $item),
            ),
            security(("oauth" = ["content:write"])),
        )]
        pub(crate) async fn $create(
            State(state): State<PortfolioState>,
            _caller: Private<ContentWrite>,
            Idempotent(JsonBody(item)): Idempotent<JsonBody<$item>>,
        ) -> Result<(StatusCode, axum::Json<$item>), Error> {
            ops::content::create(state.ops(), &item).await?;
            Ok((StatusCode::CREATED, axum::Json(item)))
        }

        #[doc = concat!(" Replaces the ", $noun, " with this slug.")]
        #[utoipa::path(
            put, path = concat!("/api/admin/", $plural, "/{slug}"),
            tag = "admin",
            params(SlugParam),
            request_body(content(($item = "application/json"))),
            responses(
                (status = 200, description = "Replaced", body = $item),
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

        #[doc = concat!(" Deletes the ", $noun, " with this slug.")]
        #[utoipa::path(
            delete, path = concat!("/api/admin/", $plural, "/{slug}"),
            tag = "admin",
            params(SlugParam),
            responses(
                (status = 204, description = "Deleted"),
                (status = 400, description = "Not a slug"),
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

item_handlers!(Project, "project", "projects":
    create_project, replace_project, delete_project);

item_handlers!(Achievement, "achievement", "achievements":
    create_achievement, replace_achievement, delete_achievement);

item_handlers!(Post, "post", "posts":
    create_post, replace_post, delete_post);
