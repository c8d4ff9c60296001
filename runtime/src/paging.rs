//! Paged lists as streams of their items.
//!
//! Every list of both services can be read a page at a time: the pet
//! store's finders (`find_pets_by_status`, `find_pets_by_tags`, `limit` and
//! `cursor`), the portfolio's admin lists (`per_page`, and `page` or
//! `cursor`) and its short lists (`limit` and `cursor`). Each page followed by
//! another names it in a `Link` header (`rel="next"`); the admin pages also
//! in `next_cursor`. Each of their builders has a `stream()` that asks for
//! page after page as the caller reads, each after the cursor the page before
//! named (so an item added or removed meanwhile neither repeats nor skips
//! another), and yields the items; an error ends the stream after it is
//! yielded.
//!
//! ```no_run
//! # async fn demo(client: &petstore_portfolio_client::portfolio::Client) -> Result<(), petstore_portfolio_client::Error> {
//! use futures::TryStreamExt as _;
//!
//! let mut subscribers = client.list_subscribers().per_page(100_u32).stream();
//! while let Some(subscriber) = subscribers.try_next().await? {
//!     println!("{}", subscriber.email);
//! }
//! # Ok(()) }
//! ```

use std::future::Future;
use std::num::NonZeroU32;
use std::pin::Pin;

pub use futures::Stream;
use futures::{StreamExt as _, TryStreamExt as _, stream};

use crate::Error;

/// One page of a paged list.
pub trait Page {
    type Item;
    /// The items, and whether pages come after this one.
    fn into_items(self) -> (Vec<Self::Item>, bool);
}

/// Whether pages come after page `page` of `per_page` items, of `total`.
#[doc(hidden)]
pub fn more_after(page: NonZeroU32, per_page: NonZeroU32, total: i64) -> bool {
    i64::from(page.get()) * i64::from(per_page.get()) < total
}

/// The items of every page of a list paged by cursor, from the first:
/// `fetch(builder, cursor)` gets the page that begins at `cursor` (empty for
/// the first) and the next page's cursor, if any.
#[doc(hidden)]
pub fn cursor_items<'a, B, T, F, Fut>(
    builder: B,
    fetch: F,
) -> Pin<Box<dyn Stream<Item = Result<T, Error>> + Send + 'a>>
where
    B: Clone + Send + 'a,
    T: Send + 'a,
    F: Fn(B, String) -> Fut + Send + 'a,
    Fut: Future<Output = Result<(Vec<T>, Option<String>), Error>> + Send + 'a,
{
    let pages = stream::try_unfold(
        (builder, Some(String::new()), fetch),
        |(builder, cursor, fetch)| async move {
            let Some(cursor) = cursor else {
                return Ok::<_, Error>(None);
            };
            let (items, next) = fetch(builder.clone(), cursor).await?;
            let next = next.filter(|_| !items.is_empty());
            Ok(Some((items, (builder, next, fetch))))
        },
    );
    pages
        .map_ok(|items| stream::iter(items.into_iter().map(Ok)))
        .try_flatten()
        .boxed()
}

/// The `cursor` of the page a `Link` header names as `rel="next"`, if any.
#[doc(hidden)]
pub fn next_cursor(headers: &reqwest::header::HeaderMap) -> Option<String> {
    headers
        .get_all(reqwest::header::LINK)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .find(|link| {
            link.split(';')
                .skip(1)
                .any(|param| param.trim().eq_ignore_ascii_case("rel=\"next\""))
        })
        .and_then(|link| {
            let target = link.split(';').next()?.trim();
            let target = target.strip_prefix('<')?.strip_suffix('>')?;
            let (_, query) = target.split_once('?')?;
            query
                .split('&')
                .find_map(|pair| pair.strip_prefix("cursor="))
                .map(str::to_owned)
        })
}

/// `stream()` for a list builder whose pages name the next in a `Link`
/// header: `$items` takes the answer's body (`|$body|`) to its items.
#[macro_export]
macro_rules! stream_by_link {
    ($builder:ident, $item:ty, |$body:ident| $items:expr, $what:expr) => {
        impl<'a> builder::$builder<'a> {
            #[doc = concat!("Every ", $what, ", a page at a time as the stream is read, as")]
            /// one stream of items: each page asked for with the cursor the
            /// one before named. An error (a page refused, the server gone)
            /// is the stream's last item. See [`crate::paging`].
            pub fn stream(
                self,
            ) -> std::pin::Pin<
                Box<dyn $crate::paging::Stream<Item = Result<$item, $crate::Error>> + Send + 'a>,
            > {
                $crate::paging::cursor_items(self, |builder: Self, cursor: String| async move {
                    let page = builder.cursor(cursor).send().await?;
                    let next = $crate::paging::next_cursor(page.headers());
                    let $body = page.into_inner();
                    Ok(($items, next))
                })
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use reqwest::header::{HeaderMap, HeaderValue, LINK};

    use super::next_cursor;

    fn link(value: &'static str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(LINK, HeaderValue::from_static(value));
        headers
    }

    #[test]
    fn the_next_pages_cursor_is_read_from_its_link_and_no_other() {
        assert_eq!(
            next_cursor(&link(
                "</v2/pet/findByStatus?status=sold&limit=2&cursor=2>; rel=\"next\""
            ))
            .as_deref(),
            Some("2")
        );
        assert_eq!(
            next_cursor(&link(
                "</a?cursor=p>; rel=\"prev\", </a?cursor=n>; rel=\"next\""
            ))
            .as_deref(),
            Some("n")
        );
        assert_eq!(next_cursor(&link("</a?cursor=p>; rel=\"prev\"")), None);
        assert_eq!(next_cursor(&HeaderMap::new()), None);
    }
}
