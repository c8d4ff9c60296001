//! The client builder, through the public API: what it refuses and why,
//! what it shows of credentials, what it reads from the environment, and
//! what it leaves of the process's TLS set-up.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use petstore_portfolio_client::petstore::BuildError;
use petstore_portfolio_client::{petstore, portfolio};

#[test]
fn debug_output_names_credentials_but_never_shows_them() {
    let petstore = petstore::ClientBuilder::new("http://127.0.0.1:1")
        .api_key("s3cret-key")
        .bearer_token("s3cret-token");
    let portfolio = portfolio::ClientBuilder::new("http://127.0.0.1:1").api_key("s3cret-key");
    let printed = format!("{petstore:?} {portfolio:?}");
    assert!(!printed.contains("s3cret"), "{printed}");
    assert!(printed.contains("api_key: ***"), "{printed}");
    let clients = format!(
        "{:?} {:?}",
        petstore.build().unwrap(),
        portfolio.build().unwrap()
    );
    assert!(!clients.contains("s3cret"), "{clients}");
}

#[test]
fn a_url_without_an_http_scheme_is_refused_with_a_reason() {
    let error = petstore::ClientBuilder::new("127.0.0.1:8080")
        .build()
        .err()
        .map(|e| e.to_string());
    assert!(
        error
            .as_deref()
            .is_some_and(|e| e.contains("http://") && e.contains("https://")),
        "{error:?}"
    );
    assert!(
        petstore::ClientBuilder::new("https://pets.example")
            .build()
            .is_ok()
    );
}

#[test]
fn a_root_certificate_that_is_not_pem_is_refused() {
    let built = portfolio::ClientBuilder::new("https://portfolio.example")
        .add_root_certificate(b"not a certificate".to_vec())
        .build();
    assert!(matches!(built, Err(BuildError::Certificate(_))));
}

/// The variables `from_env` reads; each case starts without them.
const VARIABLES: [&str; 9] = [
    "PETSTORE_PORTFOLIO_URL",
    "PETSTORE_API_KEY",
    "PETSTORE_BEARER_TOKEN",
    "PETSTORE_USERNAME",
    "PETSTORE_PASSWORD",
    "PORTFOLIO_API_KEY",
    "PORTFOLIO_BEARER_TOKEN",
    "PORTFOLIO_CLIENT_ID",
    "PORTFOLIO_CLIENT_SECRET",
];

/// Runs in a child process (the environment is the process's own):
/// prints what `from_env` made of it.
#[test]
fn from_env_child() {
    let Ok(service) = std::env::var("FROM_ENV_SERVICE") else {
        return;
    };
    let made = match service.as_str() {
        "petstore" => petstore::ClientBuilder::from_env().map(|b| format!("{b:?}")),
        _ => portfolio::ClientBuilder::from_env().map(|b| format!("{b:?}")),
    };
    match made {
        Ok(builder) => println!("FROM_ENV OK {builder}"),
        Err(error) => println!("FROM_ENV ERR {error}"),
    }
}

fn from_env(service: &str, variables: &[(&str, &str)]) -> String {
    let mut child = std::process::Command::new(std::env::current_exe().unwrap());
    child.args(["from_env_child", "--exact", "--nocapture"]);
    for name in VARIABLES {
        child.env_remove(name);
    }
    child
        .env("FROM_ENV_SERVICE", service)
        .envs(variables.iter().copied());
    let output = child.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    stdout
        .lines()
        .find_map(|line| line.strip_prefix("FROM_ENV "))
        .unwrap_or_else(|| panic!("the child printed nothing: {stdout}"))
        .to_owned()
}

#[test]
fn from_env_reads_the_server_and_credentials_and_names_what_is_missing() {
    let missing = from_env("petstore", &[]);
    assert_eq!(
        missing,
        "ERR the environment variable PETSTORE_PORTFOLIO_URL is not set"
    );
    let url = ("PETSTORE_PORTFOLIO_URL", "http://pets.example/v2");
    let keyed = from_env("petstore", &[url, ("PETSTORE_API_KEY", "s3cret")]);
    assert!(keyed.starts_with("OK "), "{keyed}");
    assert!(
        keyed.contains("api_key: ***") && !keyed.contains("s3cret"),
        "{keyed}"
    );
    let half = from_env("petstore", &[url, ("PETSTORE_USERNAME", "user1")]);
    assert_eq!(
        half,
        "ERR the environment variable PETSTORE_PASSWORD is not set"
    );
    let url = ("PETSTORE_PORTFOLIO_URL", "https://site.example/api/");
    let half = from_env("portfolio", &[url, ("PORTFOLIO_CLIENT_ID", "pc_1")]);
    assert_eq!(
        half,
        "ERR the environment variable PORTFOLIO_CLIENT_SECRET is not set"
    );
    let both = from_env(
        "portfolio",
        &[
            url,
            ("PORTFOLIO_CLIENT_ID", "pc_1"),
            ("PORTFOLIO_CLIENT_SECRET", "s3cret"),
        ],
    );
    assert!(both.contains("pc_1") && !both.contains("s3cret"), "{both}");
}

/// A client is built with a TLS configuration of its own: nothing is
/// installed process-wide, so a program that chose another provider keeps it.
#[cfg(feature = "rustls-ring")]
#[test]
fn building_a_client_installs_no_process_wide_crypto_provider() {
    let built = petstore::ClientBuilder::new("https://pets.example").build();
    assert!(built.is_ok());
    assert!(rustls::crypto::CryptoProvider::get_default().is_none());
}
