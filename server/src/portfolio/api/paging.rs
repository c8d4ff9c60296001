//! Paged lists. The admin lists are asked for by page number
//! (`?page=1&per_page=50`) or, whatever the depth at the same cost, after
//! the last item of the page before (`?cursor=...`), and answer
//! `{"items": [...], "page": 1, "per_page": 50, "total": 123,
//! "next_cursor": "..."}`. The short lists (content, keys, clients, failed
//! emails) answer whole unless asked for a slice (`?limit=10&cursor=...`).
//! A page followed by another names it in a `Link` header (`rel="next"`).

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{Uri, header};
use axum::response::{IntoResponse as _, Response};
use bytes::Bytes;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use utoipa::IntoParams;

use crate::http::error::Error;
use crate::http::extract::{Query, keep_empty};
use crate::http::next_page::link_next;
use crate::portfolio::reads::lists::{After, Window};

/// The last page one may ask for (the largest `int32`, as documented).
pub(crate) const MAX_PAGE: u32 = i32::MAX as u32;
/// Items per page unless asked.
pub(crate) const DEFAULT_PER_PAGE: u32 = 50;
/// The most items a page holds.
pub(crate) const MAX_PER_PAGE: u32 = 100;

/// Which page of a list.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct PageQuery {
    /// The page, from 1 (default 1).
    #[param(minimum = 1, maximum = 2147483647)]
    #[serde(default, deserialize_with = "keep_empty")]
    page: Option<u32>,
    /// Items per page, from 1 to 100 (default 50).
    #[param(minimum = 1, maximum = 100)]
    #[serde(default, deserialize_with = "keep_empty")]
    per_page: Option<u32>,
}

/// Where a page of a list ordered by id begins.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct IdCursor {
    /// The `next_cursor` of the page before
    #[param(pattern = r"^[0-9]{0,18}$")]
    cursor: Option<String>,
}

/// Where a page of key requests begins.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct KeyRequestCursor {
    /// The `next_cursor` of the page before
    #[param(pattern = r"^(kr_[0-9a-f]{16})?$")]
    cursor: Option<String>,
}

/// A list's cursor parameter: where its page begins.
pub(crate) trait Cursor: serde::de::DeserializeOwned + Send {
    /// The item the page begins after; none for the first page.
    fn after(&self) -> Result<Option<After>, Error>;
}

const BAD_CURSOR: &str = "cursor is not a cursor: send back the next_cursor of the page before \
                          (or its Link header's rel=\"next\"), or cursor= for the first page";

impl Cursor for IdCursor {
    fn after(&self) -> Result<Option<After>, Error> {
        match self.cursor.as_deref() {
            None | Some("") => Ok(None),
            Some(digits) => digits
                .parse::<u64>()
                .ok()
                .and_then(|id| i64::try_from(id).ok())
                .filter(|_| digits.len() <= 18)
                .map(|id| Some(After::Id(id)))
                .ok_or_else(|| Error::bad_request(BAD_CURSOR)),
        }
    }
}

impl Cursor for KeyRequestCursor {
    fn after(&self) -> Result<Option<After>, Error> {
        match self.cursor.as_deref() {
            None | Some("") => Ok(None),
            Some(id) => id
                .strip_prefix("kr_")
                .filter(|hex| {
                    hex.len() == 16 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
                })
                .map(|_| Some(After::Key(id.to_owned())))
                .ok_or_else(|| Error::bad_request(BAD_CURSOR)),
        }
    }
}

/// A page, checked: by number, or after an item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Paging {
    pub(crate) page: u32,
    pub(crate) per_page: u32,
    pub(crate) after: Option<After>,
}

impl PageQuery {
    /// The page asked for: 400 for a page below 1, a size out of range, or
    /// a page number beside a cursor (two answers to "where").
    pub(crate) fn paging(&self, after: Option<After>) -> Result<Paging, Error> {
        let page = self.page.unwrap_or(1);
        let per_page = self.per_page.unwrap_or(DEFAULT_PER_PAGE);
        if !(1..=MAX_PAGE).contains(&page) {
            return Err(Error::bad_request(format!(
                "page counts from 1 to {MAX_PAGE}"
            )));
        }
        if !(1..=MAX_PER_PAGE).contains(&per_page) {
            return Err(Error::bad_request(format!(
                "per_page must be from 1 to {MAX_PER_PAGE}"
            )));
        }
        if page > 1 && after.is_some() {
            return Err(Error::bad_request(
                "page and cursor both say where the page begins: send one",
            ));
        }
        Ok(Paging {
            page,
            per_page,
            after,
        })
    }
}

impl Paging {
    /// The rows the page holds.
    pub(crate) fn window(&self) -> Window {
        Window {
            offset: match self.after {
                Some(_) => 0,
                None => i64::from(self.page - 1) * i64::from(self.per_page),
            },
            after: self.after.clone(),
            limit: i64::from(self.per_page),
        }
    }
}

/// The page of an admin list a request asks for (`page`, `per_page` and the
/// list's cursor `C`, checked), and the request's own URI, which the next
/// page's `Link` repeats.
#[derive(Debug)]
pub(crate) struct AdminPage<C> {
    pub(crate) paging: Paging,
    pub(crate) uri: Uri,
    cursor: std::marker::PhantomData<C>,
}

impl<S: Send + Sync, C: Cursor> FromRequestParts<S> for AdminPage<C> {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Error> {
        let Query(page) = Query::<PageQuery>::from_request_parts(parts, state).await?;
        let Query(cursor) = Query::<C>::from_request_parts(parts, state).await?;
        Ok(AdminPage {
            paging: page.paging(cursor.after()?)?,
            uri: parts.uri.clone(),
            cursor: std::marker::PhantomData,
        })
    }
}

impl<C> AdminPage<C> {
    /// The rows the page holds.
    pub(crate) fn window(&self) -> Window {
        self.paging.window()
    }
}

/// A page as JSON, with a `Link` to the next one when there is one.
pub(crate) fn page_response<P: Serialize>(page: P, next: Option<&str>, uri: &Uri) -> Response {
    link_next(axum::Json(page).into_response(), uri, next)
}

/// Declares a page of `$item`s: the items, where the page is, how many
/// there are in all, and where the next page begins.
macro_rules! page_of {
    ($(#[$doc:meta])* $name:ident, $item:ty) => {
        $(#[$doc])*
        #[serde_with::skip_serializing_none]
        #[derive(Debug, Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
        pub(crate) struct $name {
            pub(crate) items: Vec<$item>,
            /// The page's number; 1 for a page asked for by cursor.
            #[schema(minimum = 1)]
            pub(crate) page: u32,
            #[schema(minimum = 1, maximum = 100)]
            pub(crate) per_page: u32,
            /// How many items there are in all.
            #[schema(minimum = 0)]
            pub(crate) total: i64,
            /// The `cursor` of the next page; absent on the last page.
            #[schema(nullable = false)]
            pub(crate) next_cursor: Option<String>,
        }

        impl $name {
            /// The page answered, with a `Link` to the next one.
            pub(crate) fn response<C>(
                page: $crate::portfolio::reads::lists::Page<$item>,
                asked: &$crate::portfolio::api::paging::AdminPage<C>,
            ) -> axum::response::Response {
                let (paging, uri) = (&asked.paging, &asked.uri);
                let next_cursor = page.next.map(|after| after.token());
                let link = next_cursor.clone();
                let body = $name {
                    items: page.items,
                    page: paging.page,
                    per_page: paging.per_page,
                    total: page.total,
                    next_cursor,
                };
                $crate::portfolio::api::paging::page_response(body, link.as_deref(), uri)
            }
        }
    };
}

pub(crate) use page_of;

/// The slice of a short list a request asks for, and the request's own URI,
/// which the next slice's `Link` repeats.
#[derive(Debug)]
pub(crate) struct Slice {
    query: SliceQuery,
    uri: Uri,
}

impl<S: Send + Sync> FromRequestParts<S> for Slice {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Error> {
        let Query(query) = Query::<SliceQuery>::from_request_parts(parts, state).await?;
        Ok(Slice {
            query,
            uri: parts.uri.clone(),
        })
    }
}

impl Slice {
    /// The list (a JSON array) whole, or the slice asked for.
    pub(crate) fn answer(&self, list: Bytes) -> Result<Response, Error> {
        self.query.answer(list, &self.uri)
    }

    /// [`Slice::answer`] for a list not yet written as JSON.
    pub(crate) fn answer_items<T: Serialize>(&self, items: &[T]) -> Result<Response, Error> {
        self.query.answer_items(items, &self.uri)
    }
}

/// A slice of a short list: `limit` items after the first `cursor`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct SliceQuery {
    /// The most items to answer, from 1 to 100 (default 50 with a cursor)
    #[param(minimum = 1, maximum = 100)]
    #[serde(default, deserialize_with = "keep_empty")]
    limit: Option<u32>,
    /// Where the slice begins: the cursor the `Link` header named
    #[param(pattern = r"^[0-9]{0,9}$")]
    cursor: Option<String>,
}

impl SliceQuery {
    /// Where the slice begins and how long it is; none for the whole list.
    fn slice(&self) -> Result<Option<(usize, usize)>, Error> {
        if self.limit.is_none() && self.cursor.is_none() {
            return Ok(None);
        }
        let limit = self.limit.unwrap_or(DEFAULT_PER_PAGE);
        if !(1..=MAX_PER_PAGE).contains(&limit) {
            return Err(Error::bad_request(format!(
                "limit must be from 1 to {MAX_PER_PAGE}"
            )));
        }
        let start = match self.cursor.as_deref() {
            None | Some("") => 0,
            Some(digits) => digits
                .parse::<u32>()
                .ok()
                .filter(|_| digits.len() <= 9)
                .ok_or_else(|| {
                    Error::bad_request(
                        "cursor is not a cursor: send back the one in the Link header's \
                         rel=\"next\", or cursor= for the first slice",
                    )
                })?,
        };
        Ok(Some((start as usize, limit as usize)))
    }

    /// The list (a JSON array) whole, or the slice asked for with a `Link`
    /// to the next one.
    fn answer(&self, list: Bytes, uri: &Uri) -> Result<Response, Error> {
        let Some(asked) = self.slice()? else {
            return Ok(json_array(list));
        };
        let items: Vec<&RawValue> = serde_json::from_slice(&list)
            .map_err(|err| Error::internal("cannot read a list back", err))?;
        write_slice(&items, Some(asked), uri)
    }

    /// [`SliceQuery::answer`] for a list not yet written as JSON: only the
    /// slice is written.
    fn answer_items<T: Serialize>(&self, items: &[T], uri: &Uri) -> Result<Response, Error> {
        write_slice(items, self.slice()?, uri)
    }
}

/// `items` whole (`asked` none), or the slice `(start, limit)` of them with a
/// `Link` to the next one, as JSON.
fn write_slice<T: Serialize>(
    items: &[T],
    asked: Option<(usize, usize)>,
    uri: &Uri,
) -> Result<Response, Error> {
    let (slice, next) = match asked {
        None => (items, None),
        Some((start, limit)) => {
            let end = start.saturating_add(limit).min(items.len());
            let more = end < items.len();
            (
                items.get(start..end).unwrap_or_default(),
                more.then(|| end.to_string()),
            )
        }
    };
    let body =
        serde_json::to_vec(slice).map_err(|err| Error::internal("cannot write a list", err))?;
    Ok(link_next(
        json_array(Bytes::from(body)),
        uri,
        next.as_deref(),
    ))
}

fn json_array(body: Bytes) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}
