//! `outbox list [--failed]` and `outbox requeue [ID...]`: the emails the
//! worker gave up on, why, and another chance for them.

use clap::Subcommand;

use crate::config::Config;
use crate::portfolio::ops::{self, Context};
use crate::portfolio::reads::lists;

/// How many emails `outbox list` shows at most.
const LIST_LIMIT: i64 = 1000;

#[derive(Debug, Subcommand)]
pub enum OutboxCommand {
    /// List the emails of the outbox, newest first.
    List {
        /// Only the emails that failed for good.
        #[arg(long)]
        failed: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Put failed emails back in the queue (these ids, or every failed one):
    /// a running server sends them again.
    Requeue {
        ids: Vec<i64>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

pub async fn run(config: &Config, command: OutboxCommand) -> anyhow::Result<()> {
    let db = crate::app::open_database(config).await?;
    match command {
        OutboxCommand::List { failed, json } => {
            let emails = lists::emails(&db, failed, LIST_LIMIT).await?;
            super::print(json, &emails, || {
                if emails.is_empty() {
                    return vec![if failed {
                        "no failed emails".to_owned()
                    } else {
                        "the outbox is empty".to_owned()
                    }];
                }
                emails
                    .iter()
                    .map(|e| {
                        let error = e.last_error.as_deref().unwrap_or("-");
                        format!(
                            "{}\t{}\t{} attempt(s)\tto {}\t{:?}\t{error}",
                            e.id, e.status, e.attempts, e.recipient, e.subject
                        )
                    })
                    .collect()
            })
        }
        OutboxCommand::Requeue { ids, json } => {
            // The same shape as requeueEmails' answer.
            let answer =
                ops::outbox::requeue(Context::offline(&db, super::public_url(config)), &ids)
                    .await?;
            super::print(json, &answer, || {
                let mut lines = vec![format!("requeued {} email(s)", answer.requeued.len())];
                if !answer.not_failed.is_empty() {
                    lines.push(format!("not failed (left alone): {:?}", answer.not_failed));
                }
                lines
            })
        }
    }
}
