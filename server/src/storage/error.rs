//! What can go wrong in storage, as the layers above need to tell it apart.
//! It stands apart from the storage code so that the domain's
//! [`Failure`](crate::core::failure::Failure) can carry it without depending on
//! storage.

/// What can go wrong in storage, as the layers above need to tell it apart.
#[derive(Debug, Clone, thiserror::Error)]
pub(crate) enum StoreError {
    /// The row the operation needs does not exist.
    #[error("not found")]
    NotFound,
    /// A unique or primary-key constraint refused the write (its name, where
    /// the database gives it).
    #[error("conflict on {}", constraint.as_deref().unwrap_or("a unique constraint"))]
    Conflict { constraint: Option<String> },
    /// The database cannot be reached now: no connection in time, a lost
    /// connection, a server shutting down. Worth trying again later.
    #[error("database unavailable: {0}")]
    Unavailable(String),
    /// A stored value the code cannot read back.
    #[error("corrupt row: {0}")]
    Corrupt(String),
    /// Any other database failure.
    #[error("database error: {0}")]
    Database(String),
}

impl StoreError {
    /// A stored value the code cannot read back, with what and where.
    pub(crate) fn corrupt(what: impl std::fmt::Display) -> Self {
        StoreError::Corrupt(what.to_string())
    }
}

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
