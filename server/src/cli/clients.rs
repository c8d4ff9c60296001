//! `clients create | list | revoke`: the OAuth clients that get bearer
//! tokens from `POST /api/oauth/token`. A new client's secret is printed
//! once; a revoked client's tokens stop working (within a second on a
//! running server).

use clap::Subcommand;

use crate::access::ops::{self, Actor, Context, oauth_clients};
use crate::access::tokens::OAuthClient;
use crate::config::{Config, Scope};
use crate::core::clock::timestamp;

#[derive(Debug, Subcommand)]
pub enum ClientsCommand {
    /// Register a client; its secret is printed once.
    Create {
        /// Who the client is.
        #[arg(long)]
        name: String,
        /// The most its tokens may carry (repeat for several).
        #[arg(long = "scope")]
        scopes: Vec<Scope>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// List the clients, newest first (never their secrets).
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Revoke a client: its tokens stop working, and it gets no more.
    Revoke {
        client_id: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

pub async fn run(config: &Config, command: ClientsCommand) -> anyhow::Result<()> {
    let db = crate::app::open_database(config).await?;
    let ctx = Context::offline(&db);
    match command {
        ClientsCommand::Create { name, scopes, json } => {
            // The same shape as createOauthClient's answer.
            let shown = oauth_clients::register(ctx, Actor::Operator, &name, scopes).await?;
            let client = &shown.client;
            super::print(json, &shown, || {
                vec![
                    format!("client_id: {}", client.client_id),
                    format!("client_secret: {}", shown.client_secret),
                    format!("name: {}", client.name),
                    format!("scopes: {}", Scope::join(&client.scopes)),
                    "The secret is shown once: keep it now.".to_owned(),
                ]
            })
        }
        ClientsCommand::List { json } => {
            let clients: Vec<OAuthClient> = ops::list_clients(ctx).await?;
            super::print(json, &clients, || {
                if clients.is_empty() {
                    return vec!["no clients".to_owned()];
                }
                clients
                    .iter()
                    .map(|c| {
                        let state = c.revoked_at.map_or_else(
                            || "in force".to_owned(),
                            |at| format!("revoked {}", timestamp(at)),
                        );
                        format!(
                            "{}\t{}\t{}\t{state}",
                            c.client_id,
                            c.name,
                            Scope::join(&c.scopes)
                        )
                    })
                    .collect()
            })
        }
        ClientsCommand::Revoke { client_id, json } => {
            oauth_clients::revoke(ctx, Actor::Operator, &client_id).await?;
            super::print(json, &serde_json::json!({"revoked": client_id}), || {
                vec![format!(
                    "revoked client {client_id}; its tokens stop working"
                )]
            })
        }
    }
}
