//! `cargo xtask <command>`; see `cargo xtask --help`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use xtask::{SERVICES, check_service, codegen};

#[derive(Debug, Parser)]
#[command(about = "Project automation")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Regenerate the SDK in client/ and the client profiles in
    /// openapi/profiles/ from openapi/*.yaml; or, with --input, generate a
    /// client for a crate of your own.
    #[command(after_help = "\
Examples:
  cargo xtask codegen            the SDK and profiles of this repository
  cargo xtask codegen --check    verify them
  cargo xtask codegen --input petstore.client.json --output src/petstore.rs

With --input, the code is a client on petstore-portfolio-runtime (the SDK's
credentials, retries with idempotency keys, one-line errors, tracing and
hooks), for a crate that depends on it, progenitor-client 0.15, reqwest
(features json, query), serde (derive), serde_json, chrono (serde) and
regress; with --plain, progenitor's own output, which needs no runtime. See
the README's \"Regenerate the SDK\".")]
    Codegen {
        /// Only verify that the files are what the documents generate.
        #[arg(long)]
        check: bool,
        /// An OpenAPI 3.0 document (YAML or JSON) or a client profile, such
        /// as one a server serves at /openapi/petstore.client.json.
        #[arg(long, value_name = "FILE")]
        input: Option<PathBuf>,
        /// Where to write the generated client (Rust), with --input.
        #[arg(long, value_name = "FILE.rs", requires = "input")]
        output: Option<PathBuf>,
        /// Where to write the input's client profile (JSON), with --input.
        #[arg(long, value_name = "FILE.json", requires = "input")]
        profile: Option<PathBuf>,
        /// With --input: progenitor's own output (no runtime, no hooks).
        #[arg(long, requires = "input")]
        plain: bool,
    },
    /// Print, as Markdown, how each document changed between two versions:
    /// by default from its latest release to the working copy.
    Changelog {
        /// The older version (a released one); default: the latest release.
        #[arg(long)]
        from: Option<String>,
        /// The newer version (a released one); default: the working copy.
        #[arg(long)]
        to: Option<String>,
        /// Only this document: petstore or portfolio.
        document: Option<String>,
    },
    /// Keep a copy of each document at its version in openapi/released/
    /// (refused for a version already kept with other contents), and name
    /// the commit checked out as the SDK's release at the workspace's version
    /// (openapi/released/sdk.txt), unless that version is released already.
    Release,
    /// Run cargo-semver-checks on the published crates (the SDK and its
    /// runtime) against their last release's source: a change that breaks
    /// a user's build fails unless the version's major part (for 0.x, its
    /// minor part) went up.
    Semver,
    /// Compare each hand-written document with the one the code's annotations
    /// produce, and print every difference; compare it with its latest
    /// release (a breaking change needs a new major version); and check the server's modules:
    /// SQL only in storage, no import circles, no import up the layers, no
    /// transaction in a handler, no handler module in an operator command.
    Check,
    /// Run the release build under a hostile or unlucky load and print the
    /// figures: `login-storm`, `slowloris`. Runs `petstore-portfolio-bench
    /// stress` (bench/), which takes the arguments; `--help` lists them.
    #[command(disable_help_flag = true)]
    Stress {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<OsString>,
    },
    /// The release server beside the framework's ceiling, under wrk. Runs
    /// `petstore-portfolio-bench bench` (bench/), which takes the
    /// arguments; `--help` lists them.
    #[command(disable_help_flag = true)]
    Bench {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<OsString>,
    },
    /// Print the document the code's annotations produce (OpenAPI 3.1, JSON),
    /// for looking into a drift.
    CodeDocument {
        /// Which service: petstore.
        service: String,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let root = codegen::workspace_root();
    let result = match cli.command {
        Command::Codegen {
            check,
            input: Some(input),
            output,
            profile,
            plain,
        } => {
            let request = codegen::Request {
                input,
                output,
                profile,
                plain,
            };
            codegen::run_request(&request, check).map(|stale| {
                for file in &stale {
                    eprintln!("{} is stale", file.display());
                }
                stale.is_empty()
            })
        }
        Command::Codegen {
            check: false,
            input: None,
            ..
        } => codegen::write_all(&root).map(|()| true),
        Command::Codegen {
            check: true,
            input: None,
            ..
        } => codegen::stale_files(&root).map(|stale| {
            for file in &stale {
                eprintln!("{file} is stale: run `cargo xtask codegen` and commit the result");
            }
            if stale.is_empty() {
                println!("the SDK and the client profiles are up to date with openapi/");
            }
            stale.is_empty()
        }),
        Command::Check => check_all(&root),
        Command::Changelog { from, to, document } => {
            print_changelog(&root, from.as_deref(), to.as_deref(), document.as_deref())
        }
        Command::Release => {
            xtask::evolution::release(&root, &SERVICES.map(|service| service.document))
                .map(|written| {
                    for file in &written {
                        println!("wrote {file}");
                    }
                    if written.is_empty() {
                        println!("every document's version is already released");
                    }
                })
                .and_then(|()| xtask::semver::release(&root))
                .map(|written| {
                    match written {
                        Some(file) => println!("wrote {file}"),
                        None => println!("the SDK's version is already released"),
                    }
                    true
                })
        }
        Command::Semver => xtask::semver::check(&root),
        Command::CodeDocument { service } => print_code_document(&service),
        Command::Stress { args } => return forward_to_bench(&root, "stress", &args),
        Command::Bench { args } => return forward_to_bench(&root, "bench", &args),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn check_all(root: &Path) -> anyhow::Result<bool> {
    let misplaced = xtask::layers::sql_outside_storage(root)?;
    let mut clean = misplaced.is_empty();
    if clean {
        println!("SQL is only in the storage modules");
    }
    for place in misplaced {
        eprintln!("{place}");
    }
    let promises = [
        (
            "every operation that takes Idempotency-Key reads its body through Idempotent",
            xtask::promises::idempotency_keys_unread(root)?,
        ),
        (
            "the services' storage writes only in write transactions",
            xtask::promises::writes_outside_transactions(root)?,
        ),
    ];
    for (promise, broken) in promises {
        if broken.is_empty() {
            println!("{promise}");
        } else {
            clean = false;
            for place in broken {
                eprintln!("{place}");
            }
        }
    }
    let mut drift = xtask::docs_map::map_drift(root)?;
    drift.extend(xtask::docs_map::unknown_files(root)?);
    if drift.is_empty() {
        println!("the docs' map names every folder and the docs name only files that are there");
    } else {
        clean = false;
        for place in drift {
            eprintln!("{place}");
        }
    }
    let graph = xtask::layers::server_graph(root)?;
    let circles = xtask::layers::circles_in_crates(root)?;
    let checks = xtask::layers::MODULE_CHECKS
        .iter()
        .map(|(promise, check)| (*promise, check(&graph)))
        .chain([(
            "the server, the SDK and the benchmarks import their modules without circles",
            circles,
        )]);
    for (promise, findings) in checks {
        if findings.is_empty() {
            println!("{promise}");
            continue;
        }
        clean = false;
        eprintln!("{} finding(s) against \"{promise}\":", findings.len());
        for finding in findings {
            eprintln!("  {finding}");
        }
    }
    for service in SERVICES {
        let drifts = check_service(root, service)?;
        if drifts.is_empty() {
            println!("{}: {} and the code agree", service.name, service.document);
        } else {
            clean = false;
            eprintln!(
                "{}: {} drift(s) between {} and the code:",
                service.name,
                drifts.len(),
                service.document
            );
            for drift in drifts {
                eprintln!("  {drift}");
            }
        }
        clean &= report_evolution(root, service.document)?;
    }
    Ok(clean)
}

/// How `document` changed since its last release; false when a change
/// breaks its clients and the major version stayed.
fn report_evolution(root: &Path, document: &'static str) -> anyhow::Result<bool> {
    use xtask::evolution::{self, Kind};
    let verdict = evolution::check(root, document)?;
    let Some(released) = &verdict.released else {
        println!(
            "{document}: no released copy in {} (cargo xtask release)",
            evolution::RELEASED
        );
        return Ok(true);
    };
    let breaking = verdict
        .changes
        .iter()
        .filter(|c| c.kind == Kind::Breaking)
        .count();
    if verdict.changes.is_empty() {
        println!("{document} {}: as released", verdict.version);
    } else if verdict.passes() {
        println!(
            "{document} {} against {released}: {} change(s){}",
            verdict.version,
            verdict.changes.len(),
            if breaking > 0 {
                ", the breaking ones in a new major version"
            } else {
                ", none breaking"
            }
        );
        for change in &verdict.changes {
            println!("  {:?} {change}", change.kind);
        }
    } else {
        eprintln!(
            "{document} {} breaks clients of {released} in {breaking} place(s); \
             raise the major version of info.version if that is meant:",
            verdict.version
        );
        for change in verdict.changes.iter().filter(|c| c.kind == Kind::Breaking) {
            eprintln!("  {change}");
        }
    }
    Ok(verdict.passes())
}

fn print_changelog(
    root: &Path,
    from: Option<&str>,
    to: Option<&str>,
    only: Option<&str>,
) -> anyhow::Result<bool> {
    use xtask::evolution;
    for service in SERVICES {
        if only.is_some_and(|name| !service.document.ends_with(&format!("/{name}.yaml"))) {
            continue;
        }
        let document = service.document;
        let (old, from) = match from {
            Some(version) => (
                evolution::release_of(root, document, version)?,
                version.to_owned(),
            ),
            None => {
                let (path, version) = evolution::latest_release(root, document)?
                    .ok_or_else(|| anyhow::anyhow!("{document} has no release yet"))?;
                (evolution::load(&path)?, version)
            }
        };
        let (new, to) = match to {
            Some(version) => (
                evolution::release_of(root, document, version)?,
                version.to_owned(),
            ),
            None => {
                let working = evolution::load(&root.join(document))?;
                let label = format!("{} (working copy)", evolution::version_of(&working));
                (working, label)
            }
        };
        let changes = evolution::compare(&old, &new);
        println!("{}", evolution::changelog(document, &from, &to, &changes));
    }
    Ok(true)
}

fn print_code_document(name: &str) -> anyhow::Result<bool> {
    let service = SERVICES
        .iter()
        .find(|s| s.document.ends_with(&format!("/{name}.yaml")))
        .ok_or_else(|| anyhow::anyhow!("no service {name:?}; try petstore"))?;
    println!("{}", (service.code_document)().to_pretty_json()?);
    Ok(true)
}

/// Runs `petstore-portfolio-bench <command> <args>` through cargo, in the
/// workspace, with this process's terminal, and answers its exit code: the
/// measurements live in a crate of their own so that xtask (and every
/// `cargo xtask check`) builds none of their dependencies.
fn forward_to_bench(root: &Path, command: &str, args: &[OsString]) -> ExitCode {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = std::process::Command::new(cargo)
        .args([
            "run",
            "--quiet",
            "--package",
            "petstore-portfolio-bench",
            "--",
        ])
        .arg(command)
        .args(args)
        .current_dir(root)
        .status();
    match status {
        // A code above 255 cannot be an exit code; a signal has none.
        Ok(status) => status
            .code()
            .and_then(|code| u8::try_from(code).ok())
            .map_or(ExitCode::FAILURE, ExitCode::from),
        Err(e) => {
            eprintln!("error: cannot run cargo for petstore-portfolio-bench: {e}");
            ExitCode::from(2)
        }
    }
}
