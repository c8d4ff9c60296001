//! Requests for API keys: anyone asks ([`submit`]); the operator approves
//! one, choosing the scopes (a key is made and emailed to the technical
//! contact through the outbox), or rejects it. The handlers and the CLI's
//! `key-requests` both come here.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::Context;
use crate::access::keys::{self, ApiKey, IssuedKey, NewKey};
use crate::access::ops::Actor;
use crate::access::{Service, db as access_db};
use crate::config::{KeyRequestsConfig, Scope};
use crate::core::clock::timestamp;
use crate::core::failure::Failure;
use crate::core::secret;
use crate::limits::Limiter;
use crate::mail::{outbox, templates};
use crate::portfolio::db;
use crate::portfolio::db::key_requests::OwnerNotice;
use crate::portfolio::model::fields::Fields;
use crate::portfolio::model::{KeyRequest, KeyRequestStatus};

/// The scopes of an approved request's key, unless the operator chooses:
/// what an integrator of the site asks for most (its context, its contact
/// form).
pub(crate) const DEFAULT_SCOPES: [Scope; 2] = [Scope::ContextRead, Scope::ContactWrite];

/// What the seed asks of someone who wants a key.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub(crate) struct KeyRequestForm {
    /// Who asks.
    #[schema(required = true, min_length = 1, max_length = 100)]
    pub(crate) name: Option<String>,
    #[schema(required = true, min_length = 1, max_length = 200)]
    pub(crate) organisation: Option<String>,
    /// What the key is for.
    #[schema(required = true, min_length = 1, max_length = 2000)]
    pub(crate) intended_use: Option<String>,
    /// How many requests, roughly, and how often.
    #[schema(required = true, min_length = 1, max_length = 200)]
    pub(crate) expected_volume: Option<String>,
    /// The address the key is sent to once approved.
    #[schema(required = true, format = Email, max_length = 254)]
    pub(crate) technical_contact: Option<String>,
}

/// How to approve a request.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
pub(crate) struct Approval {
    /// The key's scopes, at least one; default `context:read` and
    /// `contact:write`.
    #[schema(min_items = 1)]
    pub(crate) scopes: Option<Vec<Scope>>,
    /// It stops working after this many days (default: never).
    #[schema(minimum = 1, maximum = 3650)]
    pub(crate) expires_in_days: Option<u32>,
}

impl Approval {
    /// The scopes the key will have.
    pub(crate) fn scopes(&self) -> Vec<Scope> {
        self.scopes
            .clone()
            .unwrap_or_else(|| DEFAULT_SCOPES.to_vec())
    }
}

/// An approved request and its key, shown this once.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub(crate) struct ApprovedKeyRequest {
    pub(crate) request: KeyRequest,
    pub(crate) api_key: ApiKey,
    /// The key itself (`pk_<id>_<secret>`); it is not kept, and was emailed
    /// to the technical contact.
    pub(crate) key: String,
}

/// Records a request and tells the owner (at most one email a quiet
/// period: this request's own, or a digest then). `caller` says who asks
/// (its address), for the hourly limit and the cap on waiting requests.
pub(crate) async fn submit(
    ctx: Context<'_>,
    form: KeyRequestForm,
    caller: &str,
    hourly: &Limiter,
    owner: &str,
    config: &KeyRequestsConfig,
) -> Result<KeyRequest, Failure> {
    let mut fields = Fields::default();
    let name = fields.text("name", form.name.as_deref(), true, 100);
    let organisation = fields.text("organisation", form.organisation.as_deref(), true, 200);
    let intended_use = fields.text("intended_use", form.intended_use.as_deref(), true, 2000);
    let expected_volume = fields.text(
        "expected_volume",
        form.expected_volume.as_deref(),
        true,
        200,
    );
    let technical_contact =
        fields.email("technical_contact", form.technical_contact.as_deref(), true);
    fields.check()?;

    let now = crate::core::clock::now();
    let quota = hourly
        .hit(caller, config.per_address_per_hour, now.timestamp())
        .await;
    if !quota.allowed {
        crate::telemetry::metrics::rate_limited(crate::telemetry::metrics::Limit::KeyRequests);
        let retry_after = u64::try_from((quota.reset_at - now.timestamp()).max(1)).unwrap_or(1);
        return Err(Failure::Busy {
            message: format!(
                "at most {} key requests an hour from one address; retry in {retry_after} s",
                config.per_address_per_hour
            )
            .into(),
            per_caller: true,
            retry_after,
        });
    }
    // Who asked, for the per-address cap: a hash, never the address.
    let requester = &secret::sha256_hex(&format!("key-request:{caller}"));
    let (pending, pending_here) = db::key_requests::count_pending(ctx.db, requester).await?;
    if pending_here >= i64::from(config.max_pending_per_address) {
        return Err(Failure::Busy {
            message: format!(
                "{pending_here} requests from this address already wait for the operator; \
                 ask again once they are decided"
            )
            .into(),
            per_caller: true,
            retry_after: 3600,
        });
    }
    if pending >= i64::from(config.max_pending) {
        return Err(Failure::Busy {
            message: "too many requests wait for the operator; try again later".into(),
            per_caller: false,
            retry_after: 3600,
        });
    }
    let request = KeyRequest {
        id: format!("kr_{}", secret::hex_nonce::<8>()),
        name: name.unwrap_or_default(),
        organisation: organisation.unwrap_or_default(),
        intended_use: intended_use.unwrap_or_default(),
        expected_volume: expected_volume.unwrap_or_default(),
        technical_contact: technical_contact.unwrap_or_default(),
        status: KeyRequestStatus::Pending,
        created_at: now,
        decided_at: None,
        key_id: None,
    };
    let quiet_ms = i64::from(config.notify_owner_every_minutes) * 60_000;
    // The request and the owner's notice commit together.
    let mut tx = ctx.db.begin_write().await?;
    tx.changes_nothing_cached();
    db::key_requests::insert(tx.conn(), &request, requester).await?;
    match db::key_requests::owner_notice(tx.conn(), now.timestamp_millis(), quiet_ms).await? {
        OwnerNotice::Now => {
            let notice = templates::KeyRequestNotice {
                id: &request.id,
                name: &request.name,
                organisation: &request.organisation,
                intended_use: &request.intended_use,
                expected_volume: &request.expected_volume,
                technical_contact: &request.technical_contact,
            };
            let email =
                templates::key_request_received(&ctx.letterhead(tx.conn()).await?, owner, notice)?;
            outbox::enqueue(tx.conn(), &email).await?;
        }
        OwnerNotice::FollowUpAt(due) => {
            let email = templates::key_requests_waiting(&ctx.letterhead(tx.conn()).await?, owner)?;
            outbox::enqueue_at(tx.conn(), &email, due).await?;
        }
        OwnerNotice::Covered => {}
    }
    tx.commit().await?;
    ctx.mail_queued();
    Ok(request)
}

/// The request `id`, if it still waits for a decision.
async fn pending(conn: &mut sqlx::AnyConnection, id: &str) -> Result<KeyRequest, Failure> {
    let request = db::key_requests::get(conn, id)
        .await?
        .ok_or_else(|| Failure::not_found(format!("no key request {id:?}")))?;
    if request.status != KeyRequestStatus::Pending {
        return Err(decided_already(&request));
    }
    Ok(request)
}

fn decided_already(request: &KeyRequest) -> Failure {
    Failure::conflict(format!(
        "the request {:?} was {} already",
        request.id,
        request.status.as_str()
    ))
}

/// Approves request `id`: a key with the chosen scopes is made, and
/// emailed to the technical contact, with a link to the documentation
/// (`docs_url`) where it is known.
pub(crate) async fn approve(
    ctx: Context<'_>,
    by: Actor<'_>,
    id: &str,
    approval: &Approval,
    docs_url: Option<&str>,
) -> Result<ApprovedKeyRequest, Failure> {
    let scopes = approval.scopes();
    by.may_grant(&scopes)?;
    let mut tx = ctx.db.begin_write().await?;
    tx.changes_nothing_cached();
    let request = pending(tx.conn(), id).await?;
    let name: String = format!("{} ({})", request.name, request.organisation)
        .chars()
        .take(keys::MAX_NAME_CHARS)
        .collect();
    let new = NewKey {
        service: Service::Portfolio,
        name,
        scopes,
        expires_in_days: approval.expires_in_days,
    };
    let problems = new.problems();
    if !problems.is_empty() {
        return Err(Failure::invalid_fields(problems));
    }
    let now = crate::core::clock::now();
    let issued = keys::issue(
        new.service,
        &new.name,
        new.scopes.clone(),
        new.expires_at(now),
    );
    access_db::insert_key(tx.conn(), &issued.stored).await?;
    let decided = db::key_requests::decide(
        tx.conn(),
        id,
        KeyRequestStatus::Approved,
        Some(&issued.stored.key.id),
        now,
    )
    .await?;
    if !decided {
        // Decided by someone else meanwhile: nothing of this stays.
        return Err(decided_already(&request));
    }
    let expires = issued.stored.key.expires_at.map(timestamp);
    let email = templates::api_key_issued(
        &ctx.letterhead(tx.conn()).await?,
        &request.technical_contact,
        templates::IssuedKeyNotice {
            requester: &request.organisation,
            key: &issued.key,
            scopes: &Scope::join(&new.scopes),
            expires: expires.as_deref(),
            docs_url,
        },
    )?;
    outbox::enqueue(tx.conn(), &email).await?;
    tx.commit().await?;
    remember(ctx, &issued);
    ctx.mail_queued();
    Ok(ApprovedKeyRequest {
        request: KeyRequest {
            status: KeyRequestStatus::Approved,
            decided_at: Some(now),
            key_id: Some(issued.stored.key.id.clone()),
            ..request
        },
        api_key: issued.stored.key,
        key: issued.key,
    })
}

fn remember(ctx: Context<'_>, issued: &IssuedKey) {
    if let Some(access) = ctx.access {
        access.keys.remember(&issued.stored);
    }
}

/// Rejects request `id`; the technical contact is told.
pub(crate) async fn reject(ctx: Context<'_>, id: &str) -> Result<KeyRequest, Failure> {
    let mut tx = ctx.db.begin_write().await?;
    tx.changes_nothing_cached();
    let request = pending(tx.conn(), id).await?;
    let now = crate::core::clock::now();
    if !db::key_requests::decide(tx.conn(), id, KeyRequestStatus::Rejected, None, now).await? {
        return Err(decided_already(&request));
    }
    let email = templates::api_key_declined(
        &ctx.letterhead(tx.conn()).await?,
        &request.technical_contact,
        &request.organisation,
    )?;
    outbox::enqueue(tx.conn(), &email).await?;
    tx.commit().await?;
    ctx.mail_queued();
    Ok(KeyRequest {
        status: KeyRequestStatus::Rejected,
        decided_at: Some(now),
        ..request
    })
}
