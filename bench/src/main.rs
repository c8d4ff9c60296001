//! Measurements of the release server, kept out of xtask so that the
//! project's checks build none of this. Run as `cargo xtask bench …` /
//! `cargo xtask stress …` (xtask forwards them here), `cargo bench-server …`
//! / `cargo stress-server …` (aliases in .cargo/config.toml), or
//! `cargo run -p petstore-portfolio-bench -- <command>`.

mod bench;
mod instructions;
mod load;
mod mix;
mod postgres;
mod scale;
mod smtp;
mod stress;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(about = "Measurements of the release server: benchmarks and stress scenarios")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
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
        /// Measure only the rows and scenarios whose name contains this, or
        /// one of these, comma-separated (e.g. `mix`, `pet-json`,
        /// `add-pet,place-order`: `place-order` orders the pets `add-pet`
        /// adds), for a quick comparison of two builds; no targets are
        /// checked.
        #[arg(long)]
        only: Option<String>,
        /// Instead of the run above: fill one server through the API to
        /// 1,000, 10,000, 100,000 and 1,000,000 pets, then 100,000
        /// subscribers and 1,000,000 page views, and print what each read
        /// costs at each size (takes a while).
        #[arg(long)]
        scale: bool,
        /// With `--scale`: these store sizes instead, comma-separated (e.g.
        /// `1000,10000` for a quick try).
        #[arg(long, value_delimiter = ',', requires = "scale")]
        sizes: Option<Vec<usize>>,
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
    let root = workspace_root();
    let result = tokio::runtime::Runtime::new()
        .map_err(anyhow::Error::from)
        .and_then(|runtime| runtime.block_on(run(&root, cli.command)));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

async fn run(root: &Path, command: Command) -> anyhow::Result<()> {
    match command {
        Command::Stress {
            scenario: StressScenario::LoginStorm,
        } => stress::login_storm::run(root).await,
        Command::Stress {
            scenario: StressScenario::Slowloris,
        } => stress::slowloris::run(root).await,
        Command::Bench {
            seconds,
            connections,
            database_url,
            only,
            scale,
            sizes,
        } => {
            let options = load::Options {
                seconds,
                connections,
                database_url,
                only,
            };
            if scale {
                let sizes = sizes.unwrap_or_else(|| scale::SIZES.to_vec());
                scale::run(root, &options, &sizes).await
            } else {
                bench::run(root, &options).await
            }
        }
    }
}

/// The workspace's root: the folder above this crate's.
fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}
