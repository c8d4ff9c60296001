//! The pet store's storage: every SQL string of the service. Functions take
//! a connection (`&mut AnyConnection`, a transaction's or the pool's) when
//! an operation ([`super::ops`]) composes several in its transaction, or the
//! [`Database`] for a read of their own. They return the domain's types
//! ([`super::model`]) and [`StoreError`].

pub(crate) mod images;
pub(crate) mod new_orders;
pub(crate) mod new_pets;
pub(crate) mod orders;
pub(crate) mod pets;
pub(crate) mod replaced_pets;
pub(crate) mod sample;
pub(crate) mod users;

use sqlx::AnyConnection;

use crate::storage::StoreError;

/// What the pet store's cached answers depend on: the read caches' topics,
/// which its writes name as they change them.
pub(crate) mod topics {
    use crate::petstore::model::PetStatus;
    use crate::storage::{Topic, TopicKind};

    /// The pets, one topic each (by id).
    pub(crate) const PET: TopicKind = TopicKind::new(b'p');
    const PETS_WITH_STATUS: TopicKind = TopicKind::new(b's');

    /// How many pets have each status (the inventory).
    pub(crate) const PET_COUNTS: Topic = Topic::whole(TopicKind::new(b'c'));

    /// One pet, as `getPetById` answers it.
    pub(crate) fn pet(id: i64) -> Topic {
        Topic::of(PET, id)
    }

    /// Which pets have one status (`findPetsByStatus`'s list is these, and
    /// what each of them is: [`pet`]).
    pub(crate) fn pets_with(status: PetStatus) -> Topic {
        let id = match status {
            PetStatus::Available => 0,
            PetStatus::Pending => 1,
            PetStatus::Sold => 2,
        };
        Topic::of(PETS_WITH_STATUS, id)
    }
}

/// Tables whose ids come from `id_sequences`.
#[derive(Debug, Clone, Copy)]
pub(crate) enum IdTable {
    Pets,
    Orders,
    Users,
}

impl IdTable {
    fn name(self) -> &'static str {
        match self {
            IdTable::Pets => "pets",
            IdTable::Orders => "orders",
            IdTable::Users => "users",
        }
    }
}

/// The id for a new row: the one the client asked for, or the server's
/// choice, the next value of the table's sequence that no row has taken
/// (clients may choose ids themselves). Runs inside the caller's write
/// transaction, so two writers never get the same id; a sequence never goes
/// back, so deleted ids stay unused.
async fn new_id(
    conn: &mut AnyConnection,
    table: IdTable,
    requested: Option<i64>,
) -> Result<i64, StoreError> {
    if let Some(id) = requested {
        return Ok(id);
    }
    let exists = format!("SELECT id FROM {} WHERE id = $1", table.name());
    loop {
        let id = next_id(conn, table).await?;
        let taken: Option<i64> = sqlx::query_scalar(&exists)
            .bind(id)
            .fetch_optional(&mut *conn)
            .await?;
        if taken.is_none() {
            return Ok(id);
        }
    }
}

/// The id for a new row whose id names nothing the client looks it up by
/// (a user: every user operation takes the username): the one the client
/// asked for when no row has it, the server's choice otherwise.
async fn free_or_new_id(
    conn: &mut AnyConnection,
    table: IdTable,
    requested: Option<i64>,
) -> Result<i64, StoreError> {
    if let Some(id) = requested {
        let taken: Option<i64> =
            sqlx::query_scalar(&format!("SELECT id FROM {} WHERE id = $1", table.name()))
                .bind(id)
                .fetch_optional(&mut *conn)
                .await?;
        if taken.is_none() {
            return Ok(id);
        }
    }
    new_id(conn, table, None).await
}

/// The next value of the table's sequence (which a client may have taken
/// already: the caller checks).
async fn next_id(conn: &mut AnyConnection, table: IdTable) -> Result<i64, StoreError> {
    Ok(sqlx::query_scalar(
        "UPDATE id_sequences SET last_id = last_id + 1 WHERE name = $1 RETURNING last_id",
    )
    .bind(table.name())
    .fetch_one(&mut *conn)
    .await?)
}

/// Takes `count` values of the table's sequence at once; the first of them
/// (some of which a client may have taken already: the caller checks).
async fn reserve_ids(
    conn: &mut AnyConnection,
    table: IdTable,
    count: usize,
) -> Result<i64, StoreError> {
    let count = i64::try_from(count).map_err(StoreError::corrupt)?;
    let last: i64 = sqlx::query_scalar(
        "UPDATE id_sequences SET last_id = last_id + $1 WHERE name = $2 RETURNING last_id",
    )
    .bind(count)
    .bind(table.name())
    .fetch_one(&mut *conn)
    .await?;
    Ok(last - count + 1)
}

/// Moves a table's sequence up to at least `id`, for ids the server set
/// itself (the sample data), so that it never hands them out again.
async fn reserve_ids_up_to(
    conn: &mut AnyConnection,
    table: IdTable,
    id: i64,
) -> Result<(), StoreError> {
    sqlx::query("UPDATE id_sequences SET last_id = $1 WHERE name = $2 AND last_id < $1")
        .bind(id)
        .bind(table.name())
        .execute(conn)
        .await?;
    Ok(())
}
