//! `petstore-portfolio console-link`: a link that signs the owner in to the
//! console once, within a few minutes.

use serde::Serialize;

use crate::config::Config;
use crate::portfolio::ops::console::{self, LINK_TTL_MS};

#[derive(Debug, Serialize)]
struct SignInLink {
    url: String,
    expires_in_secs: i64,
}

pub async fn link(config: &Config, json: bool) -> anyhow::Result<()> {
    let db = crate::app::open_database(config).await?;
    let token = console::issue_sign_in_link(&db).await?;
    let link = SignInLink {
        url: format!("{}/console/sign-in?token={token}", server_url(config)),
        expires_in_secs: LINK_TTL_MS / 1000,
    };
    super::print(json, &link, || {
        vec![
            link.url.clone(),
            format!(
                "Open it in a browser: it signs in once, within {} minutes.",
                link.expires_in_secs / 60
            ),
        ]
    })
}

/// Where a browser reaches the server: its public URL, or else its bind
/// address (on this machine when it binds every interface).
fn server_url(config: &Config) -> String {
    if let Some(url) = &config.public_url {
        return url.trim_end_matches('/').to_owned();
    }
    let mut bind = config.bind;
    if bind.ip().is_unspecified() {
        bind.set_ip(std::net::Ipv4Addr::LOCALHOST.into());
    }
    let scheme = if config.tls_cert.is_some() {
        "https"
    } else {
        "http"
    };
    format!("{scheme}://{bind}")
}
