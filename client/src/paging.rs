//! Paged lists as streams of their items.
//!
//! The portfolio's admin lists answer one page at a time (`page`,
//! `per_page`, and the `total` across pages). Each of their builders has a
//! `stream()` that asks for page after page as the caller reads and yields
//! the items; an error ends the stream after it is yielded.
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
