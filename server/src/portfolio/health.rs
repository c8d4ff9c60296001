//! Health checks.

use axum::extract::State;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::PortfolioState;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Liveness {
    Ok,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Health {
    #[schema(inline)]
    pub status: Liveness,
    pub version: String,
    #[schema(minimum = 0)]
    pub uptime_seconds: i64,
}

/// Liveness.
#[utoipa::path(
    get,
    path = "/api/health",
    operation_id = "getHealth",
    tag = "health",
    responses((status = 200, description = "The server is alive", body = Health)),
)]
pub async fn get_health(State(state): State<PortfolioState>) -> axum::Json<Health> {
    axum::Json(Health {
        status: Liveness::Ok,
        version: env!("CARGO_PKG_VERSION").to_owned(),
        uptime_seconds: i64::try_from(state.started.elapsed().as_secs()).unwrap_or(i64::MAX),
    })
}
