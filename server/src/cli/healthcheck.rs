//! `healthcheck`: asks the server running beside it (the same
//! configuration) whether it is ready, for a container's `HEALTHCHECK`,
//! where no curl need be installed.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use anyhow::Context as _;

use crate::config::Config;

pub async fn run(config: &Config) -> anyhow::Result<()> {
    // Bound to every address: ask on loopback.
    let address = match config.bind.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => {
            SocketAddr::new(Ipv4Addr::LOCALHOST.into(), config.bind.port())
        }
        IpAddr::V6(ip) if ip.is_unspecified() => {
            SocketAddr::new(Ipv6Addr::LOCALHOST.into(), config.bind.port())
        }
        _ => config.bind,
    };
    let tls = config.tls_cert.is_some();
    let scheme = if tls { "https" } else { "http" };
    let url = format!("{scheme}://{address}/api/health/ready");
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        // The server's own certificate, named for its public host, not
        // for loopback: this asks itself, not a stranger.
        .tls_danger_accept_invalid_certs(tls)
        .build()
        .context("cannot make an HTTP client")?;
    let response = client
        .get(&url)
        .send()
        .await
        .with_context(|| format!("{url} does not answer"))?;
    anyhow::ensure!(
        response.status().is_success(),
        "{url} answers {}",
        response.status()
    );
    println!("ready: {url}");
    Ok(())
}
