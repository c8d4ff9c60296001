//! The real binary with `--tls-cert` and `--tls-key`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use end_to_end_tests::process::ServerProcess;
use end_to_end_tests::{Db, FreshDatabase, wait_until};

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

/// The certificate the server at `url` presents to a new connection (DER).
async fn presented(url: &str) -> Vec<u8> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::builder()
        .tls_danger_accept_invalid_certs(true)
        .tls_info(true)
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let response = client
        .get(format!("{url}/api/health"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    response
        .extensions()
        .get::<reqwest::tls::TlsInfo>()
        .and_then(|info| info.peer_certificate())
        .map(<[u8]>::to_vec)
        .unwrap()
}

/// A new self-signed certificate and key, written over `cert` and `key`;
/// returns the certificate (DER).
fn write_new_certificate(cert: &str, key: &str) -> Vec<u8> {
    let certified = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
    std::fs::write(cert, certified.cert.pem()).unwrap();
    std::fs::write(key, certified.signing_key.serialize_pem()).unwrap();
    certified.cert.der().to_vec()
}

#[tokio::test]
async fn sighup_swaps_the_certificate_and_the_log_filter_and_the_process_lives() {
    let database = FreshDatabase::create(Db::Sqlite).await;
    let folder = tempfile::tempdir().unwrap();
    let (cert, key) = (
        folder
            .path()
            .join("cert.pem")
            .to_string_lossy()
            .into_owned(),
        folder.path().join("key.pem").to_string_lossy().into_owned(),
    );
    let first = write_new_certificate(&cert, &key);
    let config = folder.path().join("config.toml");
    let config_with_filter = |filter: &str| {
        std::fs::write(
            &config,
            format!("tls_cert = {cert:?}\ntls_key = {key:?}\n[log]\nfilter = {filter:?}\n"),
        )
        .unwrap();
    };
    config_with_filter("info,sqlx=warn");
    let log = folder.path().join("server.log");
    let mut command = Command::new(BINARY);
    command
        .args(["--bind", "127.0.0.1:0", "--database-url", &database.url])
        .arg("--data-dir")
        .arg(database.data_dir())
        .arg("--config")
        .arg(&config)
        .env_remove("RUST_LOG")
        .env("PETSTORE_PORTFOLIO_HTTP__SHUTDOWN_DRAIN_SECS", "0")
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&log).unwrap());
    let mut server = ServerProcess::spawn(command);
    assert_eq!(presented(&server.url).await, first);
    let logged = || std::fs::read_to_string(&log).unwrap_or_default();

    // New files, a new filter, and SIGHUP.
    let second = write_new_certificate(&cert, &key);
    assert_ne!(first, second);
    config_with_filter("info,sqlx=warn,access=off");
    hangup(&server);
    wait_until(
        Duration::from_secs(20),
        "the new certificate is presented",
        async || presented(&server.url).await == second,
    )
    .await;
    wait_until(
        Duration::from_secs(20),
        "the reload is logged",
        async || {
            let logged = logged();
            logged.contains("SIGHUP: certificate loaded")
                && logged.contains("SIGHUP: setting the log filter")
                && logged.contains("access=off")
        },
    )
    .await;
    assert!(
        server.wait_exit(Duration::ZERO).is_none(),
        "SIGHUP stopped the server"
    );

    // A broken file is refused, and the certificate in place stays.
    std::fs::write(&cert, "not a certificate").unwrap();
    hangup(&server);
    wait_until(
        Duration::from_secs(20),
        "the refusal is logged",
        async || logged().contains("SIGHUP: the certificate was not loaded"),
    )
    .await;
    assert_eq!(presented(&server.url).await, second);
    assert!(server.wait_exit(Duration::ZERO).is_none());
    server.terminate();
}

/// `kill -HUP`.
fn hangup(server: &ServerProcess) {
    let sent = Command::new("kill")
        .args(["-HUP", &server.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
}
