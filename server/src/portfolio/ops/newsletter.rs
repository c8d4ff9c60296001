//! The newsletter: subscribe (idempotent, and quiet: a mailbox gets at most
//! one email a quiet period), confirm (double opt-in), unsubscribe, tell
//! the subscribers of a post (once per post), erase a subscriber.

use serde::{Deserialize, Serialize};
use sqlx::AnyConnection;
use utoipa::ToSchema;

use super::Context;
use crate::config::NewsletterConfig;
use crate::core::clock::now_ms;
use crate::core::failure::Failure;
use crate::core::secret;
use crate::mail::address::mailbox_key;
use crate::mail::{outbox, templates};
use crate::portfolio::db;
use crate::portfolio::model::fields::Fields;
use crate::portfolio::model::{Slug, Subscriber, SubscriberStatus};

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub(crate) struct SubscribeRequest {
    #[schema(required = true, format = Email, max_length = 254)]
    pub(crate) email: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub(crate) struct NotifyRequest {
    /// The post to announce.
    #[schema(value_type = String, pattern = "^[a-z0-9]+(-[a-z0-9]+)*$", max_length = 100)]
    pub(crate) post_slug: Slug,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub(crate) struct NotifyResult {
    pub(crate) post_slug: String,
    /// How many emails were queued for this post (by this call or the first).
    #[schema(minimum = 0)]
    pub(crate) queued: i64,
    /// True when an earlier call notified the subscribers already; nothing
    /// was queued again.
    pub(crate) already_notified: bool,
}

/// Subscribes an address (again); nothing tells a new address from a
/// known one. Subscribed already: nothing is sent. Pending or unsubscribed:
/// the email is sent again, but not into a flood, counted per mailbox
/// (`victim+1@`, `victim+2@`... reach one inbox).
pub(crate) async fn subscribe(
    ctx: Context<'_>,
    settings: &NewsletterConfig,
    request: &SubscribeRequest,
) -> Result<(), Failure> {
    let mut fields = Fields::default();
    let email = fields.email("email", request.email.as_deref(), true);
    fields.check()?;
    // Addresses are compared case-insensitively.
    let email = email.unwrap_or_default().to_lowercase();
    let quiet_ms = i64::try_from(settings.resend_after_minutes).unwrap_or(10) * 60_000;

    let mut tx = ctx.db.begin_write().await?;
    tx.changes_nothing_cached();
    let subscriber = match db::subscribers::find_by_email(tx.conn(), &email).await? {
        Some(known) => known,
        None => {
            let unsubscribe_token = secret::token::<24>();
            let mailbox = mailbox_key(&email);
            let id =
                db::subscribers::insert(tx.conn(), &email, &mailbox, &unsubscribe_token).await?;
            Subscriber {
                id,
                email,
                status: SubscriberStatus::Pending,
                unsubscribe_token,
                confirm_expires_ms: None,
            }
        }
    };
    let mailbox = mailbox_key(&subscriber.email);
    let last_emailed = db::subscribers::last_emailed_mailbox(tx.conn(), &mailbox).await?;
    let send = subscriber.status != SubscriberStatus::Subscribed
        && last_emailed.is_none_or(|at| now_ms() - at >= quiet_ms);
    if send {
        send_subscription_email(ctx, settings, tx.conn(), &subscriber).await?;
    }
    tx.commit().await?;
    if send {
        ctx.mail_queued();
    }
    Ok(())
}

/// Queues the email a (re)subscription calls for, in the caller's
/// transaction: the welcome email (single opt-in), or a confirmation link
/// (double opt-in).
async fn send_subscription_email(
    ctx: Context<'_>,
    settings: &NewsletterConfig,
    conn: &mut AnyConnection,
    subscriber: &Subscriber,
) -> Result<(), Failure> {
    let from = ctx.letterhead(conn).await?;
    let email = if settings.double_opt_in {
        let confirm_token = secret::token::<24>();
        let ttl_ms = i64::try_from(settings.confirmation_ttl_hours).unwrap_or(48) * 3_600_000;
        db::subscribers::await_confirmation(conn, subscriber.id, &confirm_token, now_ms() + ttl_ms)
            .await?;
        templates::confirmation(&from, &subscriber.email, &confirm_token)?
    } else {
        db::subscribers::mark_subscribed(conn, subscriber.id).await?;
        templates::welcome(&from, &subscriber.email, &subscriber.unsubscribe_token)?
    };
    outbox::enqueue(conn, &email).await?;
    Ok(())
}

/// Confirms the subscription waiting for `confirm_token`, and welcomes it;
/// the address it is for.
pub(crate) async fn confirm(ctx: Context<'_>, confirm_token: &str) -> Result<String, Failure> {
    let confirm_token = Subscriber::link_token(confirm_token)?;
    let mut tx = ctx.db.begin_write().await?;
    tx.changes_nothing_cached();
    let subscriber = db::subscribers::find_by_confirm_token(tx.conn(), confirm_token)
        .await?
        .ok_or_else(|| Failure::not_found("no subscription waits for this confirmation"))?;
    if subscriber.confirmation_expired(now_ms()) {
        return Err(Failure::malformed(
            "this confirmation link has expired; subscribe again for a new one",
        ));
    }
    db::subscribers::mark_subscribed(tx.conn(), subscriber.id).await?;
    let from = ctx.letterhead(tx.conn()).await?;
    let welcome = templates::welcome(&from, &subscriber.email, &subscriber.unsubscribe_token)?;
    outbox::enqueue(tx.conn(), &welcome).await?;
    tx.commit().await?;
    ctx.mail_queued();
    Ok(subscriber.email)
}

/// What a link with an unknown unsubscribe token is told.
pub(crate) const UNKNOWN_UNSUBSCRIBE_LINK: &str = "no subscription has this unsubscribe link";

/// Unsubscribes the subscription of `unsubscribe_token` (again, if it
/// already was); the address it is for.
pub(crate) async fn unsubscribe(
    ctx: Context<'_>,
    unsubscribe_token: &str,
) -> Result<String, Failure> {
    set_by_link(ctx, unsubscribe_token, SubscriberStatus::Unsubscribed).await
}

/// Subscribes again the address of `unsubscribe_token`, at once: the token
/// came in an email to it, which is the proof a confirmation would ask
/// for. Subscribed already, nothing changes. No email is sent. The address.
pub(crate) async fn resubscribe(
    ctx: Context<'_>,
    unsubscribe_token: &str,
) -> Result<String, Failure> {
    set_by_link(ctx, unsubscribe_token, SubscriberStatus::Subscribed).await
}

/// Gives the subscriber of `unsubscribe_token` `status`, by its own link;
/// the address.
async fn set_by_link(
    ctx: Context<'_>,
    unsubscribe_token: &str,
    status: SubscriberStatus,
) -> Result<String, Failure> {
    let unsubscribe_token = Subscriber::link_token(unsubscribe_token)?;
    let mut tx = ctx.db.begin_write().await?;
    tx.changes_nothing_cached();
    let subscriber = db::subscribers::find_by_unsubscribe_token(tx.conn(), unsubscribe_token)
        .await?
        .ok_or_else(|| Failure::not_found(UNKNOWN_UNSUBSCRIBE_LINK))?;
    if subscriber.status != status {
        db::subscribers::set_by_link(tx.conn(), subscriber.id, status).await?;
    }
    tx.commit().await?;
    Ok(subscriber.email)
}

/// Queues one email per subscribed address about a post, once per post: a
/// second call answers what the first queued.
pub(crate) async fn notify(
    ctx: Context<'_>,
    public_url: &str,
    slug: &Slug,
) -> Result<NotifyResult, Failure> {
    let mut tx = ctx.db.begin_write().await?;
    tx.changes_nothing_cached();
    let post = db::content::post(tx.conn(), slug)
        .await?
        .ok_or_else(|| Failure::not_found(format!("no post {:?}", slug.as_str())))?;
    let begun_before = db::notifications::progress(tx.conn(), slug).await?;
    if let Some(done) = begun_before.filter(|progress| progress.resume_after.is_none()) {
        return Ok(NotifyResult {
            post_slug: slug.to_string(),
            queued: done.queued,
            already_notified: true,
        });
    }
    db::notifications::begin(tx.conn(), slug).await?;
    let from = ctx.letterhead(tx.conn()).await?;
    tx.commit().await?;

    let url = format!("{public_url}/api/posts/{slug}");
    let notice = templates::PostNotice {
        title: &post.title,
        summary: &post.summary,
        url: &url,
    };
    // A chunk of subscribers a transaction: the server holds one chunk of
    // them and their emails however many there are, other writers wait for
    // one chunk at most, and the worker sends the first emails while the
    // last are queued. A call that finds the notification under way (begun
    // by another, or by one a restart cut short) takes its next chunks.
    let mut queued_here = 0;
    loop {
        let mut tx = ctx.db.begin_write().await?;
        tx.changes_nothing_cached();
        let progress = db::notifications::hold(tx.conn(), slug)
            .await?
            .ok_or_else(|| Failure::fault("notify", "the notification's record is gone"))?;
        let Some(after) = progress.resume_after else {
            return Ok(NotifyResult {
                post_slug: slug.to_string(),
                queued: progress.queued,
                already_notified: begun_before.is_some() && queued_here == 0,
            });
        };
        let chunk = i64::try_from(outbox::EMAILS_PER_STATEMENT).unwrap_or(i64::MAX);
        let subscribers = db::subscribers::subscribed_after(tx.conn(), after, chunk).await?;
        let emails = subscribers
            .iter()
            .map(|subscriber| {
                templates::new_post(
                    &from,
                    notice,
                    &subscriber.email,
                    &subscriber.unsubscribe_token,
                )
            })
            .collect::<Result<Vec<_>, _>>()?;
        outbox::enqueue_all(tx.conn(), &emails).await?;
        let next = db::notifications::Progress {
            queued: progress.queued + i64::try_from(emails.len()).unwrap_or(i64::MAX),
            // An empty chunk: every subscriber has the email.
            resume_after: subscribers.last().map(|last| last.id),
        };
        db::notifications::advance(tx.conn(), slug, next).await?;
        tx.commit().await?;
        if !emails.is_empty() {
            queued_here += emails.len();
            ctx.mail_queued();
        }
    }
}

/// Erases subscriber `id` and every email still waiting for its address.
pub(crate) async fn erase_subscriber(ctx: Context<'_>, id: i64) -> Result<(), Failure> {
    let mut tx = ctx.db.begin_write().await?;
    tx.changes_nothing_cached();
    let Some(email) = db::subscribers::erase(tx.conn(), id).await? else {
        return Err(Failure::not_found(format!("no subscriber {id}")));
    };
    outbox::forget_recipient(tx.conn(), &email).await?;
    tx.commit().await?;
    Ok(())
}
