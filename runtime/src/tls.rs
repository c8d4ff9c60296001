//! HTTPS for the client, by the backend its features choose: rustls with
//! ring (the default) or aws-lc-rs, or the platform's TLS (`native-tls`).
//!
//! With rustls the client gets a TLS configuration of its own, with its
//! crypto provider and the system's root certificates (through
//! `rustls-platform-verifier`) plus any the builder adds: nothing is
//! installed process-wide, so a program that chose another provider keeps
//! it.

use crate::error::BuildError;

/// Sets up `http` to trust the system's roots and `roots` (PEM bundles).
#[cfg(any(feature = "rustls-ring", feature = "rustls-aws-lc-rs"))]
pub(crate) fn configure(
    http: reqwest::ClientBuilder,
    roots: &[Vec<u8>],
) -> Result<reqwest::ClientBuilder, BuildError> {
    use std::sync::Arc;

    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject as _;

    #[cfg(feature = "rustls-ring")]
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    #[cfg(all(feature = "rustls-aws-lc-rs", not(feature = "rustls-ring")))]
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());

    let mut extra: Vec<CertificateDer<'static>> = Vec::new();
    for pem in roots {
        let before = extra.len();
        for certificate in CertificateDer::pem_slice_iter(pem) {
            extra.push(certificate.map_err(|e| BuildError::Certificate(e.to_string()))?);
        }
        if extra.len() == before {
            return Err(BuildError::Certificate(
                "no BEGIN CERTIFICATE block".to_owned(),
            ));
        }
    }
    let tls = |e: rustls::Error| BuildError::Tls(e.to_string());
    let verifier =
        rustls_platform_verifier::Verifier::new_with_extra_roots(extra, provider.clone())
            .map_err(tls)?;
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(tls)?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    // HTTP/2 where the server offers it, else HTTP/1.1.
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(http.tls_backend_preconfigured(config))
}

/// Sets up `http` to trust the system's roots and `roots` (PEM bundles).
#[cfg(all(
    feature = "native-tls",
    not(any(feature = "rustls-ring", feature = "rustls-aws-lc-rs"))
))]
pub(crate) fn configure(
    mut http: reqwest::ClientBuilder,
    roots: &[Vec<u8>],
) -> Result<reqwest::ClientBuilder, BuildError> {
    for pem in roots {
        let certificates = reqwest::Certificate::from_pem_bundle(pem)
            .map_err(|e| BuildError::Certificate(e.to_string()))?;
        if certificates.is_empty() {
            return Err(BuildError::Certificate(
                "no BEGIN CERTIFICATE block".to_owned(),
            ));
        }
        for certificate in certificates {
            http = http.add_root_certificate(certificate);
        }
    }
    Ok(http)
}

/// Without a TLS backend the client speaks plain HTTP only.
#[cfg(not(any(
    feature = "rustls-ring",
    feature = "rustls-aws-lc-rs",
    feature = "native-tls"
)))]
pub(crate) fn configure(
    http: reqwest::ClientBuilder,
    roots: &[Vec<u8>],
) -> Result<reqwest::ClientBuilder, BuildError> {
    if roots.is_empty() {
        Ok(http)
    } else {
        Err(BuildError::Tls(
            "this build has no TLS backend: enable the feature rustls-ring, rustls-aws-lc-rs or native-tls"
                .to_owned(),
        ))
    }
}
