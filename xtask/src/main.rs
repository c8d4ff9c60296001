//! `cargo xtask <command>`; see `cargo xtask --help`.

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
    /// Regenerate the SDK in client/ from openapi/*.yaml.
    Codegen {
        /// Only verify that the checked-in SDK is what the documents generate.
        #[arg(long)]
        check: bool,
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
        Command::Codegen { check: false } => codegen::write_all(&root).map(|()| true),
        Command::Codegen { check: true } => codegen::stale_files(&root).map(|stale| {
            for file in &stale {
                eprintln!("{file} is stale: run `cargo xtask codegen` and commit the result");
            }
            if stale.is_empty() {
                println!("the SDK is up to date with openapi/");
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
