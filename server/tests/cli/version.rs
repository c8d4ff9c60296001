//! What the binary says it is.

use std::process::Command;

/// The checkout's commit, as `git rev-parse` says it.
fn commit() -> String {
    let output = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("git runs");
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

#[test]
fn the_version_names_the_commit() {
    let output = Command::new(env!("CARGO_BIN_EXE_petstore-portfolio"))
        .arg("--version")
        .output()
        .expect("the binary runs");
    assert!(output.status.success());
    let printed = String::from_utf8_lossy(&output.stdout);
    let (name_version_commit, built) = printed
        .trim()
        .split_once(", built ")
        .unwrap_or_else(|| panic!("no build day in {printed}"));
    assert_eq!(
        name_version_commit,
        format!(
            "{} {} (commit {}",
            env!("CARGO_PKG_NAME"),
            env!("CARGO_PKG_VERSION"),
            commit()
        )
    );
    // `YYYY-MM-DD)`
    let day = built
        .strip_suffix(')')
        .unwrap_or_else(|| panic!("{printed}"));
    assert!(
        day.len() == 10
            && day.char_indices().all(|(i, c)| if i == 4 || i == 7 {
                c == '-'
            } else {
                c.is_ascii_digit()
            }),
        "{printed}"
    );
    // The SDK's User-Agent names the same commit.
    assert!(
        petstore_portfolio_client::transport::SDK_USER_AGENT.ends_with(&format!("({})", commit())),
        "{}",
        petstore_portfolio_client::transport::SDK_USER_AGENT
    );
}
