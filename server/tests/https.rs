//! The real binary with `--tls-cert` and `--tls-key`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;

use end_to_end_tests::process::ServerProcess;
use end_to_end_tests::{Db, FreshDatabase};

const BINARY: &str = env!("CARGO_BIN_EXE_petstore-portfolio");

/// A self-signed certificate and its key, as PEM files in `folder`.
fn certificate_files(folder: &Path) -> (String, String) {
    let certified = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
    let (cert, key) = (folder.join("cert.pem"), folder.join("key.pem"));
    std::fs::write(&cert, certified.cert.pem()).unwrap();
    std::fs::write(&key, certified.signing_key.serialize_pem()).unwrap();
    (
        cert.to_string_lossy().into_owned(),
        key.to_string_lossy().into_owned(),
    )
}

#[tokio::test]
async fn with_a_certificate_the_server_says_it_listens_on_https() {
    let database = FreshDatabase::create(Db::Sqlite).await;
    let folder = tempfile::tempdir().unwrap();
    let (cert, key) = certificate_files(folder.path());
    let server = ServerProcess::start(
        Path::new(BINARY),
        &database,
        &["--tls-cert", &cert, "--tls-key", &key],
        &[],
    );
    assert!(
        server.url.starts_with("https://127.0.0.1:"),
        "{}",
        server.url
    );
    assert!(
        server.banner.iter().all(|line| !line.contains("http://")),
        "every printed address is https: {:?}",
        server.banner
    );
    server.terminate();
}

#[tokio::test]
async fn a_certificate_without_its_key_is_refused_at_start_with_a_reason() {
    let database = FreshDatabase::create(Db::Sqlite).await;
    let folder = tempfile::tempdir().unwrap();
    let (cert, _) = certificate_files(folder.path());
    let output = Command::new(BINARY)
        .args(["--bind", "127.0.0.1:0", "--database-url", &database.url])
        .args(["--tls-cert", &cert])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("tls_key"), "{stderr}");
}
