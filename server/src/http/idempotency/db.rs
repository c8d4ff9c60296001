//! Every SQL string of the idempotency keys (table `idempotency_keys`).

use sqlx::Row as _;

use crate::storage::{Database, StoreError};

/// Which request a key belongs to, and how long it is kept.
#[derive(Debug, Clone)]
pub(crate) struct Claim<'a> {
    pub(crate) caller: &'a str,
    pub(crate) key: &'a str,
    pub(crate) fingerprint: &'a str,
    /// A token of the request that takes the key: only it may keep an
    /// answer or free the key (not a request whose lease was taken over).
    pub(crate) holder: &'a str,
    /// Until when the request that holds the key may run.
    pub(crate) lease_until_ms: i64,
    pub(crate) expires_ms: i64,
}

/// A key as stored.
#[derive(Debug, Clone)]
pub(crate) struct Stored {
    pub(crate) fingerprint: String,
    pub(crate) state: State,
    pub(crate) expires_ms: i64,
}

/// Where the request that first used a key is.
#[derive(Debug, Clone)]
pub(crate) enum State {
    /// Still running (or died, once its lease is over).
    Running { lease_until_ms: i64 },
    /// Answered; the answer is kept.
    Done(StoredAnswer),
}

/// A kept answer: its status, the headers that matter (JSON pairs) and its
/// sealed body.
#[derive(Debug, Clone)]
pub(crate) struct StoredAnswer {
    pub(crate) status: u16,
    pub(crate) headers: String,
    pub(crate) sealed_body: Vec<u8>,
}

/// The key, if some request used it: one read by the primary key.
pub(crate) async fn find(
    db: &Database,
    caller: &str,
    key: &str,
) -> Result<Option<Stored>, StoreError> {
    let mut conn = db.conn().await?;
    let row = sqlx::query(
        "SELECT fingerprint, lease_until_ms, status, headers, body, expires_ms \
         FROM idempotency_keys WHERE caller = $1 AND idem_key = $2",
    )
    .bind(caller)
    .bind(key)
    .fetch_optional(&mut *conn)
    .await?;
    let Some(row) = row else {
        return Ok(None);
    };
    let status: Option<i32> = row.try_get("status")?;
    let state = match status {
        Some(status) => State::Done(StoredAnswer {
            status: u16::try_from(status)
                .map_err(|_| StoreError::corrupt(format!("idempotency status {status}")))?,
            headers: row
                .try_get::<Option<String>, _>("headers")?
                .unwrap_or_default(),
            sealed_body: row
                .try_get::<Option<Vec<u8>>, _>("body")?
                .unwrap_or_default(),
        }),
        None => State::Running {
            lease_until_ms: row
                .try_get::<Option<i64>, _>("lease_until_ms")?
                .unwrap_or(0),
        },
    };
    Ok(Some(Stored {
        fingerprint: row.try_get("fingerprint")?,
        state,
        expires_ms: row.try_get("expires_ms")?,
    }))
}

/// Takes the key for a request: `true` if it was free (or expired, or held
/// by a request whose lease is over at `now_ms`), `false` if another
/// request holds or answered it.
pub(crate) async fn claim(
    db: &Database,
    claim: &Claim<'_>,
    now_ms: i64,
) -> Result<bool, StoreError> {
    let mut tx = db.begin_write().await?;
    tx.changes_nothing_cached();
    // A key past its expiry, or abandoned by a request that died, is free.
    sqlx::query(
        "DELETE FROM idempotency_keys WHERE caller = $1 AND idem_key = $2 \
         AND (expires_ms <= $3 OR (status IS NULL AND lease_until_ms <= $3))",
    )
    .bind(claim.caller)
    .bind(claim.key)
    .bind(now_ms)
    .execute(tx.conn())
    .await?;
    let taken = sqlx::query(
        "INSERT INTO idempotency_keys \
         (caller, idem_key, fingerprint, holder, lease_until_ms, expires_ms) \
         VALUES ($1, $2, $3, $4, $5, $6) \
         ON CONFLICT (caller, idem_key) DO NOTHING",
    )
    .bind(claim.caller)
    .bind(claim.key)
    .bind(claim.fingerprint)
    .bind(claim.holder)
    .bind(claim.lease_until_ms)
    .bind(claim.expires_ms)
    .execute(tx.conn())
    .await?
    .rows_affected()
        == 1;
    tx.commit().await?;
    Ok(taken)
}

/// Ends the hold of the request that holds the key (`holder`): with its
/// answer, which is kept; or without (an error answer, which changed
/// nothing), and the key is freed for the next request with it. A request
/// whose key was taken over changes nothing.
pub(crate) async fn settle(
    db: &Database,
    caller: &str,
    key: &str,
    holder: &str,
    answer: Option<&StoredAnswer>,
) -> Result<(), StoreError> {
    let mut tx = db.begin_write().await?;
    tx.changes_nothing_cached();
    let statement = match answer {
        Some(answer) => sqlx::query(
            "UPDATE idempotency_keys SET status = $1, headers = $2, body = $3, \
             lease_until_ms = NULL \
             WHERE caller = $4 AND idem_key = $5 AND holder = $6 AND status IS NULL",
        )
        .bind(i32::from(answer.status))
        .bind(&answer.headers)
        .bind(&answer.sealed_body),
        None => sqlx::query(
            "DELETE FROM idempotency_keys \
             WHERE caller = $1 AND idem_key = $2 AND holder = $3 AND status IS NULL",
        ),
    };
    statement
        .bind(caller)
        .bind(key)
        .bind(holder)
        .execute(tx.conn())
        .await?;
    tx.commit().await
}

/// Forgets every key that expired by `now_ms`; returns how many.
pub(crate) async fn sweep(db: &Database, now_ms: i64) -> Result<u64, StoreError> {
    let mut tx = db.begin_write().await?;
    tx.changes_nothing_cached();
    let swept = sqlx::query("DELETE FROM idempotency_keys WHERE expires_ms <= $1")
        .bind(now_ms)
        .execute(tx.conn())
        .await?
        .rows_affected();
    tx.commit().await?;
    Ok(swept)
}
