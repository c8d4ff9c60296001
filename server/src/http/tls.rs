//! HTTPS: the server's certificate and key (PEM) as a rustls configuration
//! that offers HTTP/2 and HTTP/1.1 by ALPN.

use std::path::Path;
use std::sync::{Arc, RwLock};

use anyhow::Context as _;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use tokio_rustls::TlsAcceptor;

/// How long browsers are told to use HTTPS only (`Strict-Transport-Security`).
pub(crate) const HSTS: &str = "max-age=31536000";

/// The certificate the server presents, replaceable while it serves
/// (SIGHUP): each handshake takes the one in place when it starts.
#[derive(Debug, Clone)]
pub(crate) struct Certificates {
    current: Arc<RwLock<Arc<CertifiedKey>>>,
}

impl Certificates {
    /// Reads `cert` and `key` again and, if they make a certificate and
    /// its key, presents them from the next handshake on; otherwise the
    /// one in place stays. Returns what is now presented.
    pub(crate) fn reload(&self, cert: &Path, key: &Path) -> anyhow::Result<Presented> {
        let loaded = Arc::new(certified_key(cert, key)?);
        let presented = Presented::of(&loaded);
        let mut current = self
            .current
            .write()
            .map_err(|_| anyhow::anyhow!("the certificate's lock is poisoned"))?;
        *current = loaded;
        Ok(presented)
    }
}

impl ResolvesServerCert for Certificates {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        self.current.read().ok().map(|current| current.clone())
    }
}

/// What a certificate says of itself, for the logs.
#[derive(Debug, Clone)]
pub(crate) struct Presented {
    pub(crate) subject: String,
    pub(crate) not_after: String,
}

impl Presented {
    fn of(key: &CertifiedKey) -> Self {
        key.cert
            .first()
            .and_then(|der| x509_parser::parse_x509_certificate(der).ok())
            .map_or_else(
                || Presented {
                    subject: "?".to_owned(),
                    not_after: "?".to_owned(),
                },
                |(_, cert)| Presented {
                    subject: cert.subject().to_string(),
                    not_after: cert.validity().not_after.to_string(),
                },
            )
    }
}

/// The chain in `cert` and the key in `key`, checked to belong together.
fn certified_key(cert: &Path, key: &Path) -> anyhow::Result<CertifiedKey> {
    let chain = CertificateDer::pem_file_iter(cert)
        .with_context(|| format!("cannot read the certificate {}", cert.display()))?
        .collect::<Result<Vec<_>, _>>()
        .with_context(|| format!("{} holds no valid PEM certificate", cert.display()))?;
    anyhow::ensure!(
        !chain.is_empty(),
        "{} holds no certificate (PEM, BEGIN CERTIFICATE)",
        cert.display()
    );
    let key_der = PrivateKeyDer::from_pem_file(key)
        .with_context(|| format!("cannot read a private key (PEM) from {}", key.display()))?;
    let signing_key = rustls::crypto::ring::default_provider()
        .key_provider
        .load_private_key(key_der)
        .with_context(|| format!("{} is not a private key rustls can use", key.display()))?;
    let certified = CertifiedKey::new(chain, signing_key);
    certified
        .keys_match()
        .context("the certificate and the key do not make a TLS configuration")?;
    Ok(certified)
}

/// A TLS acceptor for the certificate chain in `cert` and the key in
/// `key`, and the handle that replaces them.
pub(crate) fn acceptor(cert: &Path, key: &Path) -> anyhow::Result<(TlsAcceptor, Certificates)> {
    // rustls takes its crypto from the process-wide provider (ring, as for
    // the outgoing connections). A second install fails harmlessly.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let certificates = Certificates {
        current: Arc::new(RwLock::new(Arc::new(certified_key(cert, key)?))),
    };
    let mut config = rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_cert_resolver(Arc::new(certificates.clone()));
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok((TlsAcceptor::from(Arc::new(config)), certificates))
}
