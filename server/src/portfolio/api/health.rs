//! Health checks.

use axum::extract::State;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::http::error::{Error, ErrorCode};
use crate::portfolio::api::auth::AdminView;
use crate::portfolio::state::PortfolioState;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Liveness {
    Ok,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub(crate) struct Health {
    #[schema(inline)]
    pub(crate) status: Liveness,
    pub(crate) version: String,
    #[schema(minimum = 0)]
    pub(crate) uptime_seconds: i64,
}

/// Liveness.
#[utoipa::path(
    get, path = "/api/health",
    tag = "health",
    responses((status = 200, description = "The server is alive", body = Health)),
)]
pub(crate) async fn get_health(State(state): State<PortfolioState>) -> axum::Json<Health> {
    axum::Json(Health {
        status: Liveness::Ok,
        version: env!("CARGO_PKG_VERSION").to_owned(),
        uptime_seconds: i64::try_from(state.started.elapsed().as_secs()).unwrap_or(i64::MAX),
    })
}

/// How long the oldest due email may wait before the service reports not ready.
const MAX_OUTBOX_DELAY_SECS: i64 = 15 * 60;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub(crate) struct Readiness {
    #[schema(inline)]
    pub(crate) status: ReadyStatus,
    pub(crate) checks: ReadinessChecks,
}

/// `degraded`: the service works, but some emails failed for good.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ReadyStatus {
    Ready,
    Degraded,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub(crate) struct ReadinessChecks {
    pub(crate) database: Check,
    pub(crate) mail: Check,
    pub(crate) outbox: OutboxCheck,
    /// Where the rate limits are counted; not ok when Redis is configured
    /// and does not answer (the server is then `degraded`, not unready:
    /// it answers, and counts in the process meanwhile).
    pub(crate) rate_limits: Check,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub(crate) struct Check {
    pub(crate) ok: bool,
    pub(crate) detail: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub(crate) struct OutboxCheck {
    pub(crate) ok: bool,
    pub(crate) detail: String,
    /// Emails waiting for delivery.
    #[schema(minimum = 0)]
    pub(crate) pending: i64,
    /// Emails given up on (see the server log for why).
    #[schema(minimum = 0)]
    pub(crate) failed: i64,
    /// How long the oldest due email has waited.
    #[schema(minimum = 0)]
    pub(crate) oldest_due_seconds: i64,
}

impl ReadinessChecks {
    /// What anyone may read: whether each check is ok, and the outbox's
    /// counts; not the details (folders, hosts, Redis's address, errors),
    /// which go to an admin credential only.
    fn hide_details(&mut self) {
        let say = |ok: bool| {
            if ok {
                "ok".to_owned()
            } else {
                "failing; an admin credential is shown why".to_owned()
            }
        };
        self.database.detail = say(self.database.ok);
        self.mail.detail = say(self.mail.ok);
        self.outbox.detail = say(self.outbox.ok && self.outbox.failed == 0);
        self.rate_limits.detail = say(self.rate_limits.ok);
    }
}

/// What readiness says of the outbox.
fn outbox_detail(health: &crate::mail::MailHealth) -> String {
    let waiting = if health.oldest_due_secs > MAX_OUTBOX_DELAY_SECS {
        format!(
            "falling behind: the oldest due email has waited {} s; ",
            health.oldest_due_secs
        )
    } else {
        String::new()
    };
    if health.failed > 0 {
        format!(
            "{waiting}degraded: {} email(s) failed for good; `petstore-portfolio outbox list --failed` \
             shows why, `petstore-portfolio outbox requeue` sends them again",
            health.failed
        )
    } else {
        format!("{waiting}{} email(s) waiting", health.pending)
    }
}

/// Readiness: the database answers, email can leave, and the outbox is not
/// falling behind. Emails that failed for good make it `degraded`, not
/// unready: everything else still works. The details of each check are
/// shown to an admin credential only. Not ready is 503, and
/// `details.checks` says what is wrong.
#[utoipa::path(
    get, path = "/api/health/ready",
    tag = "health",
    responses(
        (status = 200, description = "Ready", body = Readiness),
    ),
)]
pub(crate) async fn get_readiness(
    State(state): State<PortfolioState>,
    AdminView(operator): AdminView,
) -> Result<axum::Json<Readiness>, Error> {
    if state.draining.is_on() {
        return Err(Error::new(
            ErrorCode::ServiceUnavailable,
            "shutting down: this replica is draining; send requests to another",
        )
        .with_detail("draining", true));
    }
    let database = match state.db.ping().await {
        Ok(_) => Check {
            ok: true,
            detail: "answers".to_owned(),
        },
        Err(e) => Check {
            ok: false,
            detail: format!("does not answer: {e}"),
        },
    };
    let (mail, outbox) = match state.mailer.health().await {
        Ok(health) => (
            Check {
                ok: health.transport_ok,
                detail: health.transport_detail.clone(),
            },
            OutboxCheck {
                ok: health.oldest_due_secs <= MAX_OUTBOX_DELAY_SECS,
                detail: outbox_detail(&health),
                pending: health.pending,
                failed: health.failed,
                oldest_due_seconds: health.oldest_due_secs,
            },
        ),
        Err(e) => (
            Check {
                ok: false,
                detail: format!("cannot read the outbox: {e}"),
            },
            OutboxCheck {
                ok: false,
                detail: "cannot read the outbox".to_owned(),
                pending: 0,
                failed: 0,
                oldest_due_seconds: 0,
            },
        ),
    };
    let rate_limits = match &state.shared_counters {
        None => Check {
            ok: true,
            detail: "counted in this process (no Redis configured)".to_owned(),
        },
        Some(shared) => match shared.ping().await {
            None => Check {
                ok: true,
                detail: format!("shared by the replicas in Redis at {}", shared.url()),
            },
            Some(problem) => Check {
                ok: false,
                detail: format!(
                    "Redis at {} does not answer ({problem}): requests are still answered, and \
                     the limits are counted in this process until it answers",
                    shared.url()
                ),
            },
        },
    };
    let mut checks = ReadinessChecks {
        database,
        mail,
        outbox,
        rate_limits,
    };
    if !operator {
        checks.hide_details();
    }
    if checks.database.ok && checks.mail.ok && checks.outbox.ok {
        let status = if checks.outbox.failed > 0 || !checks.rate_limits.ok {
            ReadyStatus::Degraded
        } else {
            ReadyStatus::Ready
        };
        Ok(axum::Json(Readiness { status, checks }))
    } else {
        let details = serde_json::to_value(&checks).unwrap_or_default();
        Err(Error::new(
            ErrorCode::ServiceUnavailable,
            "not ready; details.checks says what is wrong",
        )
        .with_detail("checks", details))
    }
}
