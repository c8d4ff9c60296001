//! A client regenerated from what a running server serves, as someone
//! outside this repository would: the client profiles downloaded over HTTP,
//! a plain progenitor client generated from those bytes (what
//! `cargo xtask codegen --input ... --output ...` writes), a crate of its
//! own that depends on the versions the README names, built with cargo
//! (offline: every crate is in the workspace's lock and cargo's cache), and
//! its program run against the server.
//!
//! The same with a client on the runtime (what `--input` writes without
//! `--plain`): as good as the SDK, it prints a 404 as one line and sends a
//! `POST` whose answer was lost again with the same idempotency key.
//!
//! The crates are built in `target/tmp/regenerated-client-target`, kept
//! between runs: only the first run compiles reqwest and the rest.

use std::path::{Path, PathBuf};
use std::time::Instant;

use end_to_end_tests::{Db, TestServer, http, send};
use serde_json::Value;
use xtask::codegen::{self, Flavor};

/// The crates the generated code needs (and `tokio` for the program), with
/// the features the README asks for; versions are pinned to the
/// workspace's lock.
const DEPENDENCIES: [(&str, &str); 7] = [
    ("progenitor-client", ""),
    (
        "reqwest",
        r#"default-features = false, features = ["json", "query"]"#,
    ),
    ("serde", r#"features = ["derive"]"#),
    ("serde_json", ""),
    (
        "chrono",
        r#"default-features = false, features = ["serde"]"#,
    ),
    ("regress", ""),
    ("tokio", r#"features = ["macros", "rt-multi-thread"]"#),
];

const MAIN: &str = r#"//! Calls the server at the URL given with the regenerated clients, and
//! prints what each call answered as `<what> <JSON>` lines.

use regenerated_client::{petstore, portfolio};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let base = std::env::args().nth(1).ok_or("usage: regenerated-client <base URL>")?;
    let pets = petstore::Client::new(&format!("{base}/v2"));
    let inventory = pets.get_inventory().send().await?.into_inner();
    println!("inventory {}", serde_json::to_string(&inventory)?);
    let user = pets.get_user_by_name().username("user1").send().await?.into_inner();
    println!("user {}", serde_json::to_string(&user)?);
    match pets.get_user_by_name().username("nobody").send().await {
        Err(petstore::Error::ErrorResponse(answer)) => {
            println!("missing {}", serde_json::to_string(&answer.into_inner())?);
        }
        other => return Err(format!("user nobody: {other:?}").into()),
    }
    let site = portfolio::Client::new(&base);
    let projects = site.list_projects().send().await?.into_inner();
    println!("projects {}", serde_json::to_string(&projects)?);
    Ok(())
}
"#;

const MAIN_ON_THE_RUNTIME: &str = r#"//! Calls the server (the first URL) and, for the pet it adds, a proxy in
//! front of it (the second) with the client regenerated on the runtime;
//! prints `<what> <text>` lines.

use regenerated_client::petstore;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (base, proxy) = (args.next().ok_or("a base URL")?, args.next().ok_or("a proxy URL")?);
    let pets = petstore::ClientBuilder::new(&base).build()?;
    match pets.get_pet_by_id().pet_id("987654").send().await {
        Err(e) => println!("missing {e}"),
        Ok(pet) => return Err(format!("pet 987654: {pet:?}").into()),
    }
    let through = petstore::ClientBuilder::new(&proxy).build()?;
    let pet: petstore::types::Pet = serde_json::from_value(serde_json::json!({
        "name": "Regenerated", "photoUrls": []
    }))?;
    let added = through.add_pet().body(pet).send().await?;
    println!("added {}", added.into_inner().id.ok_or("an id")?);
    Ok(())
}
"#;

#[tokio::test]
async fn a_client_regenerated_on_the_runtime_is_as_good_as_the_sdk() {
    let server = TestServer::start(Db::Sqlite).await;
    let dir = tempfile::Builder::new()
        .prefix("regenerated-on-runtime-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .expect("a crate directory");
    let src = dir.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    let url = server.at("/openapi/petstore.client.json");
    let (status, _, served) = send(http().get(&url)).await;
    assert_eq!(status, 200, "{url}");
    let profile = codegen::parse_document(&served, &url).expect("the profile parses");
    let profile = codegen::client_profile(&profile).expect("a profile's profile");
    let code = codegen::generate_code(&profile, &url, Flavor::Runtime)
        .expect("a client on the runtime from the served profile");
    std::fs::write(src.join("petstore.rs"), code).unwrap();
    std::fs::write(
        src.join("lib.rs"),
        "//! A client generated on the runtime.\n\npub mod petstore;\n",
    )
    .unwrap();
    std::fs::write(src.join("main.rs"), MAIN_ON_THE_RUNTIME).unwrap();
    let runtime = format!(
        "petstore-portfolio-runtime = {{ path = {:?} }}\n",
        codegen::workspace_root()
            .join("runtime")
            .display()
            .to_string()
    );
    build(dir.path(), &runtime).await;
    let upstream = server.url.trim_start_matches("http://").to_owned();
    let (proxy, cuts) = crate::sdk::cutting_proxy(upstream, "/v2/pet").await;
    let output = tokio::process::Command::new(target_dir().join("debug/regenerated-client"))
        .args([server.at(""), proxy])
        .output()
        .await
        .expect("the program runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the client on the runtime failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("missing 404 NOT_FOUND: pet 987654 not found\n"),
        "{stdout}"
    );
    // The first POST's answer was cut; the retry carried the same key, and
    // the server replayed its answer: one pet.
    assert_eq!(cuts.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert!(stdout.contains("added "), "{stdout}");
    assert_eq!(server.count_where("pets", "name = 'Regenerated'").await, 1);
    server.stop().await;
}

#[tokio::test]
async fn a_client_generated_from_the_served_profiles_calls_the_server() {
    let started = Instant::now();
    // The sample pets and users.
    let server = TestServer::start_with(Db::Sqlite, |c| c.petstore.demo_data = true).await;
    let dir = tempfile::Builder::new()
        .prefix("regenerated-client-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .expect("a crate directory");
    let src = dir.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    for (module, path) in [
        ("petstore", "/openapi/petstore.client.json"),
        ("portfolio", "/openapi/portfolio.client.json"),
    ] {
        let url = server.at(path);
        let (status, content_type, served) = send(http().get(&url)).await;
        assert_eq!(status, 200, "{url}");
        assert!(
            content_type.starts_with("application/json"),
            "{content_type}"
        );
        // What `cargo xtask codegen --input <downloaded file> --plain --output ...` does.
        let profile = codegen::parse_document(&served, &url).expect("the profile parses");
        let profile = codegen::client_profile(&profile).expect("a profile's profile");
        let code = codegen::generate_code(&profile, &url, Flavor::Standalone)
            .expect("progenitor generates a client from the served profile");
        std::fs::write(src.join(format!("{module}.rs")), code).unwrap();
    }
    std::fs::write(
        src.join("lib.rs"),
        "//! Clients generated from the served client profiles.\n\n\
         pub mod petstore;\npub mod portfolio;\n",
    )
    .unwrap();
    std::fs::write(src.join("main.rs"), MAIN).unwrap();
    let generated = started.elapsed();
    build(dir.path(), "").await;
    let built = started.elapsed();
    let output = tokio::process::Command::new(target_dir().join("debug/regenerated-client"))
        .arg(server.at(""))
        .output()
        .await
        .expect("the program runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the regenerated client failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let printed = |what: &str| -> Value {
        let line = stdout
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{what} ")))
            .unwrap_or_else(|| panic!("no {what} in:\n{stdout}"));
        serde_json::from_str(line).expect("JSON")
    };
    // What the generated client read is what the server answers.
    for (what, path) in [
        ("inventory", "/v2/store/inventory"),
        ("user", "/v2/user/user1"),
        ("missing", "/v2/user/nobody"),
        ("projects", "/api/projects"),
    ] {
        let (_, _, answer) = send(http().get(server.at(path))).await;
        let answer: Value = serde_json::from_str(&answer).expect("a JSON answer");
        assert_eq!(printed(what), answer, "{what} ({path})");
    }
    assert!(printed("inventory")["available"].as_i64() > Some(0));
    assert_eq!(printed("user")["username"], "user1");
    assert_eq!(printed("missing")["code"], 404);
    server.stop().await;
    eprintln!(
        "regenerated client: generated in {:.1?}, built in {:.1?}, run in {:.1?}",
        generated,
        built - generated,
        started.elapsed() - built
    );
}

/// Writes the crate's manifest ([`DEPENDENCIES`] and `extra`) and lock (the
/// workspace's: the same versions of everything below them too), and builds
/// it, which must succeed.
async fn build(dir: &Path, extra: &str) {
    let lock = std::fs::read_to_string(codegen::workspace_root().join("Cargo.lock"))
        .expect("the workspace's lock");
    std::fs::write(dir.join("Cargo.toml"), manifest(&lock) + extra).unwrap();
    std::fs::write(dir.join("Cargo.lock"), &lock).unwrap();
    let output = cargo(dir)
        .args(["build", "--offline", "--jobs", "1", "--quiet"])
        .args(["--message-format", "short"])
        .output()
        .await
        .expect("cargo runs");
    assert!(
        output.status.success(),
        "the regenerated client does not build in a crate of its own:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Where the crate is built: kept between runs (and shared by concurrent
/// ones, which cargo's lock takes in turn).
fn target_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("regenerated-client-target")
}

/// cargo, as for someone outside the repository: its own target dir, and
/// nothing of this workspace's build settings. It builds on one core, and
/// under `nice` where there is one, beside the tests that run meanwhile
/// (some of which count seconds).
fn cargo(dir: &Path) -> tokio::process::Command {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let nice = std::process::Command::new("nice")
        .arg("true")
        .status()
        .is_ok_and(|s| s.success());
    let mut command = if nice {
        let mut command = tokio::process::Command::new("nice");
        command.args(["-n", "10"]).arg(cargo);
        command
    } else {
        tokio::process::Command::new(cargo)
    };
    command
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target_dir())
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("CARGO_BUILD_TARGET_DIR");
    command
}

/// The crate's manifest: [`DEPENDENCIES`] at the versions of the lock.
fn manifest(lock: &str) -> String {
    let mut manifest = String::from(
        "[package]\n\
         name = \"regenerated-client\"\n\
         version = \"0.1.0\"\n\
         edition = \"2024\"\n\
         publish = false\n\n\
         # A workspace of its own (it sits under this repository's target dir).\n\
         [workspace]\n\n\
         [profile.dev]\n\
         debug = false\n\n\
         [dependencies]\n",
    );
    for (name, features) in DEPENDENCIES {
        let version = locked_version(lock, name);
        let extra = if features.is_empty() {
            String::new()
        } else {
            format!(", {features}")
        };
        manifest.push_str(&format!("{name} = {{ version = \"={version}\"{extra} }}\n"));
    }
    manifest
}

/// The version of `name` in the lock; where it holds several, the one the
/// SDK (`petstore-portfolio-client`) uses.
fn locked_version(lock: &str, name: &str) -> String {
    let packages: Vec<&str> = lock.split("[[package]]").collect();
    let versions: Vec<&str> = packages
        .iter()
        .filter(|p| p.contains(&format!("\nname = \"{name}\"\n")))
        .filter_map(|p| {
            p.lines()
                .find_map(|l| l.strip_prefix("version = \""))
                .and_then(|v| v.strip_suffix('"'))
        })
        .collect();
    match versions.as_slice() {
        [version] => (*version).to_owned(),
        _ => packages
            .iter()
            .find(|p| p.contains("\nname = \"petstore-portfolio-client\"\n"))
            .and_then(|sdk| {
                sdk.lines().find_map(|l| {
                    l.trim()
                        .strip_prefix(&format!("\"{name} "))
                        .and_then(|v| v.strip_suffix("\","))
                })
            })
            .unwrap_or_else(|| panic!("{name}: versions {versions:?} in Cargo.lock"))
            .to_owned(),
    }
}
