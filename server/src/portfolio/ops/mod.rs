//! The portfolio's operations: one function per use case, between the
//! handlers (and the operator's CLI) and storage. Each owns its transaction,
//! takes and returns the domain's types, keeps the rules, and fails with a
//! [`Failure`](crate::core::failure::Failure), which the handlers turn into the
//! service's error answer in one `From`.
//!
//! What a change must reach besides the database, the server's caches of
//! keys and tokens and its mail worker, comes in a [`Context`]; the CLI has
//! neither (a running server reloads keys within a second, and its mail
//! worker finds queued mail by itself). The credentials' own operations
//! (keys, OAuth clients, tokens) are `access::ops`.

pub(crate) mod analytics;
pub(crate) mod console;
pub(crate) mod contact;
pub(crate) mod content;
pub(crate) mod key_requests;
pub(crate) mod mastodon;
pub(crate) mod newsletter;
pub(crate) mod outbox;
pub(crate) mod social;

use sqlx::AnyConnection;

use crate::access::Access;
use crate::core::failure::Failure;
use crate::mail::Mailer;
use crate::mail::templates::Letterhead;
use crate::portfolio::db;
use crate::storage::Database;

/// What the operations work on.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Context<'a> {
    pub(crate) db: &'a Database,
    /// The server's caches of keys and tokens, told of a change at once.
    pub(crate) access: Option<&'a Access>,
    /// The mail worker, woken once a transaction that queued mail commits.
    pub(crate) mailer: Option<&'a Mailer>,
    /// The server's address, without a trailing slash: the emails' links.
    pub(crate) public_url: &'a str,
}

impl<'a> Context<'a> {
    /// The CLI's: the database alone, and the address the server is
    /// reached at.
    pub(crate) fn offline(db: &'a Database, public_url: &'a str) -> Self {
        Context {
            db,
            access: None,
            mailer: None,
            public_url,
        }
    }

    /// Whom the emails speak for: the site as the content names it now
    /// (read in the caller's transaction).
    async fn letterhead(&self, conn: &mut AnyConnection) -> Result<Letterhead<'a>, Failure> {
        let site = db::content::site_info(conn).await?;
        Ok(Letterhead {
            site: site.into_site(self.public_url),
            public_url: self.public_url,
        })
    }

    /// What the credentials' operations need of it.
    pub(crate) fn access(&self) -> crate::access::ops::Context<'a> {
        crate::access::ops::Context {
            db: self.db,
            access: self.access,
        }
    }

    /// Tells the mail worker that mail was queued.
    fn mail_queued(&self) {
        if let Some(mailer) = self.mailer {
            mailer.wake();
        }
    }
}
