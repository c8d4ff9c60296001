//! Why an operation did not happen, in the domain's words: the one error
//! the operations layers (`petstore::ops`, `portfolio::ops`) and the rules
//! of the models return. It knows nothing of HTTP: the handlers turn it into
//! the service's error answer through the one `From` in [`crate::http::error`],
//! and the CLI prints it as a line for people.

use std::borrow::Cow;

/// What went wrong, as the caller of an operation needs to tell it apart.
#[derive(Debug, Clone)]
pub(crate) enum Failure {
    /// What the operation works on does not exist.
    NotFound(Cow<'static, str>),
    /// It exists already, or was changed meanwhile (a slug taken, a request
    /// decided by someone else).
    Conflict(Cow<'static, str>),
    /// The input breaks a rule: a message, and the problem of each field by
    /// name where the rule is a field's.
    Invalid {
        message: Cow<'static, str>,
        fields: Vec<(String, String)>,
    },
    /// The input cannot be read as what the operation takes (a malformed
    /// token, a value out of range).
    Malformed(Cow<'static, str>),
    /// The caller may not do this (it lacks `scope`, where a scope would
    /// let it).
    Refused {
        message: String,
        scope: Option<&'static str>,
    },
    /// Not now: this caller has asked too often (`per_caller`), or the
    /// service is full; try again after `retry_after` seconds.
    Busy {
        message: Cow<'static, str>,
        per_caller: bool,
        retry_after: u64,
    },
    /// A fault of the server's own (a worker thread gone): the caller learns
    /// only that something went wrong; `context` and `cause` go to the log.
    Fault {
        context: &'static str,
        cause: String,
    },
    /// A service we call (the social network) failed or refused; its
    /// status, where it answered.
    Upstream {
        message: &'static str,
        status: Option<u16>,
    },
    /// Storage failed: unavailable for now, or a fault.
    Storage(StoreError),
}

impl Failure {
    pub(crate) fn not_found(message: impl Into<Cow<'static, str>>) -> Self {
        Failure::NotFound(message.into())
    }

    pub(crate) fn conflict(message: impl Into<Cow<'static, str>>) -> Self {
        Failure::Conflict(message.into())
    }

    pub(crate) fn malformed(message: impl Into<Cow<'static, str>>) -> Self {
        Failure::Malformed(message.into())
    }

    /// A rule broken, said in one message.
    pub(crate) fn invalid(message: impl Into<Cow<'static, str>>) -> Self {
        Failure::Invalid {
            message: message.into(),
            fields: Vec::new(),
        }
    }

    /// Rules broken by fields: field -> problem.
    pub(crate) fn invalid_fields(fields: impl IntoIterator<Item = (String, String)>) -> Self {
        Failure::Invalid {
            message: "the request breaks the rules of its fields".into(),
            fields: fields.into_iter().collect(),
        }
    }

    /// A fault of the server's own, with what was going on.
    pub(crate) fn fault(context: &'static str, cause: impl std::fmt::Display) -> Self {
        Failure::Fault {
            context,
            cause: cause.to_string(),
        }
    }
}

impl From<super::templates::RenderError> for Failure {
    fn from(e: super::templates::RenderError) -> Self {
        Failure::fault("templates", e)
    }
}

impl From<StoreError> for Failure {
    fn from(error: StoreError) -> Self {
        Failure::Storage(error)
    }
}

/// One line for people (the CLI): the message, or each field's problem.
impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::NotFound(message)
            | Failure::Conflict(message)
            | Failure::Malformed(message)
            | Failure::Busy { message, .. } => f.write_str(message),
            Failure::Invalid { message, fields } if fields.is_empty() => f.write_str(message),
            Failure::Invalid { fields, .. } => {
                let lines: Vec<String> = fields
                    .iter()
                    .map(|(field, problem)| format!("{field}: {problem}"))
                    .collect();
                f.write_str(&lines.join("; "))
            }
            Failure::Refused { message, .. } => f.write_str(message),
            Failure::Fault { context, cause } => write!(f, "{context}: {cause}"),
            Failure::Upstream { message, .. } => f.write_str(message),
            Failure::Storage(error) => write!(f, "{error}"),
        }
    }
}

impl std::error::Error for Failure {}

/// Storage results whose unique violation means something particular to
/// the operation (a slug taken).
pub(crate) trait OnConflict<T> {
    /// Maps a unique violation to `failure` (given the constraint's name,
    /// where the database gives it); other storage errors stay as they are.
    fn on_conflict(self, failure: impl FnOnce(Option<&str>) -> Failure) -> Result<T, Failure>;
}

impl<T> OnConflict<T> for Result<T, StoreError> {
    fn on_conflict(self, failure: impl FnOnce(Option<&str>) -> Failure) -> Result<T, Failure> {
        self.map_err(|e| match e {
            StoreError::Conflict { constraint } => failure(constraint.as_deref()),
            other => Failure::Storage(other),
        })
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_reads_as_one_line_with_each_field() {
        let failure = Failure::invalid_fields([
            ("name".to_owned(), "required".to_owned()),
            ("url".to_owned(), "not an http(s) URL".to_owned()),
        ]);
        assert_eq!(
            failure.to_string(),
            "name: required; url: not an http(s) URL"
        );
        assert_eq!(Failure::not_found("no pet 9").to_string(), "no pet 9");
    }

    #[test]
    fn only_a_unique_violation_becomes_the_operations_conflict() {
        let taken: Result<(), StoreError> = Err(StoreError::Conflict {
            constraint: Some("projects_pkey".to_owned()),
        });
        let failure = taken
            .on_conflict(|name| Failure::conflict(format!("taken ({name:?})")))
            .unwrap_err();
        assert!(matches!(failure, Failure::Conflict(m) if m.contains("projects_pkey")));
        let down: Result<(), StoreError> = Err(StoreError::Unavailable("gone".to_owned()));
        let failure = down.on_conflict(|_| Failure::conflict("x")).unwrap_err();
        assert!(matches!(
            failure,
            Failure::Storage(StoreError::Unavailable(_))
        ));
    }
}
