//! The real binary: the operator CLI on the database of a running server,
//! and what a whole run leaves behind (secrets.rs).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod access;
mod content;
mod keys;
mod outbox;
mod secrets;
mod version;

use std::process::{Command, Output};
use std::time::Duration;

use end_to_end_tests::TestServer;
use serde_json::Value;

/// How long a running server may take to see what the CLI did.
const WAIT: Duration = Duration::from_secs(20);

/// Runs `petstore-portfolio <args>` on the server's database.
fn run(server: &TestServer, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_petstore-portfolio"))
        .args(args)
        .env("PETSTORE_PORTFOLIO_DATABASE_URL", server.database_url())
        .env("PETSTORE_PORTFOLIO_DATA_DIR", server.data_dir())
        .env_remove("PETSTORE_PORTFOLIO_CONFIG")
        .output()
        .expect("the binary runs")
}

/// Runs `petstore-portfolio <args> --json`, which must succeed, and returns
/// what it printed.
fn cli(server: &TestServer, args: &[&str]) -> Value {
    let output = run(server, &[args, &["--json"]].concat());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{args:?} failed: {stderr}");
    serde_json::from_slice(&output.stdout).expect("JSON on stdout")
}

/// Runs `petstore-portfolio <args>`, which must fail, and returns its stderr.
fn cli_fails(server: &TestServer, args: &[&str]) -> String {
    let output = run(server, args);
    assert!(!output.status.success(), "{args:?} should fail");
    assert!(output.stdout.is_empty(), "nothing on stdout when it fails");
    String::from_utf8_lossy(&output.stderr).into_owned()
}
