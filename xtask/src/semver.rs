//! The published crates' promise to their users: `cargo xtask semver` runs
//! cargo-semver-checks on the SDK (the client and its runtime) against the
//! source of their last release, a commit of this repository kept in
//! `openapi/released/sdk.txt`, so that a change that breaks a user's build
//! needs a new major version (for a `0.x` crate, a new minor one).
//! `cargo xtask release` writes that file.

use std::path::Path;
use std::process::Command;

use anyhow::Context as _;

/// The crates users depend on: cargo-semver-checks compares each.
pub const PUBLISHED: [&str; 2] = ["petstore-portfolio-runtime", "petstore-portfolio-client"];

/// Where the last release of the published crates is named.
pub const BASELINE: &str = "openapi/released/sdk.txt";

/// The cargo-semver-checks that CI installs and the commands name.
pub const SEMVER_CHECKS_VERSION: &str = "0.51.0";

/// The last release of the published crates: their version and the commit
/// that holds their source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Baseline {
    pub version: String,
    pub commit: String,
}

impl Baseline {
    /// Reads `version <v>` and `commit <sha>` lines; `#` starts a comment.
    pub fn parse(text: &str) -> anyhow::Result<Self> {
        let mut version = None;
        let mut commit = None;
        for line in text.lines().map(str::trim) {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            match line.split_once(' ') {
                Some(("version", value)) => version = Some(value.trim().to_owned()),
                Some(("commit", value)) => commit = Some(value.trim().to_owned()),
                _ => anyhow::bail!(
                    "{BASELINE}: unknown line {line:?} (expected `version` or `commit`)"
                ),
            }
        }
        let version = version.with_context(|| format!("{BASELINE} names no version"))?;
        let commit = commit.with_context(|| format!("{BASELINE} names no commit"))?;
        anyhow::ensure!(
            commit.len() == 40 && commit.bytes().all(|b| b.is_ascii_hexdigit()),
            "{BASELINE}: commit {commit:?} is not a full 40-digit commit id"
        );
        Ok(Self { version, commit })
    }

    fn text(&self) -> String {
        format!(
            "# The last release of {crates}: their version and the commit\n\
             # that holds their source. `cargo xtask semver` compares the working\n\
             # crates with it (cargo-semver-checks); `cargo xtask release` writes it.\n\
             version {version}\n\
             commit {commit}\n",
            crates = PUBLISHED.join(" and "),
            version = self.version,
            commit = self.commit,
        )
    }
}

/// The baseline kept in the repository.
pub fn baseline(root: &Path) -> anyhow::Result<Baseline> {
    let text = std::fs::read_to_string(root.join(BASELINE))
        .with_context(|| format!("cannot read {BASELINE}: run `cargo xtask release` once"))?;
    Baseline::parse(&text)
}

/// The version the workspace gives its crates (`[workspace.package]`).
pub fn workspace_version(root: &Path) -> anyhow::Result<String> {
    let manifest = std::fs::read_to_string(root.join("Cargo.toml"))
        .context("cannot read the workspace's Cargo.toml")?;
    let mut in_package = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_package = line == "[workspace.package]";
        } else if in_package && let Some(value) = line.strip_prefix("version") {
            let value = value.trim_start().trim_start_matches('=').trim();
            return Ok(value.trim_matches('"').to_owned());
        }
    }
    anyhow::bail!("the workspace's Cargo.toml sets no [workspace.package] version")
}

fn git(root: &Path, args: &[&str]) -> anyhow::Result<std::process::Output> {
    Command::new("git")
        .args(args)
        .current_dir(root)
        .output()
        .with_context(|| format!("cannot run git {}", args.join(" ")))
}

/// `cargo xtask release`'s part for the SDK: the commit checked out (HEAD)
/// becomes the baseline of the workspace's version, unless that version is
/// released already. The published crates must be as committed, since the
/// baseline is their committed source. Returns the file when written.
pub fn release(root: &Path) -> anyhow::Result<Option<String>> {
    let version = workspace_version(root)?;
    if let Ok(kept) = baseline(root)
        && kept.version == version
    {
        return Ok(None);
    }
    let dirty = git(root, &["status", "--porcelain", "--", "client", "runtime"])?;
    anyhow::ensure!(
        dirty.status.success() && dirty.stdout.is_empty(),
        "client/ or runtime/ has uncommitted changes: the SDK's release is a commit, so commit them first"
    );
    let head = git(root, &["rev-parse", "HEAD"])?;
    anyhow::ensure!(head.status.success(), "git rev-parse HEAD failed");
    let commit = String::from_utf8_lossy(&head.stdout).trim().to_owned();
    let text = Baseline { version, commit }.text();
    std::fs::write(root.join(BASELINE), text)
        .with_context(|| format!("cannot write {BASELINE}"))?;
    Ok(Some(BASELINE.to_owned()))
}

/// `cargo xtask semver`: cargo-semver-checks on each published crate
/// against the baseline's source. Returns whether every crate passes.
pub fn check(root: &Path) -> anyhow::Result<bool> {
    let baseline = baseline(root)?;
    let present = git(
        root,
        &["cat-file", "-e", &format!("{}^{{commit}}", baseline.commit)],
    )?;
    anyhow::ensure!(
        present.status.success(),
        "the SDK's baseline commit {} (version {}) is not in this clone: a shallow clone? \
         (`git fetch --unshallow`)",
        baseline.commit,
        baseline.version
    );
    let installed = Command::new("cargo")
        .args(["semver-checks", "--version"])
        .output();
    anyhow::ensure!(
        installed.is_ok_and(|out| out.status.success()),
        "cargo-semver-checks is not installed: \
         `cargo install cargo-semver-checks --locked --version {SEMVER_CHECKS_VERSION}`"
    );
    println!(
        "comparing {} with version {} (commit {})",
        PUBLISHED.join(", "),
        baseline.version,
        baseline.commit
    );
    let mut command = Command::new("cargo");
    command
        .current_dir(root)
        .args(["semver-checks", "check-release"]);
    for package in PUBLISHED {
        command.args(["--package", package]);
    }
    // The default features: the others choose a TLS library (aws-lc-rs
    // needs cmake, native-tls OpenSSL's headers) and change no API.
    command.args(["--default-features", "--baseline-rev", &baseline.commit]);
    let status = command.status().context("cannot run cargo semver-checks")?;
    Ok(status.success())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_baseline_reads_back_what_release_writes() {
        let baseline = Baseline {
            version: "0.1.0".to_owned(),
            commit: "4e28069a".repeat(5),
        };
        assert_eq!(Baseline::parse(&baseline.text()).unwrap(), baseline);
    }

    #[test]
    fn a_baseline_without_a_full_commit_is_refused() {
        let error = Baseline::parse("version 0.1.0\ncommit 4e28069\n").unwrap_err();
        assert!(error.to_string().contains("40-digit"), "{error}");
        let error = Baseline::parse("version 0.1.0\n").unwrap_err();
        assert!(error.to_string().contains("no commit"), "{error}");
    }

    #[test]
    fn the_kept_baseline_is_at_a_version_not_above_the_workspaces() {
        let root = crate::codegen::workspace_root();
        let kept = baseline(&root).unwrap();
        let parts = |v: &str| -> Vec<u64> { v.split('.').map(|p| p.parse().unwrap()).collect() };
        assert!(parts(&kept.version) <= parts(&workspace_version(&root).unwrap()));
    }
}
