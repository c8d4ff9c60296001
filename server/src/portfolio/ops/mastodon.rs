//! The social network, as the portfolio reaches it: a Mastodon-compatible
//! instance's `POST /api/v1/statuses` (bearer token, `Idempotency-Key`).

use secrecy::ExposeSecret as _;
use std::time::Duration;

use serde::Deserialize;

use crate::config::MastodonConfig;
use crate::core::failure::Failure;

/// What a Mastodon instance answers to a new status.
#[derive(Debug, Deserialize)]
pub(crate) struct MastodonStatus {
    pub(crate) id: String,
    pub(crate) url: Option<String>,
}

fn upstream_error(message: &'static str, status: Option<u16>) -> Failure {
    Failure::Upstream { message, status }
}

pub(crate) async fn publish_status(
    client: &reqwest::Client,
    config: &MastodonConfig,
    slug: &str,
    text: &str,
) -> Result<MastodonStatus, Failure> {
    let url = format!(
        "{}/api/v1/statuses",
        config.instance_url.trim_end_matches('/')
    );
    let mut request = client.post(&url);
    // The request's trace goes on to the instance.
    if let Some(trace) = crate::telemetry::trace_context::current() {
        let mut headers = reqwest::header::HeaderMap::new();
        trace.inject(&mut headers);
        request = request.headers(headers);
    }
    let response = request
        .timeout(Duration::from_secs(config.timeout_secs))
        .bearer_auth(config.access_token.expose_secret())
        // The instance answers a repeat of this key with the status it made
        // the first time, so a retry after a lost answer posts nothing twice.
        .header("Idempotency-Key", format!("petstore-portfolio-post-{slug}"))
        .json(&serde_json::json!({"status": text, "visibility": config.visibility}))
        .send()
        .await
        .map_err(|e| {
            tracing::warn!(error = %e, "the social network did not answer");
            upstream_error("the social network did not answer; try again later", None)
        })?;
    let status = response.status();
    if !status.is_success() {
        let message = match status.as_u16() {
            401 | 403 => "the social network refused the access token; the operator must fix it",
            422 => "the social network refused the status",
            _ => "the social network failed; try again later",
        };
        tracing::warn!(
            upstream_status = status.as_u16(),
            "the social network refused a status"
        );
        return Err(upstream_error(message, Some(status.as_u16())));
    }
    response.json::<MastodonStatus>().await.map_err(|_| {
        upstream_error(
            "the social network answered something else than a status",
            Some(status.as_u16()),
        )
    })
}
