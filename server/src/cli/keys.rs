//! `keys create | list | rotate | revoke`: API keys for either service. A
//! new key is printed once; only a hash of it is kept. A running server
//! takes the change within a second.

use chrono::Utc;
use clap::Subcommand;

use crate::access::Service;
use crate::access::keys::{ApiKey, NewKey};
use crate::access::ops::api_keys::{self, DEFAULT_OLD_KEY_HOURS, IssuedApiKey};
use crate::access::ops::{self, Actor, Context};
use crate::config::{Config, Scope};
use crate::core::clock::timestamp;

/// How long a rotated key keeps working, unless told.
#[derive(Debug, Subcommand)]
pub enum KeysCommand {
    /// Make a key; it is printed once.
    Create {
        /// Who the key is for (shown in analytics).
        #[arg(long)]
        name: String,
        /// What it may do (portfolio keys; repeat for several).
        #[arg(long = "scope")]
        scopes: Vec<Scope>,
        /// The service it opens.
        #[arg(long, value_enum, default_value = "portfolio")]
        service: Service,
        /// It stops working after this many days (default: never).
        #[arg(long)]
        expires_in_days: Option<u32>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// List the keys, newest first (never their secrets).
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Replace a key with a new one (printed once); the old one keeps
    /// working for a while, so that its user can switch.
    Rotate {
        id: String,
        /// How long the old key keeps working (0: it stops now).
        #[arg(long, default_value_t = DEFAULT_OLD_KEY_HOURS)]
        old_key_valid_for_hours: u32,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Revoke a key: it stops working.
    Revoke {
        id: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

pub async fn run(config: &Config, command: KeysCommand) -> anyhow::Result<()> {
    let db = crate::app::open_database(config).await?;
    let ctx = Context::offline(&db);
    match command {
        KeysCommand::Create {
            name,
            scopes,
            service,
            expires_in_days,
            json,
        } => {
            let new = NewKey {
                service,
                name,
                scopes,
                expires_in_days,
            };
            // The same shape as createApiKey's answer.
            let issued = IssuedApiKey::from(api_keys::create(ctx, Actor::Operator, &new).await?);
            super::print(json, &issued, || {
                let mut lines = describe(&issued.api_key);
                lines.push(format!("key: {}", issued.key));
                lines.push("This key is shown once: keep it now.".to_owned());
                lines
            })
        }
        KeysCommand::List { json } => {
            let keys: Vec<ApiKey> = ops::list_keys(ctx, None).await?;
            let configured = &config.portfolio.api_keys;
            // Each entry says where the key is defined: the database's can
            // be rotated and revoked here, the file's only in the file.
            let mut listed = Vec::with_capacity(keys.len() + configured.len());
            for key in &keys {
                let mut entry = serde_json::to_value(key)?;
                if let Some(fields) = entry.as_object_mut() {
                    fields.insert("source".into(), "database".into());
                }
                listed.push(entry);
            }
            for key in configured {
                listed.push(serde_json::json!({
                    "service": Service::Portfolio.as_str(),
                    "name": key.name,
                    "scopes": key.scopes,
                    "source": "configuration",
                }));
            }
            super::print(json, &listed, || {
                if listed.is_empty() {
                    return vec!["no keys".into()];
                }
                keys.iter()
                    .map(one_line)
                    .chain(configured.iter().map(|key| {
                        format!(
                            "(configuration file)\t{}\t{}\t{}\tin force\t-",
                            Service::Portfolio.as_str(),
                            key.name,
                            if key.scopes.is_empty() {
                                "-".to_owned()
                            } else {
                                Scope::join(&key.scopes)
                            }
                        )
                    }))
                    .collect()
            })
        }
        KeysCommand::Rotate {
            id,
            old_key_valid_for_hours,
            json,
        } => {
            // The same shape as rotateApiKey's answer.
            let rotated =
                api_keys::rotate(ctx, Actor::Operator, &id, old_key_valid_for_hours).await?;
            super::print(json, &rotated, || {
                let mut lines = vec![format!(
                    "key {} works until {}; its replacement:",
                    rotated.replaced,
                    timestamp(rotated.old_key_valid_until)
                )];
                lines.extend(describe(&rotated.new.api_key));
                lines.push(format!("key: {}", rotated.new.key));
                lines.push("This key is shown once: keep it now.".to_owned());
                lines
            })
        }
        KeysCommand::Revoke { id, json } => {
            api_keys::revoke(ctx, Actor::Operator, &id).await?;
            super::print(json, &serde_json::json!({"revoked": id}), || {
                vec![format!("revoked key {id}")]
            })
        }
    }
}

fn scopes_text(key: &ApiKey) -> String {
    if key.scopes.is_empty() {
        return "-".to_owned();
    }
    Scope::join(&key.scopes)
}

pub(crate) fn describe(key: &ApiKey) -> Vec<String> {
    vec![
        format!("id: {}", key.id),
        format!("service: {}", key.service.as_str()),
        format!("name: {}", key.name),
        format!("scopes: {}", scopes_text(key)),
        format!(
            "expires: {}",
            key.expires_at.map_or_else(|| "never".to_owned(), timestamp)
        ),
    ]
}

fn one_line(key: &ApiKey) -> String {
    let state = if key.revoked_at.is_some() {
        "revoked".to_owned()
    } else if !key.in_force(Utc::now()) {
        "expired".to_owned()
    } else if let Some(at) = key.expires_at {
        format!("until {}", timestamp(at))
    } else {
        "in force".to_owned()
    };
    let used = key.last_used_at.map_or_else(
        || "never used".to_owned(),
        |at| format!("used {}", timestamp(at)),
    );
    format!(
        "{}\t{}\t{}\t{}\t{state}\t{used}",
        key.id,
        key.service.as_str(),
        key.name,
        scopes_text(key)
    )
}
