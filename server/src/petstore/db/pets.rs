//! Pets. A pet is one row (photo URLs and tags as JSON columns: a pet is
//! always read whole) plus its tag names in `pet_tags`, the index
//! `findPetsByTags` searches.

use std::collections::{BTreeMap, BTreeSet};

use sqlx::{AnyConnection, FromRow};

use super::topics;
use crate::petstore::model::{Category, Pet, PetStatus};
use crate::storage::{
    Database, StoreError, WriteTx, inserted_ids, placeholders, placeholders_from, positional,
    row_placeholders,
};

#[derive(Debug, FromRow)]
struct PetRow {
    id: i64,
    name: String,
    category_id: Option<i64>,
    category_name: Option<String>,
    photo_urls: String,
    tags: String,
    status: String,
}

const PET_COLUMNS: &str = "id, name, category_id, category_name, photo_urls, tags, status";

/// Binds a pet's name and [`PetColumns`] (after its id, in the order of
/// [`PET_COLUMNS`]) to a query; a macro because sqlx's `Query` and
/// `QueryScalar` share no trait for `bind`.
macro_rules! bind_pet {
    ($query:expr, $name:expr, $columns:expr) => {{
        let columns: PetColumns = $columns;
        $query
            .bind($name)
            .bind(columns.category_id)
            .bind(columns.category_name)
            .bind(columns.photo_urls)
            .bind(columns.tags)
            .bind(columns.status)
    }};
}

impl TryFrom<PetRow> for Pet {
    type Error = StoreError;

    fn try_from(row: PetRow) -> Result<Self, StoreError> {
        let corrupt = |what: &str| StoreError::corrupt(format!("pet {}: {what}", row.id));
        let category = match (row.category_id, row.category_name) {
            (None, None) => None,
            (id, name) => Some(Category { id, name }),
        };
        Ok(Pet {
            id: Some(row.id),
            name: row.name,
            category,
            photo_urls: serde_json::from_str(&row.photo_urls).map_err(|_| corrupt("photo_urls"))?,
            tags: serde_json::from_str(&row.tags).map_err(|_| corrupt("tags"))?,
            status: Some(parse_status(&row.status)?),
        })
    }
}

fn parse_status(text: &str) -> Result<PetStatus, StoreError> {
    PetStatus::parse(text).ok_or_else(|| StoreError::corrupt(format!("pet status {text:?}")))
}

/// One pet.
pub(crate) async fn get(conn: &mut AnyConnection, id: i64) -> Result<Option<Pet>, StoreError> {
    let row: Option<PetRow> =
        sqlx::query_as(&format!("SELECT {PET_COLUMNS} FROM pets WHERE id = $1"))
            .bind(id)
            .fetch_optional(conn)
            .await?;
    row.map(Pet::try_from).transpose()
}

/// The status of one pet, if it exists.
pub(crate) async fn status(
    conn: &mut AnyConnection,
    id: i64,
) -> Result<Option<PetStatus>, StoreError> {
    let status: Option<String> = sqlx::query_scalar("SELECT status FROM pets WHERE id = $1")
        .bind(id)
        .fetch_optional(conn)
        .await?;
    status.as_deref().map(parse_status).transpose()
}

/// Sets a pet's status (nothing happens if the pet is gone).
pub(crate) async fn set_status(
    conn: &mut AnyConnection,
    id: i64,
    status: PetStatus,
) -> Result<(), StoreError> {
    sqlx::query("UPDATE pets SET status = $1 WHERE id = $2")
        .bind(status.as_str())
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}

/// Sets a pet's status to `to` if it is `available`, in one statement, so
/// that of two orders racing for a pet only one wins. True if it was.
pub(crate) async fn claim_available(
    conn: &mut AnyConnection,
    id: i64,
    to: PetStatus,
) -> Result<bool, StoreError> {
    let claimed = sqlx::query("UPDATE pets SET status = $1 WHERE id = $2 AND status = $3")
        .bind(to.as_str())
        .bind(id)
        .bind(PetStatus::Available.as_str())
        .execute(conn)
        .await?;
    Ok(claimed.rows_affected() == 1)
}

/// [`claim_available`] for several pets at once, all to `to`, in one
/// statement; the ids of the pets claimed.
pub(crate) async fn claim_available_many(
    conn: &mut AnyConnection,
    ids: &[i64],
    to: PetStatus,
) -> Result<BTreeSet<i64>, StoreError> {
    match ids {
        [] => return Ok(BTreeSet::new()),
        [id] => {
            let claimed = claim_available(conn, *id, to).await?;
            return Ok(claimed.then_some(*id).into_iter().collect());
        }
        _ => {}
    }
    let sql = claim_available_many_sql(ids.len());
    let sql = positional(conn, &sql);
    let mut query = sqlx::query_scalar(&sql)
        .bind(to.as_str())
        .bind(PetStatus::Available.as_str());
    for id in ids {
        query = query.bind(*id);
    }
    // Not kept prepared: a statement for every number of pets.
    let claimed: Vec<i64> = query.persistent(false).fetch_all(conn).await?;
    Ok(claimed.into_iter().collect())
}

/// [`claim_available_many`]'s statement for `count` pets: `$1` the status
/// to set, `$2` `available`, then the ids.
fn claim_available_many_sql(count: usize) -> String {
    // `status || ''`, not `status`: the pets are found by their ids alone.
    // Before PostgreSQL has statistics for `pets` (a table filled since
    // autovacuum last analyzed it), it takes any status to match 0.5 % of
    // the rows, and intersects the ids with every available pet's entry in
    // `pets_status`: a claim then grows with the number of available pets
    // instead of with the ids it names. The expression hides the column
    // from that index; the rows matched are the same.
    format!(
        "UPDATE pets SET status = $1 WHERE status || '' = $2 AND id IN ({}) RETURNING id",
        placeholders_from(3, count)
    )
}

/// The statuses of the pets among `ids` that exist.
pub(crate) async fn statuses(
    conn: &mut AnyConnection,
    ids: &[i64],
) -> Result<BTreeMap<i64, PetStatus>, StoreError> {
    let rows: Vec<(i64, String)> = rows_by_id(conn, "id, status", ids).await?;
    rows.into_iter()
        .map(|(id, status)| Ok((id, parse_status(&status)?)))
        .collect()
}

/// The pets among `ids` that are there: the status each has and its tags
/// as stored (the `tags` column), for replacements to say which pets'
/// tags change.
pub(crate) async fn statuses_and_tags(
    conn: &mut AnyConnection,
    ids: &[i64],
) -> Result<BTreeMap<i64, (PetStatus, String)>, StoreError> {
    let rows: Vec<(i64, String, String)> = rows_by_id(conn, "id, status, tags", ids).await?;
    rows.into_iter()
        .map(|(id, status, tags)| Ok((id, (parse_status(&status)?, tags))))
        .collect()
}

/// The pets among `ids` that exist, in one statement (in no order).
pub(crate) async fn get_many(
    conn: &mut AnyConnection,
    ids: &[i64],
) -> Result<Vec<Pet>, StoreError> {
    let rows: Vec<PetRow> = rows_by_id(conn, PET_COLUMNS, ids).await?;
    rows.into_iter().map(Pet::try_from).collect()
}

/// The ids of the pets with any of these statuses, in order; at most
/// `limit` of them. On SQLite the index on status, which holds each row's
/// id, answers it alone.
///
/// They come as one row, a JSON array: sqlx's SQLite driver hands each row
/// over from its connection's thread on its own, and in a mixed load a
/// list's hundred ids, one row each, cost about as many wake-ups of one
/// thread by another.
pub(crate) async fn ids_with_statuses(
    conn: &mut AnyConnection,
    statuses: &BTreeSet<PetStatus>,
    limit: usize,
) -> Result<Vec<i64>, StoreError> {
    // Both aggregate in the order asked for (SQLite since 3.44); `::text`
    // because sqlx's `Any` driver reads no `json` column.
    let array = if crate::storage::on_sqlite(conn) {
        "json_group_array(id ORDER BY id)"
    } else {
        "COALESCE(json_agg(id ORDER BY id)::text, '[]')"
    };
    let sql = format!(
        "SELECT {array} FROM (SELECT id FROM pets WHERE status IN ({}) \
         ORDER BY id LIMIT {limit}) AS listed",
        placeholders(statuses.len())
    );
    let mut query = sqlx::query_scalar::<_, String>(&sql);
    for status in statuses {
        query = query.bind(status.as_str());
    }
    let ids = query.fetch_one(conn).await?;
    serde_json::from_str(&ids).map_err(|_| StoreError::corrupt(format!("a list of ids: {ids}")))
}

/// `columns` of the pets among `ids` that exist, in one statement.
async fn rows_by_id<T>(
    conn: &mut AnyConnection,
    columns: &str,
    ids: &[i64],
) -> Result<Vec<T>, StoreError>
where
    T: for<'r> FromRow<'r, sqlx::any::AnyRow> + Send + Unpin,
{
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let sql = format!(
        "SELECT {columns} FROM pets WHERE id IN ({})",
        placeholders_from(1, ids.len())
    );
    let sql = positional(conn, &sql);
    let mut query = sqlx::query_as::<_, T>(&sql);
    for id in ids {
        query = query.bind(*id);
    }
    // Not kept prepared: a statement for every number of pets.
    Ok(query.persistent(false).fetch_all(conn).await?)
}

/// The `tags` column a pet with these tags is stored with.
pub(crate) fn stored_tags(pet: &Pet) -> Result<String, StoreError> {
    serde_json::to_string(&pet.tags).map_err(StoreError::corrupt)
}

/// Which pets a list holds (`findPetsByStatus`, `findPetsByTags`), read a
/// page at a time in id order ([`PetSelect::page`]): each page is found
/// through an index from the last id of the one before (keyset paging), so
/// it costs the same however deep into the list it is.
#[derive(Debug, Clone)]
pub(crate) struct PetSelect {
    by: SelectBy,
    /// The statuses or the tags' names, bound as `$1` onwards.
    values: Vec<String>,
}

/// What a list of pets is chosen by.
#[derive(Debug, Clone, Copy)]
enum SelectBy {
    Status,
    Tag,
}

impl PetSelect {
    /// The pets with any of these statuses, by id.
    pub(crate) fn with_statuses(statuses: &BTreeSet<PetStatus>) -> Self {
        PetSelect {
            by: SelectBy::Status,
            values: statuses.iter().map(|s| s.as_str().to_owned()).collect(),
        }
    }

    /// The pets that have any of these tags, each once, by id.
    pub(crate) fn with_tags(names: &BTreeSet<&str>) -> Self {
        PetSelect {
            by: SelectBy::Tag,
            values: names.iter().map(|&name| name.to_owned()).collect(),
        }
    }

    /// At most `limit` of the pets, those with ids above `after`, by id.
    ///
    /// The index on status holds each row's id (SQLite's by its nature,
    /// PostgreSQL's as its second column), and the tags' index each name's
    /// pet ids in order, so a page of one status or one tag is read from
    /// where the last one ended, not found by reading what came before.
    pub(crate) async fn page(
        &self,
        conn: &mut AnyConnection,
        after: i64,
        limit: usize,
    ) -> Result<Vec<Pet>, StoreError> {
        let values = placeholders(self.values.len());
        let after_at = self.values.len() + 1;
        let sql = match self.by {
            SelectBy::Status => format!(
                "SELECT {PET_COLUMNS} FROM pets WHERE status IN ({values}) \
                 AND id > ${after_at} ORDER BY id LIMIT {limit}"
            ),
            SelectBy::Tag => format!(
                "SELECT {PET_COLUMNS} FROM pets WHERE id IN \
                 (SELECT DISTINCT pet_id FROM pet_tags WHERE name IN ({values}) \
                 AND pet_id > ${after_at} ORDER BY pet_id LIMIT {limit}) ORDER BY id"
            ),
        };
        let sql = positional(conn, &sql);
        let mut query = sqlx::query_as::<_, PetRow>(&sql);
        for value in &self.values {
            query = query.bind(value.as_str());
        }
        let rows = query.bind(after).fetch_all(conn).await?;
        rows.into_iter().map(Pet::try_from).collect()
    }

    /// How many pets the list holds, counted up to `most`: a count that
    /// stops there costs no more than reading that many ids.
    pub(crate) async fn count_up_to(
        &self,
        conn: &mut AnyConnection,
        most: u64,
    ) -> Result<u64, StoreError> {
        let values = placeholders(self.values.len());
        let ids = match self.by {
            SelectBy::Status => format!("SELECT id FROM pets WHERE status IN ({values})"),
            SelectBy::Tag => {
                format!("SELECT DISTINCT pet_id FROM pet_tags WHERE name IN ({values})")
            }
        };
        let sql = format!("SELECT COUNT(*) FROM ({ids} LIMIT {most}) AS listed");
        let sql = positional(conn, &sql);
        let mut query = sqlx::query_scalar::<_, i64>(&sql);
        for value in &self.values {
            query = query.bind(value.as_str());
        }
        let count = query.fetch_one(conn).await?;
        Ok(u64::try_from(count).unwrap_or(0))
    }
}

/// How many pets have each status.
pub(crate) async fn count_by_status(db: &Database) -> Result<Vec<(PetStatus, i64)>, StoreError> {
    // The counts the pets' triggers keep (a few rows per status): the
    // inventory costs the same however many pets there are.
    let counts: Vec<(String, i64)> =
        sqlx::query_as("SELECT status, CAST(SUM(pets) AS BIGINT) FROM pet_counts GROUP BY status")
            .fetch_all(db.pool())
            .await?;
    counts
        .into_iter()
        .map(|(status, count)| Ok((parse_status(&status)?, count)))
        .collect()
}

/// Writes the fields of `pet` into the row `id` (which must exist) and
/// re-indexes its tags.
pub(crate) async fn write(conn: &mut AnyConnection, id: i64, pet: &Pet) -> Result<(), StoreError> {
    write_keeping_tags(conn, id, pet).await?;
    reindex_tags(conn, &[(id, pet)]).await
}

/// [`write`] for a pet whose tags are the ones it had: its row only (the
/// tag index stays as it is, two statements fewer).
pub(crate) async fn write_keeping_tags(
    conn: &mut AnyConnection,
    id: i64,
    pet: &Pet,
) -> Result<(), StoreError> {
    let columns = PetColumns::of(pet)?;
    let query = sqlx::query(
        "UPDATE pets SET name = $1, category_id = $2, category_name = $3, photo_urls = $4, \
         tags = $5, status = $6 WHERE id = $7",
    );
    bind_pet!(query, &pet.name, columns)
        .bind(id)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// [`write`] for several pets at once (each id once, each row there): one
/// statement writes the rows; then the tags of those in `retagged` (whose
/// tags changed) are re-indexed: one statement drops their names, one
/// indexes the new ones (per thousand names), whatever their number.
pub(crate) async fn write_many(
    conn: &mut AnyConnection,
    pets: &[(i64, &Pet)],
    retagged: &[(i64, &Pet)],
) -> Result<(), StoreError> {
    match pets {
        [] => {}
        [(id, pet)] => write_keeping_tags(conn, *id, pet).await?,
        _ => {
            // The values' columns are column1, column2, ... on both databases.
            let sql = format!(
                "UPDATE pets SET name = v.column2, category_id = v.column3, \
                 category_name = v.column4, photo_urls = v.column5, tags = v.column6, \
                 status = v.column7 FROM (VALUES {}) AS v WHERE pets.id = v.column1",
                row_placeholders(pets.len(), 7)
            );
            let sql = positional(conn, &sql);
            let mut query = sqlx::query(&sql);
            for (id, pet) in pets {
                let columns = PetColumns::of(pet)?;
                query = bind_pet!(query.bind(*id), pet.name.as_str(), columns);
            }
            // Not kept prepared: a statement for every number of pets.
            query.persistent(false).execute(&mut *conn).await?;
        }
    }
    reindex_tags(conn, retagged).await
}

/// Drops the tag names indexed for `pets` and indexes the ones they have.
async fn reindex_tags(conn: &mut AnyConnection, pets: &[(i64, &Pet)]) -> Result<(), StoreError> {
    if pets.is_empty() {
        return Ok(());
    }
    let sql = format!(
        "DELETE FROM pet_tags WHERE pet_id IN ({})",
        placeholders(pets.len())
    );
    let sql = positional(conn, &sql);
    let mut query = sqlx::query(&sql);
    for (id, _) in pets {
        query = query.bind(*id);
    }
    // Kept prepared for one pet (the usual case) only: a statement for
    // every number of pets would push the usual ones out of the cache.
    query
        .persistent(pets.len() == 1)
        .execute(&mut *conn)
        .await?;
    index_tags_of(conn, pets).await
}

/// Stores a new pet with the id it asks for (which must be free) or one the
/// server chooses; returns the id. A taken id is [`StoreError::Conflict`].
///
/// One statement (and one more for the tags, if it has any): on SQLite a
/// write holds the writers' turn for each statement's round trip, so their
/// number bounds the rate of writes. The server's choice is the sequence's
/// next value, taken in the same statement (a trigger moves the sequence
/// on, migration `20261121000008`); if a client took that id itself, the
/// sequence steps over it and the insert tries again.
pub(crate) async fn insert(
    conn: &mut AnyConnection,
    requested: Option<i64>,
    pet: &Pet,
) -> Result<i64, StoreError> {
    let columns = PetColumns::of(pet)?;
    let id = loop {
        let query = sqlx::query_scalar(
            "INSERT INTO pets (id, name, category_id, category_name, photo_urls, tags, status) \
             VALUES (COALESCE($1, (SELECT last_id + 1 FROM id_sequences WHERE name = 'pets')), \
             $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO NOTHING RETURNING id",
        );
        let inserted: Option<i64> = bind_pet!(query.bind(requested), &pet.name, columns.clone())
            .fetch_optional(&mut *conn)
            .await?;
        match (inserted, requested) {
            (Some(id), _) => break id,
            (None, Some(_)) => {
                return Err(StoreError::Conflict {
                    constraint: Some("pets.id".to_owned()),
                });
            }
            // The next id is taken: by a client that chose it, or (on
            // PostgreSQL) by another server's insert that won the race. The
            // sequence steps over it if it is still there; after a race it
            // has moved on already, and stepping again would leave a gap.
            (None, None) => {
                sqlx::query(
                    "UPDATE id_sequences SET last_id = last_id + 1 WHERE name = 'pets' \
                     AND EXISTS (SELECT 1 FROM pets WHERE pets.id = id_sequences.last_id + 1)",
                )
                .execute(&mut *conn)
                .await?;
            }
        }
    };
    index_tags(conn, id, pet).await?;
    Ok(id)
}

/// Stores new pets (none asks for an id) in one statement, in the order
/// given, and returns their ids; what [`super::new_pets`] does with the
/// pets that arrive together. A pet whose next id a client has taken
/// meanwhile goes in on its own ([`insert`], which steps over taken ids).
pub(super) async fn insert_new(
    conn: &mut AnyConnection,
    pets: &[&Pet],
) -> Result<Vec<i64>, StoreError> {
    if let [pet] = pets {
        // One pet: one statement, which takes the next id itself.
        return Ok(vec![insert(conn, None, pet).await?]);
    }
    let columns = pets
        .iter()
        .map(|pet| PetColumns::of(pet))
        .collect::<Result<Vec<_>, _>>()?;
    let last_id: i64 = sqlx::query_scalar("SELECT last_id FROM id_sequences WHERE name = 'pets'")
        .fetch_one(&mut *conn)
        .await?;
    let rows = row_placeholders(pets.len(), 7);
    // Ids in ascending order: the trigger moves the sequence on row by row.
    let sql = format!(
        "INSERT INTO pets (id, name, category_id, category_name, photo_urls, tags, status) \
         VALUES {rows} ON CONFLICT (id) DO NOTHING RETURNING id"
    );
    let sql = positional(conn, &sql);
    let mut query = sqlx::query_scalar(&sql);
    let mut id = last_id;
    for (pet, columns) in pets.iter().zip(columns) {
        id += 1;
        query = bind_pet!(query.bind(id), &pet.name, columns);
    }
    let inserted = inserted_ids(conn, query).await?;
    let mut ids = Vec::with_capacity(pets.len());
    let mut to_index = Vec::with_capacity(pets.len());
    for (pet, id) in pets.iter().zip(last_id + 1..) {
        if inserted.contains(&id) {
            to_index.push((id, *pet));
            ids.push(id);
        } else {
            ids.push(insert(conn, None, pet).await?);
        }
    }
    index_tags_of(conn, &to_index).await?;
    Ok(ids)
}

/// A pet's fields as its row stores them.
#[derive(Clone)]
struct PetColumns {
    category_id: Option<i64>,
    category_name: Option<String>,
    photo_urls: String,
    tags: String,
    status: &'static str,
}

impl PetColumns {
    fn of(pet: &Pet) -> Result<Self, StoreError> {
        Ok(Self {
            category_id: pet.category.as_ref().and_then(|c| c.id),
            category_name: pet.category.as_ref().and_then(|c| c.name.clone()),
            photo_urls: serde_json::to_string(&pet.photo_urls).map_err(StoreError::corrupt)?,
            tags: stored_tags(pet)?,
            status: pet.status.unwrap_or(PetStatus::Available).as_str(),
        })
    }
}

/// Indexes the pet's tag names (each once) in `pet_tags`.
async fn index_tags(conn: &mut AnyConnection, id: i64, pet: &Pet) -> Result<(), StoreError> {
    index_tags_of(conn, &[(id, pet)]).await
}

/// Indexes the tag names of several pets (each name once per pet) in
/// `pet_tags`: one statement for up to [`TAGS_PER_STATEMENT`] names, so that
/// a batch of new pets with tags costs one statement more than without.
async fn index_tags_of(conn: &mut AnyConnection, pets: &[(i64, &Pet)]) -> Result<(), StoreError> {
    let rows: Vec<(i64, &str)> = pets
        .iter()
        .flat_map(|(id, pet)| {
            let names: BTreeSet<&str> = pet.tags.iter().filter_map(|t| t.name.as_deref()).collect();
            names.into_iter().map(move |name| (*id, name))
        })
        .collect();
    for chunk in rows.chunks(TAGS_PER_STATEMENT) {
        let sql = format!(
            "INSERT INTO pet_tags (pet_id, name) VALUES {}",
            row_placeholders(chunk.len(), 2)
        );
        let sql = positional(conn, &sql);
        let mut query = sqlx::query(&sql);
        for (id, name) in chunk {
            query = query.bind(*id).bind(*name);
        }
        // Kept prepared only for the usual few names (one pet's): a
        // statement of its own for every number of names would push the
        // connection's usual statements out of its cache.
        query
            .persistent(chunk.len() <= 8)
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

/// Names in one statement (2 parameters each): well under the number of
/// parameters a statement may have (SQLite's 32,766; PostgreSQL's 65,535);
/// the body limit lets a pet have more tags.
const TAGS_PER_STATEMENT: usize = 1000;

/// Deletes the pet `id` (its tags and images go with it); the status it
/// had, or `None` if there is no such pet.
pub(crate) async fn delete(
    conn: &mut AnyConnection,
    id: i64,
) -> Result<Option<PetStatus>, StoreError> {
    let deleted: Option<String> =
        sqlx::query_scalar("DELETE FROM pets WHERE id = $1 RETURNING status")
            .bind(id)
            .fetch_optional(conn)
            .await?;
    deleted.as_deref().map(parse_status).transpose()
}

/// Tells `tx`'s commit what changing pet `id` changes for the caches: the
/// pet; if its status changed, which pets have its status `before` (`None`:
/// it did not exist) and `after` (`None`: it is deleted), and the counts.
pub(crate) fn note_change(
    tx: &mut WriteTx,
    id: i64,
    before: Option<PetStatus>,
    after: Option<PetStatus>,
) {
    tx.changed([topics::pet(id)]);
    if before != after {
        tx.changed(before.into_iter().chain(after).map(topics::pets_with));
        tx.changed([topics::PET_COUNTS]);
    }
}

/// [`note_change`] for pet `id` written whole as `pet`: what it is now, for
/// the caches to keep once the write is committed (they read it back with
/// [`as_read_back`], for the pets they hold only).
pub(crate) fn note_written(tx: &mut WriteTx, id: i64, before: Option<PetStatus>, pet: &Pet) {
    note_change(tx, id, before, pet.status);
    tx.stored(topics::pet(id), std::sync::Arc::new(pet.clone()));
}

/// Pet `id` as its row reads back once `pet` is written to it (the default
/// status applied, an empty category dropped): through the same columns,
/// so that a cache keeps exactly what a read would have given it.
pub(crate) fn as_read_back(id: i64, pet: &Pet) -> Result<Pet, StoreError> {
    let columns = PetColumns::of(pet)?;
    Pet::try_from(PetRow {
        id,
        name: pet.name.clone(),
        category_id: columns.category_id,
        category_name: columns.category_name,
        photo_urls: columns.photo_urls,
        tags: columns.tags,
        status: columns.status.to_owned(),
    })
}

/// Tells `tx`'s commit that pet `id` may have any status now, from any.
pub(crate) fn note_status_unknown(tx: &mut WriteTx, id: i64) {
    tx.changed([topics::pet(id), topics::PET_COUNTS]);
    tx.changed(PetStatus::ALL.map(topics::pets_with));
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    use crate::storage::temporary_postgres;

    /// The ids of the pets of some statuses come in order, at most as many
    /// as asked for, and none where no pet has them: on SQLite and on
    /// PostgreSQL, which aggregate them into one row differently.
    #[tokio::test]
    async fn the_ids_of_some_statuses_come_in_order_and_as_many_as_asked() {
        let (_dir, sqlite) = crate::storage::temporary_sqlite().await;
        check_ids_with_statuses(&sqlite).await;
        let test = "the_ids_of_some_statuses_come_in_order_and_as_many_as_asked";
        if let Some((_dropped, postgres)) = temporary_postgres(test).await {
            check_ids_with_statuses(&postgres).await;
        }
    }

    async fn check_ids_with_statuses(db: &Database) {
        let mut tx = db.begin_write().await.unwrap();
        for (id, status) in [(13, "sold"), (11, "sold"), (12, "pending"), (14, "sold")] {
            sqlx::query(
                "INSERT INTO pets (id, name, photo_urls, tags, status) \
                 VALUES ($1, 'p', '[]', '[]', $2)",
            )
            .bind(id)
            .bind(status)
            .execute(tx.conn())
            .await
            .unwrap();
        }
        tx.commit().await.unwrap();
        let mut conn = db.conn().await.unwrap();
        let mut ids = async |statuses: &[PetStatus], limit| {
            let statuses = statuses.iter().copied().collect();
            ids_with_statuses(&mut conn, &statuses, limit)
                .await
                .unwrap()
        };
        assert_eq!(ids(&[PetStatus::Sold], 10).await, [11, 13, 14]);
        assert_eq!(ids(&[PetStatus::Sold], 2).await, [11, 13]);
        assert_eq!(
            ids(&[PetStatus::Sold, PetStatus::Pending], 10).await,
            [11, 12, 13, 14]
        );
        assert_eq!(ids(&[PetStatus::Available], 10).await, Vec::<i64>::new());
    }

    /// A batch of orders claims its pets through the primary key even when
    /// PostgreSQL has no statistics for `pets` yet (never analyzed: it
    /// guesses that a status matches 0.5 % of the rows): not by reading
    /// every available pet's entry in `pets_status`.
    #[tokio::test]
    async fn a_claim_finds_its_pets_by_id_alone_without_statistics() {
        let test = "a_claim_finds_its_pets_by_id_alone_without_statistics";
        let Some((_dropped, db)) = temporary_postgres(test).await else {
            return;
        };
        // Ids from 1,000,000: the sequence's trigger leaves them alone.
        let mut tx = db.begin_write().await.unwrap();
        sqlx::query(
            "INSERT INTO pets (id, name, photo_urls, tags, status) \
             SELECT id, 'p', '[]', '[]', 'available' FROM generate_series(1000000, 1199999) AS id",
        )
        .execute(tx.conn())
        .await
        .unwrap();
        tx.commit().await.unwrap();
        let ids: Vec<i64> = (1_000_000..1_000_128).step_by(2).collect();
        let explain = format!("EXPLAIN {}", claim_available_many_sql(ids.len()));
        let mut query = sqlx::query_scalar::<_, String>(&explain)
            .bind(PetStatus::Pending.as_str())
            .bind(PetStatus::Available.as_str());
        for id in &ids {
            query = query.bind(*id);
        }
        let plan = query.fetch_all(db.pool()).await.unwrap().join("\n");
        assert!(plan.contains("pets_pkey"), "{plan}");
        assert!(!plan.contains("pets_status"), "{plan}");
        let mut tx = db.begin_write().await.unwrap();
        let claimed = claim_available_many(tx.conn(), &ids, PetStatus::Pending)
            .await
            .unwrap();
        tx.commit().await.unwrap();
        assert_eq!(claimed, ids.iter().copied().collect());
    }
}
