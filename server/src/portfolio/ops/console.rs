//! The owner's console: who may open it, and the sessions it runs on. The
//! owner signs in by a one-time link that the operator's CLI prints
//! (`petstore-portfolio console-link`), or, for teams, as an OAuth client
//! that holds `admin`; either opens a session of its own, whose token goes
//! in a cookie and whose CSRF token goes in every form. Only the SHA-256 of
//! each token is stored.

use std::net::IpAddr;

use crate::access::ops::tokens::{self, PresentedClient, Refusal, TokenService};
use crate::config::Scope;
use crate::core::clock::now_ms;
use crate::core::failure::Failure;
use crate::core::secret;
use crate::limits::Limiter;
use crate::portfolio::db;
use crate::portfolio::model::fields::Fields;
use crate::portfolio::model::{Post, Slug};
use crate::portfolio::reads::console::Draft;
use crate::storage::{Database, WriteTx};

use super::Context;

/// How long a printed sign-in link works.
pub(crate) const LINK_TTL_MS: i64 = 15 * 60_000;

/// How long a session lasts.
pub(crate) const SESSION_TTL_MS: i64 = 12 * 3_600_000;

/// What the console tells a sign-in that failed, whatever the reason, so
/// that it tells nothing about which links or clients exist.
pub(crate) const SIGN_IN_REFUSED: &str =
    "this sign-in link was used already, has expired, or is not one the server made";

/// A session just opened: its token (for the cookie), once.
#[derive(Debug)]
pub(crate) struct NewSession {
    pub(crate) token: String,
}

/// A new sign-in link's token; the link works once, for [`LINK_TTL_MS`].
pub(crate) async fn issue_sign_in_link(db: &Database) -> Result<String, Failure> {
    let token = secret::token::<32>();
    let mut tx = db.begin_write().await?;
    tx.changes_nothing_cached();
    db::console::insert_link(
        tx.conn(),
        &secret::sha256_hex(&token),
        now_ms() + LINK_TTL_MS,
    )
    .await?;
    tx.commit().await?;
    Ok(token)
}

/// Uses up the sign-in link of `token` and opens a session for the
/// operator. Failures count against the caller's `address` in `failures`,
/// at most `limit` a minute; past it, attempts are refused for a while.
pub(crate) async fn sign_in_with_link(
    db: &Database,
    failures: &Limiter,
    address: Option<IpAddr>,
    limit: u32,
    token: &str,
) -> Result<NewSession, Failure> {
    let callers = Limiter::failure_callers("console-link", address, limit);
    let now = crate::core::clock::now().timestamp();
    let _turn = failures.turn(&callers[0].0).await;
    failures
        .refuse_after_failures(&callers, now)
        .await
        .map_err(|retry_after| Failure::Busy {
            message: format!("too many failed sign-ins; retry in {retry_after} s").into(),
            per_caller: true,
            retry_after,
        })?;
    let mut tx = db.begin_write().await?;
    tx.changes_nothing_cached();
    let usable = token.len() <= 100
        && db::console::use_link(tx.conn(), &secret::sha256_hex(token), now_ms()).await?;
    if !usable {
        drop(tx);
        failures.count_failure(&callers, now).await;
        return Err(refused());
    }
    open(tx, "operator".to_owned()).await
}

/// Checks an OAuth client's id and secret (failures counted as at the
/// token endpoint) and opens a session for it if it holds `admin`.
pub(crate) async fn sign_in_with_client(
    service: TokenService<'_>,
    client: PresentedClient,
) -> Result<NewSession, Failure> {
    let client = tokens::authenticate(service, client)
        .await
        .map_err(|refusal| match refusal {
            Refusal::Service(failure @ (Failure::Busy { .. } | Failure::Storage(_))) => failure,
            Refusal::Service(_) | Refusal::OAuth(_) => Failure::Refused {
                message: "the client id or secret is wrong".to_owned(),
                scope: None,
            },
        })?;
    if !Scope::Admin.granted_by(&client.client.scopes) {
        return Err(Failure::Refused {
            message: "this client does not hold admin, which the console needs".to_owned(),
            scope: Some("admin"),
        });
    }
    let mut tx = service.db.begin_write().await?;
    tx.changes_nothing_cached();
    open(tx, format!("client:{}", client.client.client_id)).await
}

fn refused() -> Failure {
    Failure::Refused {
        message: SIGN_IN_REFUSED.to_owned(),
        scope: None,
    }
}

/// Opens a session for `signed_in_as` in `tx`, and commits.
async fn open(mut tx: WriteTx, signed_in_as: String) -> Result<NewSession, Failure> {
    let token = secret::token::<32>();
    let session = db::console::SessionRow {
        csrf_token: secret::token::<32>(),
        signed_in_as,
        expires_at_ms: now_ms() + SESSION_TTL_MS,
    };
    db::console::insert_session(tx.conn(), &secret::sha256_hex(&token), &session).await?;
    tx.commit().await?;
    Ok(NewSession { token })
}

/// Ends the session of `token_hash` (signing out), and every session and
/// link past its time.
pub(crate) async fn sign_out(db: &Database, token_hash: &str) -> Result<(), Failure> {
    let mut tx = db.begin_write().await?;
    tx.changes_nothing_cached();
    db::console::end_session(tx.conn(), token_hash, now_ms()).await?;
    tx.commit().await?;
    Ok(())
}

/// Keeps `draft` (in place of the draft of its slug). A draft may be
/// unfinished: only its slug, which names it, must be one, and no field
/// may be longer than a post's.
pub(crate) async fn save_draft(db: &Database, draft: &Draft) -> Result<(), Failure> {
    let mut fields = Fields::default();
    if Slug::try_from(draft.slug.clone()).is_err() {
        fields.problem(
            "slug",
            "lower-case letters and digits in dash-separated runs, at most 100 characters",
        );
    }
    fields.text("title", Some(&draft.title), false, 200);
    fields.text("summary", Some(&draft.summary), false, 1000);
    fields.text("body", Some(&draft.body), false, 200_000);
    fields.check()?;
    let row = db::console::DraftRow {
        slug: draft.slug.clone(),
        title: draft.title.clone(),
        summary: draft.summary.clone(),
        body: draft.body.clone(),
        tags: serde_json::to_string(&draft.tags)
            .map_err(|e| Failure::fault("a draft's tags", e))?,
        saved_at_ms: now_ms(),
    };
    let mut tx = db.begin_write().await?;
    tx.changes_nothing_cached();
    db::console::save_draft(tx.conn(), &row).await?;
    tx.commit().await?;
    Ok(())
}

/// Publishes the draft of `slug` as a post dated now, by the operation
/// `createPost` calls (its rules: every field of a post); the draft goes.
/// The post.
pub(crate) async fn publish_draft(ctx: Context<'_>, slug: &str) -> Result<Post, Failure> {
    let draft = db::console::draft(&mut *ctx.db.conn().await?, slug)
        .await?
        .ok_or_else(|| Failure::not_found(format!("no draft {slug:?}")))?;
    let tags =
        serde_json::from_str(&draft.tags).map_err(|e| Failure::fault("a draft's tags", e))?;
    let post = Post {
        slug: draft.slug,
        title: draft.title,
        summary: draft.summary,
        body: draft.body,
        tags,
        published_at: crate::core::clock::now(),
    };
    super::content::create(ctx, &post).await?;
    let mut tx = ctx.db.begin_write().await?;
    tx.changes_nothing_cached();
    db::console::delete_draft(tx.conn(), slug).await?;
    tx.commit().await?;
    Ok(post)
}
