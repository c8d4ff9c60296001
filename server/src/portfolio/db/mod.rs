//! The portfolio's storage: every SQL string of the service. As in the pet
//! store, functions take a connection when an operation ([`super::ops`])
//! composes them in its transaction (a subscription and its email commit
//! together), or the [`Database`] for a read of their own; they return the
//! domain's types ([`super::model`]) and [`StoreError`].

pub(crate) mod analytics;
pub(crate) mod contact;
pub(crate) mod content;
pub(crate) mod key_requests;
pub(crate) mod notifications;
pub(crate) mod publications;
pub(crate) mod subscribers;

use sqlx::any::AnyRow;

use crate::storage::{Database, StoreError, Topic, TopicKind};

/// What the portfolio's cached answers depend on: its content (site
/// information, projects, achievements, posts), which every write of it
/// names.
pub(crate) const CONTENT: Topic = Topic::whole(TopicKind::new(b't'));

/// What an admin listing reads a page of: a table, the columns its rows
/// are read from, their order, and the column a filter compares (if any).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Listing {
    pub(crate) table: &'static str,
    pub(crate) columns: &'static str,
    pub(crate) order_by: &'static str,
    pub(crate) filtered_by: Option<&'static str>,
}

/// One page of a listing (the rows whose filter column is `filter`, or
/// all), and how many rows there are in all: the one implementation of the
/// admin operations' paged lists.
pub(crate) async fn page<Row, Item>(
    db: &Database,
    listing: Listing,
    filter: Option<&str>,
    offset: i64,
    limit: i64,
) -> Result<(Vec<Item>, i64), StoreError>
where
    Row: for<'r> sqlx::FromRow<'r, AnyRow> + Send + Unpin,
    Item: TryFrom<Row, Error = StoreError>,
{
    let Listing {
        table,
        columns,
        order_by,
        filtered_by,
    } = listing;
    // The filter's parameter comes first when there is one; PostgreSQL
    // refuses a parameter a statement does not use.
    let (condition, first) = match filtered_by {
        Some(column) => (format!("WHERE ($1 = '' OR {column} = $1)"), 2),
        None => (String::new(), 1),
    };
    let rows_sql = format!(
        "SELECT {columns} FROM {table} {condition} ORDER BY {order_by} LIMIT ${first} OFFSET ${}",
        first + 1
    );
    let count_sql = format!("SELECT COUNT(*) FROM {table} {condition}");
    let filter = filter.unwrap_or_default();
    let mut rows = sqlx::query_as::<_, Row>(&rows_sql);
    let mut count = sqlx::query_scalar::<_, i64>(&count_sql);
    if filtered_by.is_some() {
        rows = rows.bind(filter);
        count = count.bind(filter);
    }
    let rows = rows.bind(limit).bind(offset).fetch_all(db.pool()).await?;
    let total = count.fetch_one(db.pool()).await?;
    let items = rows
        .into_iter()
        .map(Item::try_from)
        .collect::<Result<_, _>>()?;
    Ok((items, total))
}
