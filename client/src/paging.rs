//! Paged lists as streams of their items.
//!
//! The portfolio's admin lists answer one page at a time (`page`,
//! `per_page`, and the `total` across pages); the pet store's lists
//! (`find_pets_by_status`, `find_pets_by_tags`) a page at a time when asked
//! (`limit`, `cursor`), each page naming the next in its `Link` header. Each
//! of their builders has a `stream()` that asks for page after page as the
//! caller reads and yields the items; an error ends the stream after it is
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

use futures::{Stream, StreamExt as _, TryStreamExt as _, stream};

use crate::Error;

/// One page of a paged list.
pub trait Page {
    type Item;
    /// The items, and whether pages come after this one.
    fn into_items(self) -> (Vec<Self::Item>, bool);
}

/// Whether pages come after page `page` of `per_page` items, of `total`.
pub(crate) fn more_after(page: NonZeroU32, per_page: NonZeroU32, total: i64) -> bool {
    i64::from(page.get()) * i64::from(per_page.get()) < total
}

/// The items of every page, from the first: `fetch(builder, n)` gets page
/// `n`.
pub(crate) fn items<'a, B, P, F, Fut>(
    builder: B,
    fetch: F,
) -> Pin<Box<dyn Stream<Item = Result<P::Item, Error>> + Send + 'a>>
where
    B: Clone + Send + 'a,
    P: Page + Send + 'a,
    P::Item: Send + 'a,
    F: Fn(B, NonZeroU32) -> Fut + Send + 'a,
    Fut: Future<Output = Result<P, Error>> + Send + 'a,
{
    let pages = stream::try_unfold(
        (builder, Some(NonZeroU32::MIN), fetch),
        |(builder, next, fetch)| async move {
            let Some(page) = next else {
                return Ok::<_, Error>(None);
            };
            let (items, more) = fetch(builder.clone(), page).await?.into_items();
            let next = if more && !items.is_empty() {
                page.checked_add(1)
            } else {
                None
            };
            Ok(Some((items, (builder, next, fetch))))
        },
    );
    pages
        .map_ok(|items| stream::iter(items.into_iter().map(Ok)))
        .try_flatten()
        .boxed()
}

/// The items of every page of a list paged by cursor, from the first:
/// `fetch(builder, cursor)` gets the page that begins at `cursor` (empty for
/// the first) and the next page's cursor, if any.
pub(crate) fn cursor_items<'a, B, T, F, Fut>(
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
pub(crate) fn next_cursor(headers: &reqwest::header::HeaderMap) -> Option<String> {
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
