// The commit this crate is built from (`BUILT_FROM_COMMIT`, which the
// builder may give in the environment where there is no checkout; not under the
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
    // Given by the builder where there is no checkout (a container
    // image's build).
    println!("cargo:rerun-if-env-changed=BUILT_FROM_COMMIT");
    let given = std::env::var("BUILT_FROM_COMMIT")
        .ok()
        .filter(|c| !c.is_empty() && c.chars().all(|c| c.is_ascii_hexdigit()))
        .map(|c| c.chars().take(12).collect());
    let commit = given
        .or_else(|| from_vcs_info(dir))
        .or_else(|| from_git(dir))
        .unwrap_or_else(|| "unknown".to_owned());
    println!("cargo:rustc-env=BUILT_FROM_COMMIT={commit}");
    println!("cargo:rerun-if-env-changed=SOURCE_DATE_EPOCH");
    println!("cargo:rustc-env=BUILT_ON={}", built_on());
}

/// The day of the build, UTC (`YYYY-MM-DD`): `SOURCE_DATE_EPOCH`'s, for a
/// reproducible build, or today's.
fn built_on() -> String {
    let secs = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs())
        });
    // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
    let days = (secs / 86_400) as i64 + 719_468;
    let era = days.div_euclid(146_097);
    let day_of_era = days.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
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
