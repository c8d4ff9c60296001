//! The portfolio's storage: every SQL string of the service. As in the pet
//! store, functions take a connection when an operation ([`super::ops`])
//! composes them in its transaction (a subscription and its email commit
//! together), or the [`Database`] for a read of their own; they return the
//! domain's types ([`super::model`]) and [`StoreError`].

pub(crate) mod analytics;
pub(crate) mod console;
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
/// are read from, their order, the column a filter compares (if any), and
/// the rows after a cursor's item in that order (`{c}` stands for the
/// cursor).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Listing {
    pub(crate) table: &'static str,
    pub(crate) columns: &'static str,
    pub(crate) order_by: &'static str,
    pub(crate) filtered_by: Option<&'static str>,
    pub(crate) after: &'static str,
}

/// The item a page begins after: an integer id, or a text one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum After {
    Id(i64),
    Key(String),
}

impl After {
    /// As a client sends it back (`cursor`).
    pub(crate) fn token(&self) -> String {
        match self {
            After::Id(id) => id.to_string(),
            After::Key(key) => key.clone(),
        }
    }
}

/// Which rows a page holds: at most `limit`, after an item (read by the
/// order's index, whatever the depth) or after `offset` rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Window {
    pub(crate) after: Option<After>,
    pub(crate) offset: i64,
    pub(crate) limit: i64,
}

/// A page of a listing: its items, how many there are in all, and the item
/// the next page begins after (none on the last page).
#[derive(Debug)]
pub(crate) struct Page<Item> {
    pub(crate) items: Vec<Item>,
    pub(crate) total: i64,
    pub(crate) next: Option<After>,
}

/// One page of a listing (the rows whose filter column is `filter`, or
/// all), and how many rows there are in all: the one implementation of the
/// admin operations' paged lists. `key` names an item as a cursor.
pub(crate) async fn page<Row, Item>(
    db: &Database,
    listing: Listing,
    filter: Option<&str>,
    window: &Window,
    key: fn(&Item) -> After,
) -> Result<Page<Item>, StoreError>
where
    Row: for<'r> sqlx::FromRow<'r, AnyRow> + Send + Unpin,
    Item: TryFrom<Row, Error = StoreError>,
{
    let Listing {
        table,
        columns,
        order_by,
        filtered_by,
        after,
    } = listing;
    // Parameters are numbered as they come: the filter's (when there is
    // one), the cursor's (when given), then the limit and the offset;
    // PostgreSQL refuses a parameter a statement does not use.
    let mut conditions = Vec::new();
    let mut next_parameter = 1;
    if let Some(column) = filtered_by {
        conditions.push(format!("($1 = '' OR {column} = $1)"));
        next_parameter += 1;
    }
    let count_sql = format!("SELECT COUNT(*) FROM {table} {}", where_clause(&conditions));
    if window.after.is_some() {
        conditions.push(after.replace("{c}", &format!("${next_parameter}")));
        next_parameter += 1;
    }
    let rows_sql = format!(
        "SELECT {columns} FROM {table} {} ORDER BY {order_by} LIMIT ${next_parameter} OFFSET ${}",
        where_clause(&conditions),
        next_parameter + 1
    );
    let filter = filter.unwrap_or_default();
    let mut rows = sqlx::query_as::<_, Row>(&rows_sql);
    let mut count = sqlx::query_scalar::<_, i64>(&count_sql);
    if filtered_by.is_some() {
        rows = rows.bind(filter);
        count = count.bind(filter);
    }
    rows = match &window.after {
        Some(After::Id(id)) => rows.bind(*id),
        Some(After::Key(key)) => rows.bind(key.as_str()),
        None => rows,
    };
    // One row past the page says whether another page follows.
    let rows = rows
        .bind(window.limit.saturating_add(1))
        .bind(window.offset)
        .fetch_all(db.pool())
        .await?;
    let total = count.fetch_one(db.pool()).await?;
    let mut items = rows
        .into_iter()
        .map(Item::try_from)
        .collect::<Result<Vec<_>, _>>()?;
    let more = items.len() as i64 > window.limit;
    items.truncate(usize::try_from(window.limit).unwrap_or(0));
    let next = if more { items.last().map(key) } else { None };
    Ok(Page { items, total, next })
}

fn where_clause(conditions: &[String]) -> String {
    if conditions.is_empty() {
        String::new()
    } else {
        format!("WHERE {}", conditions.join(" AND "))
    }
}
