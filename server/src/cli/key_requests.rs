//! `key-requests list | approve ID [--scope S...] | reject ID`: the
//! requests people made with `POST /api/key-requests`. An approved
//! request's key is printed once and emailed to its technical contact (a
//! running server's mail worker sends it).

use clap::Subcommand;

use crate::access::ops::Actor;
use crate::config::{Config, Scope};
use crate::core::clock::timestamp;
use crate::http::paths;
use crate::portfolio::model::{KeyRequest, KeyRequestStatus};
use crate::portfolio::ops::Context;
use crate::portfolio::ops::key_requests::{self, Approval};
use crate::portfolio::reads::lists;

/// How many requests `key-requests list` shows at most.
const LIST_LIMIT: i64 = 1000;

#[derive(Debug, Subcommand)]
pub enum KeyRequestsCommand {
    /// List the requests, oldest first.
    List {
        /// Only the requests with this status: pending, approved, rejected.
        #[arg(long, value_parser = parse_status)]
        status: Option<KeyRequestStatus>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Approve a request: its key is printed once and emailed to the
    /// technical contact.
    Approve {
        id: String,
        /// The key's scopes (repeat for several; default context:read and
        /// contact:write).
        #[arg(long = "scope")]
        scopes: Vec<Scope>,
        /// The key stops working after this many days (default: never).
        #[arg(long)]
        expires_in_days: Option<u32>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Reject a request; the technical contact is told.
    Reject {
        id: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

fn parse_status(text: &str) -> Result<KeyRequestStatus, String> {
    KeyRequestStatus::parse(text)
        .ok_or_else(|| format!("unknown status {text:?}: pending, approved or rejected"))
}

pub async fn run(config: &Config, command: KeyRequestsCommand) -> anyhow::Result<()> {
    let db = crate::app::open_database(config).await?;
    let ctx = Context::offline(&db, super::public_url(config));
    match command {
        KeyRequestsCommand::List { status, json } => {
            let window = lists::Window {
                after: None,
                offset: 0,
                limit: LIST_LIMIT,
            };
            let requests = lists::key_requests(&db, status, &window).await?.items;
            super::print(json, &requests, || {
                if requests.is_empty() {
                    return vec!["no key requests".to_owned()];
                }
                requests.iter().map(one_line).collect()
            })
        }
        KeyRequestsCommand::Approve {
            id,
            scopes,
            expires_in_days,
            json,
        } => {
            let approval = Approval {
                scopes: (!scopes.is_empty()).then_some(scopes),
                expires_in_days,
            };
            // The same shape as approveKeyRequest's answer.
            let docs_url = config.public_url.as_deref().map(paths::docs_url);
            let approved =
                key_requests::approve(ctx, Actor::Operator, &id, &approval, docs_url.as_deref())
                    .await?;
            super::print(json, &approved, || {
                let mut lines = vec![format!(
                    "approved {}; its key was queued for {}:",
                    approved.request.id, approved.request.technical_contact
                )];
                lines.extend(super::keys::describe(&approved.api_key));
                lines.push(format!("key: {}", approved.key));
                lines.push("This key is shown once: keep it now.".to_owned());
                lines
            })
        }
        KeyRequestsCommand::Reject { id, json } => {
            let request = key_requests::reject(ctx, &id).await?;
            super::print(json, &request, || {
                vec![format!(
                    "rejected {}; {} will be told",
                    request.id, request.technical_contact
                )]
            })
        }
    }
}

fn one_line(request: &KeyRequest) -> String {
    let decided = request
        .decided_at
        .map_or_else(String::new, |at| format!(" {}", timestamp(at)));
    format!(
        "{}\t{}{decided}\t{} ({})\t{}\t{}\t{:?}",
        request.id,
        request.status.as_str(),
        request.name,
        request.organisation,
        request.technical_contact,
        request.expected_volume,
        request.intended_use
    )
}
