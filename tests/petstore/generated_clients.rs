//! Clients that openapi-generator (the real tool: PyPI's
//! `openapi-generator-cli`, pinned in `.ci/requirements.txt`, which runs the
//! generator's jar with Java) generates work against the server:
//!
//! - from `openapi/petstore.yaml`, the Python client (generator `python`)
//!   adds a pet, uploads an image to it, reads the pet back and fetches the
//!   image (`tests/generated_clients/petstore_images.py`);
//! - from the official Swagger Petstore document
//!   (`.ci/schemathesis/reference/`), the Python client signs up the
//!   document's example user (password `12345`), logs in, reads, updates and
//!   deletes it (`tests/generated_clients/official_users.py`).
//!
//! The Python is `GENERATED_CLIENT_PYTHON`, else CI's venv
//! (`target/ci-venv/bin/python`, made by `.ci/run`). Without it, the
//! generator or Java, the test says loudly that it is skipped, and fails
//! under CI (`CI=true`).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use end_to_end_tests::{Db, TINY_PNG, TestServer};

/// Names a Python that has `openapi-generator-cli` and what the generated
/// Python client needs (pydantic, urllib3, python-dateutil).
const PYTHON_VAR: &str = "GENERATED_CLIENT_PYTHON";

/// Generating the client: a JVM start and the generator's run.
const GENERATE_TIMEOUT: Duration = Duration::from_secs(180);
/// The script's few requests.
const RUN_TIMEOUT: Duration = Duration::from_secs(60);

/// The Python package the generator writes from our document.
const PACKAGE: &str = "petstore_client";
/// The one it writes from the official document.
const OFFICIAL_PACKAGE: &str = "official_petstore_client";

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace holds tests/")
        .to_path_buf()
}

/// The Python to run the generator and the script with, if this machine has
/// it with everything they need; otherwise `None`, after a loud note (and,
/// under CI, a panic).
fn generator_python(test: &str) -> Option<PathBuf> {
    let python = std::env::var_os(PYTHON_VAR)
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join("target/ci-venv/bin/python"));
    let runs = |program: &Path, args: &[&str]| {
        std::process::Command::new(program)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    let mut missing = Vec::new();
    if !python.is_file() {
        missing.push(format!(
            "{} (python3 -m venv target/ci-venv && target/ci-venv/bin/pip install -r .ci/requirements.txt, or set {PYTHON_VAR})",
            python.display()
        ));
    } else if !runs(
        &python,
        &[
            "-c",
            "import openapi_generator_cli, pydantic, urllib3, dateutil, typing_extensions",
        ],
    ) {
        missing.push(format!(
            "openapi-generator-cli or the generated client's dependencies in {} (pip install -r .ci/requirements.txt)",
            python.display()
        ));
    }
    if !runs(Path::new("java"), &["-version"]) {
        missing.push("Java (apt-get install default-jre-headless)".to_owned());
    }
    if missing.is_empty() {
        return Some(python);
    }
    assert!(
        std::env::var("CI").is_err(),
        "{test} cannot run under CI; missing: {}",
        missing.join(", ")
    );
    // Straight to the file descriptor: the test harness captures eprintln!.
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED {test}; missing: {}",
        missing.join(", ")
    );
    None
}

/// Runs `command` (killed if the test ends first) within `timeout`.
async fn run(mut command: tokio::process::Command, what: &str, timeout: Duration) -> Output {
    let started = Instant::now();
    let output = tokio::time::timeout(timeout, command.kill_on_drop(true).output())
        .await
        .unwrap_or_else(|_| panic!("{what} did not end within {timeout:?}"))
        .unwrap_or_else(|e| panic!("{what} did not start: {e}"));
    println!("{what}: {:.1} s", started.elapsed().as_secs_f64());
    output
}

fn printed(output: &Output) -> String {
    format!(
        "--- stdout\n{}\n--- stderr\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Generates the Python client of `document` into `folder` (the package
/// `package` in it).
async fn generate_python_client(python: &Path, document: &Path, folder: &Path, package: &str) {
    let mut command = tokio::process::Command::new(python);
    command
        // The wrapper reads its arguments from sys.argv[1:].
        .args(["-c", "from openapi_generator_cli import cli; cli()"])
        .arg("generate")
        .arg("--input-spec")
        .arg(document)
        .args(["--generator-name", "python"])
        .arg("--output")
        .arg(folder)
        .args(["--package-name", package])
        // Only the package: no tests or docs of its own.
        .args([
            "--global-property",
            "apiTests=false,modelTests=false,apiDocs=false,modelDocs=false",
        ]);
    let output = run(command, "openapi-generator (python)", GENERATE_TIMEOUT).await;
    assert!(
        output.status.success(),
        "openapi-generator failed on {} ({}):\n{}",
        document.display(),
        output.status,
        printed(&output)
    );
    assert!(
        folder.join(package).join("api/pet_api.py").is_file(),
        "openapi-generator wrote no {package}/api/pet_api.py:\n{}",
        printed(&output)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_generated_python_client_uploads_and_fetches_pet_images() {
    let test = "generated_clients::a_generated_python_client_uploads_and_fetches_pet_images";
    let Some(python) = generator_python(test) else {
        return;
    };
    let folder = tempfile::Builder::new()
        .prefix("petstore-python-client-")
        .tempdir()
        .expect("a temporary folder");
    let client = folder.path().join("client");
    generate_python_client(
        &python,
        &workspace().join("openapi/petstore.yaml"),
        &client,
        PACKAGE,
    )
    .await;
    let image = folder.path().join("tiny.png");
    std::fs::write(&image, TINY_PNG).expect("the image is written");

    let server = TestServer::start(Db::Sqlite).await;
    let script = workspace().join("tests/generated_clients/petstore_images.py");
    run_script(
        &python,
        &script,
        &[server.url.as_ref(), image.as_os_str()],
        folder,
    )
    .await;
    server.stop().await;
}

/// The official document's own clients sign its example user up (password
/// `12345`, id 10, which the sample user10 has) and see it through to its
/// deletion against the server in auth mode `open`, which takes what
/// upstream takes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_of_the_official_document_runs_the_example_users_life() {
    let test = "generated_clients::a_client_of_the_official_document_runs_the_example_users_life";
    let Some(python) = generator_python(test) else {
        return;
    };
    let folder = tempfile::Builder::new()
        .prefix("official-python-client-")
        .tempdir()
        .expect("a temporary folder");
    let client = folder.path().join("client");
    let official = workspace().join(".ci/schemathesis/reference/swagger-petstore-v3-openapi.yaml");
    generate_python_client(&python, &official, &client, OFFICIAL_PACKAGE).await;
    // With the sample data, as the server starts by default: the example
    // user's id (10) is the sample user10's.
    let server = TestServer::start_with(Db::Sqlite, |c| c.petstore.demo_data = true).await;
    let script = workspace().join("tests/generated_clients/official_users.py");
    run_script(&python, &script, &[server.url.as_ref()], folder).await;
    server.stop().await;
}

/// Runs `script` with `args` and the client generated into `folder`'s
/// `client` on the path; fails (keeping `folder`) unless it ends with `OK`.
async fn run_script(
    python: &Path,
    script: &Path,
    args: &[&std::ffi::OsStr],
    folder: tempfile::TempDir,
) {
    let mut command = tokio::process::Command::new(python);
    command
        .arg(script)
        .args(args)
        .env("PYTHONPATH", folder.path().join("client"))
        .env("PYTHONDONTWRITEBYTECODE", "1");
    let name = script
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let output = run(command, &name, RUN_TIMEOUT).await;
    let stdout = String::from_utf8_lossy(&output.stdout);
    println!("{stdout}");
    if !output.status.success() {
        // Kept for a look at what the generator wrote.
        let kept = folder.keep();
        panic!(
            "the generated Python client failed against the server ({}); the client is kept in {}:\n{}",
            output.status,
            kept.display(),
            printed(&output)
        );
    }
    assert!(
        stdout.lines().any(|l| l == "OK"),
        "{name} ended without its OK:\n{}",
        printed(&output)
    );
}
