//! What sqlx's errors are, as the layers above need to tell them apart:
//! [`StoreError`], which the domain's
//! [`Failure`](crate::core::failure::Failure) carries and so `core`
//! defines.

pub(crate) use crate::core::failure::StoreError;

impl From<sqlx::Error> for StoreError {
    fn from(err: sqlx::Error) -> Self {
        match &err {
            sqlx::Error::Database(db) if db.is_unique_violation() => StoreError::Conflict {
                constraint: db.constraint().map(str::to_owned),
            },
            // SQLSTATE class 08 (connection exception) and 57P (the server
            // is shutting down or starting).
            sqlx::Error::Database(db)
                if db
                    .code()
                    .is_some_and(|c| c.starts_with("08") || c.starts_with("57P")) =>
            {
                StoreError::Unavailable(err.to_string())
            }
            sqlx::Error::PoolTimedOut
            | sqlx::Error::PoolClosed
            | sqlx::Error::Io(_)
            | sqlx::Error::Tls(_)
            | sqlx::Error::WorkerCrashed => StoreError::Unavailable(err.to_string()),
            sqlx::Error::RowNotFound => StoreError::NotFound,
            _ => StoreError::Database(err.to_string()),
        }
    }
}
