// The commit this crate is built from (`BUILT_FROM_COMMIT`; not under the
// server's `PETSTORE_PORTFOLIO_` prefix, which its configuration reads, and
// cargo sets it when it runs the tests too), for
// the SDK's `User-Agent` and the server's `--version`: from
// `.cargo_vcs_info.json` in a published package, or from git in a
// checkout of this repository (and only of it: built as a path dependency
// inside another repository, it must not take that one's commit);
// otherwise `unknown`.

use std::path::Path;
use std::process::Command;

fn main() {
    let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let dir = Path::new(&manifest);
    let commit = from_vcs_info(dir)
        .or_else(|| from_git(dir))
        .unwrap_or_else(|| "unknown".to_owned());
    println!("cargo:rustc-env=BUILT_FROM_COMMIT={commit}");
}

/// The commit cargo wrote into a published package, shortened.
fn from_vcs_info(dir: &Path) -> Option<String> {
    let info = std::fs::read_to_string(dir.join(".cargo_vcs_info.json")).ok()?;
    let after = info.split_once("\"sha1\"")?.1;
    let sha = after.split('"').nth(1)?;
    Some(sha.chars().take(12).collect())
}

/// The checkout's commit, when `dir` is in this repository's checkout.
fn from_git(dir: &Path) -> Option<String> {
    let git = |args: &[&str]| -> Option<String> {
        let output = Command::new("git")
            .args(args)
            .current_dir(dir)
            .output()
            .ok()?;
        output
            .status
            .success()
            .then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
    };
    let top = git(&["rev-parse", "--show-toplevel"])?;
    let ours = [
        "runtime/Cargo.toml",
        "server/Cargo.toml",
        "openapi/petstore.yaml",
    ]
    .iter()
    .all(|file| Path::new(&top).join(file).exists());
    if !ours {
        return None;
    }
    // Built again when the checkout moves to another commit.
    if let Some(git_dir) = git(&["rev-parse", "--absolute-git-dir"]) {
        println!("cargo:rerun-if-changed={git_dir}/HEAD");
        if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
            println!("cargo:rerun-if-changed={git_dir}/{branch}");
        }
        println!("cargo:rerun-if-changed={git_dir}/packed-refs");
    }
    git(&["rev-parse", "--short=12", "HEAD"])
}
