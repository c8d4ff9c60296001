//! Newsletter subscribers, managed: a paged list, and erasure of an
//! address (the subscriber and every email to it, sent or not).

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;
use utoipa::IntoParams;

use crate::http::error::Error;
use crate::http::extract::{Path, Query, keep_empty};
use crate::portfolio::api::auth::{Private, SubscribersRead, SubscribersWrite};
use crate::portfolio::api::paging::{AdminPage, IdCursor, PageQuery, page_of};
use crate::portfolio::model::{SubscriberEntry, SubscriberStatus};
use crate::portfolio::ops;
use crate::portfolio::reads::lists;
use crate::portfolio::state::PortfolioState;

page_of!(
    /// A page of subscribers, in the order they came.
    SubscriberPage,
    SubscriberEntry
);

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct SubscriberFilter {
    /// Only the subscribers with this status.
    #[serde(default, deserialize_with = "keep_empty")]
    status: Option<SubscriberStatus>,
}

/// Lists the subscribers, a page at a time.
#[utoipa::path(
    get, path = "/api/admin/subscribers",
    tag = "admin",
    params(SubscriberFilter, PageQuery, IdCursor),
    responses(
        (status = 200, description = "A page of subscribers", body = SubscriberPage,
            headers(("Link" = String, description = "Where the next page is"))),
        (status = 400, description = "A malformed status or page"),
    ),
    security(("oauth" = ["subscribers:read"])),
)]
pub(crate) async fn list_subscribers(
    State(state): State<PortfolioState>,
    _caller: Private<SubscribersRead>,
    Query(filter): Query<SubscriberFilter>,
    asked: AdminPage<IdCursor>,
) -> Result<Response, Error> {
    let page = lists::subscribers(&state.db, filter.status, &asked.window()).await?;
    Ok(SubscriberPage::response(page, &asked))
}

/// Erases a subscriber: the address and every email to it are deleted.
#[utoipa::path(
    delete, path = "/api/admin/subscribers/{id}",
    tag = "admin",
    params(("id" = i64, Path, minimum = 1, description = "The subscriber's id.")),
    responses(
        (status = 204, description = "Erased"),
        (status = 400, description = "Not an id"),
    ),
    security(("oauth" = ["subscribers:write"])),
)]
pub(crate) async fn erase_subscriber(
    State(state): State<PortfolioState>,
    _caller: Private<SubscribersWrite>,
    Path(id): Path<i64>,
) -> Result<StatusCode, Error> {
    ops::newsletter::erase_subscriber(state.ops(), id).await?;
    Ok(StatusCode::NO_CONTENT)
}
