//! `cargo xtask <command>`; see `cargo xtask --help`.

use std::path::PathBuf;
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

With --input, the code is plain progenitor output (builder interface, no
hooks), for a crate that depends on progenitor-client 0.15, reqwest
(features json, query), serde (derive), serde_json, chrono (serde) and
regress; see the README's \"Regenerate the SDK\".")]
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
    },
    /// Compare each hand-written document with the one the code's annotations
    /// produce, and print every difference; and check that the server writes
    /// SQL only in its storage modules.
    Check,
    /// Run the release build under a hostile or unlucky load and print the
    /// figures: `login-storm`, `slowloris`.
    Stress {
        /// Which scenario.
        scenario: StressScenario,
    },
    /// The release server beside the framework's ceiling (a bare axum
    /// server answering the same bytes), both under wrk: req/s, p50, p99
    /// and the ratio to the ceiling per endpoint, start time, peak memory.
    Bench {
        /// Seconds of load for each endpoint, on each server.
        #[arg(long, default_value_t = 10)]
        seconds: u32,
        /// Open connections.
        #[arg(long, default_value_t = 64)]
        connections: u32,
        /// Run on this database (e.g. postgres://...) instead of a fresh
        /// SQLite file.
        #[arg(long)]
        database_url: Option<String>,
    },
    /// Print the document the code's annotations produce (OpenAPI 3.1, JSON),
    /// for looking into a drift.
    CodeDocument {
        /// Which service: petstore.
        service: String,
    },
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum StressScenario {
    /// 100 concurrent logins for unknown users, then 16 clients creating
    /// users for 10 s: peak memory under password hashing.
    LoginStorm,
    /// 1,100 connections dripping headers against a server with a file
    /// limit of 1,024, while a normal client keeps asking: its latency.
    Slowloris,
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
        } => {
            let request = codegen::Request {
                input,
                output,
                profile,
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
        Command::CodeDocument { service } => print_code_document(&service),
        Command::Stress { scenario } => stress(&root, scenario).map(|()| true),
        Command::Bench {
            seconds,
            connections,
            database_url,
        } => tokio::runtime::Runtime::new()
            .map_err(anyhow::Error::from)
            .and_then(|runtime| {
                let options = xtask::bench::Options {
                    seconds,
                    connections,
                    database_url,
                };
                runtime.block_on(xtask::bench::run(&root, &options))
            })
            .map(|()| true),
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

fn check_all(root: &std::path::Path) -> anyhow::Result<bool> {
    let misplaced = xtask::layers::sql_outside_storage(root)?;
    let mut clean = misplaced.is_empty();
    if clean {
        println!("SQL is only in the storage modules");
    }
    for place in misplaced {
        eprintln!("{place}");
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
    }
    Ok(clean)
}

fn print_code_document(name: &str) -> anyhow::Result<bool> {
    let service = SERVICES
        .iter()
        .find(|s| s.document.ends_with(&format!("/{name}.yaml")))
        .ok_or_else(|| anyhow::anyhow!("no service {name:?}; try petstore"))?;
    println!("{}", (service.code_document)().to_pretty_json()?);
    Ok(true)
}

fn stress(root: &std::path::Path, scenario: StressScenario) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        match scenario {
            StressScenario::LoginStorm => xtask::stress::login_storm::run(root).await,
            StressScenario::Slowloris => xtask::stress::slowloris::run(root).await,
        }
    })
}
