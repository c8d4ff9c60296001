//! The portfolio's operations: one function per use case, between the
//! handlers (and the operator's CLI) and storage. Each owns its transaction,
//! takes and returns the domain's types, keeps the rules, and fails with a
//! [`Failure`](crate::core::failure::Failure), which the handlers turn into the
//! service's error answer in one `From`.
//!
//! What a change must reach besides the database, the server's caches of
//! keys and tokens and its mail worker, comes in a [`Context`]; the CLI has
//! neither (a running server reloads keys within a second, and its mail
//! worker finds queued mail by itself).

pub(crate) mod api_keys;
pub(crate) mod contact;
pub(crate) mod content;
pub(crate) mod key_requests;
pub(crate) mod mastodon;
pub(crate) mod newsletter;
pub(crate) mod oauth_clients;
pub(crate) mod outbox;
pub(crate) mod social;
pub(crate) mod tokens;

use crate::access::Access;
use crate::config::Scope;
use crate::core::failure::Failure;
use crate::mail::Mailer;
use crate::storage::Database;

/// What the operations work on.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Context<'a> {
    pub(crate) db: &'a Database,
    /// The server's caches of keys and tokens, told of a change at once.
    pub(crate) access: Option<&'a Access>,
    /// The mail worker, woken once a transaction that queued mail commits.
    pub(crate) mailer: Option<&'a Mailer>,
}

impl<'a> Context<'a> {
    /// The CLI's: the database alone.
    pub(crate) fn offline(db: &'a Database) -> Self {
        Context {
            db,
            access: None,
            mailer: None,
        }
    }

    /// Tells the mail worker that mail was queued.
    fn mail_queued(&self) {
        if let Some(mailer) = self.mailer {
            mailer.wake();
        }
    }
}

/// Who asks for a change to credentials.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Actor<'a> {
    /// The operator at the CLI, who may do anything.
    Operator,
    /// A caller with a token holding these scopes: it hands out, and
    /// revokes, only what it holds itself, so that managing keys is not a
    /// way to more power (`keys:manage` cannot make an `admin` key).
    Holding(&'a [Scope]),
}

impl Actor<'_> {
    /// Refused unless the actor holds every one of `scopes`, to hand them on.
    pub(crate) fn may_grant(self, scopes: &[Scope]) -> Result<(), Failure> {
        self.holds_all(scopes, "hand out the scope")
    }

    /// Refused unless the actor holds every scope of the credential it
    /// would revoke: `keys:manage` alone may not end an `admin` key.
    pub(crate) fn may_revoke(self, scopes: &[Scope]) -> Result<(), Failure> {
        self.holds_all(scopes, "revoke a credential with the scope")
    }

    fn holds_all(self, scopes: &[Scope], to: &str) -> Result<(), Failure> {
        let Actor::Holding(held) = self else {
            return Ok(());
        };
        match scopes.iter().find(|scope| !scope.granted_by(held)) {
            None => Ok(()),
            Some(scope) => Err(Failure::Refused {
                message: format!("you cannot {to} {scope}: your token does not hold it"),
                scope: Some(scope.as_str()),
            }),
        }
    }
}
