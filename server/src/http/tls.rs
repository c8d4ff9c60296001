//! HTTPS: the server's certificate and key (PEM) as a rustls configuration
//! that offers HTTP/2 and HTTP/1.1 by ALPN.

use std::path::Path;
use std::sync::Arc;

use anyhow::Context as _;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;

/// How long browsers are told to use HTTPS only (`Strict-Transport-Security`).
pub(crate) const HSTS: &str = "max-age=31536000";

/// A TLS acceptor for the certificate chain in `cert` and the key in `key`.
pub(crate) fn acceptor(cert: &Path, key: &Path) -> anyhow::Result<TlsAcceptor> {
    // rustls takes its crypto from the process-wide provider (ring, as for
    // the outgoing connections). A second install fails harmlessly.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let chain = CertificateDer::pem_file_iter(cert)
        .with_context(|| format!("cannot read the certificate {}", cert.display()))?
        .collect::<Result<Vec<_>, _>>()
        .with_context(|| format!("{} holds no valid PEM certificate", cert.display()))?;
    anyhow::ensure!(
        !chain.is_empty(),
        "{} holds no certificate (PEM, BEGIN CERTIFICATE)",
        cert.display()
    );
    let key = PrivateKeyDer::from_pem_file(key)
        .with_context(|| format!("cannot read a private key (PEM) from {}", key.display()))?;
    let mut config = rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .context("the certificate and the key do not make a TLS configuration")?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}
