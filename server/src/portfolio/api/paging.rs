//! Paged lists (the admin operations'): `?page=1&per_page=50`, answered
//! `{"items": [...], "page": 1, "per_page": 50, "total": 123}`.

use serde::Deserialize;
use utoipa::IntoParams;

use crate::http::error::Error;
use crate::http::extract::keep_empty;

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

/// A page, checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Paging {
    pub(crate) page: u32,
    pub(crate) per_page: u32,
}

impl PageQuery {
    /// The page asked for: 400 for a page below 1 or a size out of range.
    pub(crate) fn paging(&self) -> Result<Paging, Error> {
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
        Ok(Paging { page, per_page })
    }
}

impl Paging {
    /// How many items come before the page.
    pub(crate) fn offset(self) -> i64 {
        i64::from(self.page - 1) * i64::from(self.per_page)
    }

    pub(crate) fn limit(self) -> i64 {
        i64::from(self.per_page)
    }
}

/// Declares a page of `$item`s: the items, where the page is, and how many
/// there are in all.
macro_rules! page_of {
    ($(#[$doc:meta])* $name:ident, $item:ty) => {
        $(#[$doc])*
        #[derive(Debug, Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
        pub(crate) struct $name {
            pub(crate) items: Vec<$item>,
            #[schema(minimum = 1)]
            pub(crate) page: u32,
            #[schema(minimum = 1, maximum = 100)]
            pub(crate) per_page: u32,
            /// How many items there are in all.
            #[schema(minimum = 0)]
            pub(crate) total: i64,
        }

        impl $name {
            pub(crate) fn new(items: Vec<$item>, paging: $crate::portfolio::api::paging::Paging, total: i64) -> Self {
                $name {
                    items,
                    page: paging.page,
                    per_page: paging.per_page,
                    total,
                }
            }
        }
    };
}

pub(crate) use page_of;
