//! `petstore-portfolio-cli`: every operation of the Pet Store and the
//! Portfolio as a command, generated from the same client profiles as the
//! SDK (progenitor's CLI generator, run by `cargo xtask codegen`) and run
//! through the SDK: its credentials from the environment (as
//! `ClientBuilder::from_env()` reads them), its retries with idempotency
//! keys, its one-line errors.
//!
//! ```text
//! petstore-portfolio-cli petstore get-pet-by-id --pet-id 7
//! petstore-portfolio-cli --all --format table portfolio list-subscribers
//! petstore-portfolio-cli --dry-run portfolio create-post --json-body post.json
//! ```
//!
//! The answer goes to stdout as JSON (or a table); an error goes to stderr
//! as one line, and the exit code says its class ([`exit`]).

// Unit tests may unwrap: a failing unwrap is a failing test.
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

mod dry_run;
mod exit;
mod output;

// progenitor's output, fitted to the SDK by the xtask; a deprecated
// operation's command calls its deprecated method.
#[allow(
    clippy::all,
    clippy::unwrap_used,
    dead_code,
    deprecated,
    unused_variables,
    unused_imports
)]
#[path = "generated/petstore.rs"]
mod petstore_commands;
#[allow(
    clippy::all,
    clippy::unwrap_used,
    dead_code,
    deprecated,
    unused_variables,
    unused_imports
)]
#[path = "generated/portfolio.rs"]
mod portfolio_commands;

use std::process::ExitCode;

use clap::{Arg, ArgAction, ArgMatches, Command};
use petstore_portfolio_client::{petstore, portfolio};

use output::{Format, Output};

/// What the CLI says it is, before the SDK's own `User-Agent`.
const PRODUCT: &str = concat!("petstore-portfolio-cli/", env!("CARGO_PKG_VERSION"));

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let matches = command().get_matches();
    let settings = Settings::from(&matches);
    let result = match matches.subcommand() {
        Some(("petstore", service)) => run_petstore(service, &settings).await,
        Some(("portfolio", service)) => run_portfolio(service, &settings).await,
        _ => Err(anyhow::anyhow!("name a service: petstore or portfolio")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => exit::report(&error),
    }
}

/// The options every command takes.
struct Settings {
    format: Format,
    all: bool,
    dry_run: bool,
}

impl From<&ArgMatches> for Settings {
    fn from(matches: &ArgMatches) -> Self {
        Settings {
            format: match matches.get_one::<String>("format").map(String::as_str) {
                Some("table") => Format::Table,
                _ => Format::Json,
            },
            all: matches.get_flag("all"),
            dry_run: matches.get_flag("dry-run"),
        }
    }
}

fn command() -> Command {
    Command::new("petstore-portfolio-cli")
        .version(env!("CARGO_PKG_VERSION"))
        .about(
            "The Pet Store and Portfolio APIs, a command per operation.\n\n\
             The server is PETSTORE_PORTFOLIO_URL; credentials come from the \
             environment as the SDK's from_env() reads them (PETSTORE_API_KEY, \
             PETSTORE_BEARER_TOKEN, PETSTORE_USERNAME and PETSTORE_PASSWORD; \
             PORTFOLIO_API_KEY, PORTFOLIO_BEARER_TOKEN, PORTFOLIO_CLIENT_ID and \
             PORTFOLIO_CLIENT_SECRET).",
        )
        .subcommand_required(true)
        .arg(
            Arg::new("format")
                .long("format")
                .global(true)
                .value_parser(["json", "table"])
                .default_value("json")
                .help("How the answer is printed on stdout"),
        )
        .arg(
            Arg::new("all")
                .long("all")
                .global(true)
                .action(ArgAction::SetTrue)
                .help("For a paged list: every page, as one list"),
        )
        .arg(
            Arg::new("dry-run")
                .long("dry-run")
                .global(true)
                .action(ArgAction::SetTrue)
                .help("Print the request as a curl command (credentials redacted) instead of sending it"),
        )
        .subcommand(
            Command::new("petstore")
                .about("The Pet Store (/v2)")
                .subcommand_required(true)
                .subcommands(petstore_commands::CliCommand::iter().map(|op| {
                    petstore_commands::Cli::<Output>::get_command(op).name(kebab(op.operation_id()))
                })),
        )
        .subcommand(
            Command::new("portfolio")
                .about("The Portfolio (/api)")
                .subcommand_required(true)
                .subcommands(portfolio_commands::CliCommand::iter().map(|op| {
                    portfolio_commands::Cli::<Output>::get_command(op)
                        .name(kebab(op.operation_id()))
                })),
        )
}

/// Runs the operation a service's subcommand names, on a client of that
/// service from the environment (placeholders for a dry run).
macro_rules! run_service {
    ($name:ident, $commands:ident, $sdk:ident, $dry_builder:path, $what:literal) => {
        async fn $name(service: &ArgMatches, settings: &Settings) -> anyhow::Result<()> {
            let (name, matches) = service
                .subcommand()
                .ok_or_else(|| anyhow::anyhow!("name an operation"))?;
            let op = $commands::CliCommand::iter()
                .find(|op| kebab(op.operation_id()) == name)
                .ok_or_else(|| anyhow::anyhow!(concat!("no ", $what, " operation {}"), name))?;
            check_all(settings, &$commands::Cli::<Output>::get_command(op), name)?;
            let mut builder = if settings.dry_run {
                $dry_builder()?.before_send(dry_run::stop_with_curl)
            } else {
                $sdk::ClientBuilder::from_env()?
            };
            builder = builder.user_agent(PRODUCT);
            let cli = $commands::Cli::new(builder.build()?, Output::new(settings));
            cli.execute(op, matches).await
        }
    };
}

run_service!(
    run_petstore,
    petstore_commands,
    petstore,
    dry_run::petstore_builder,
    "pet store"
);
run_service!(
    run_portfolio,
    portfolio_commands,
    portfolio,
    dry_run::portfolio_builder,
    "portfolio"
);

/// `--all` is for paged lists (the commands with `--cursor`) only.
fn check_all(settings: &Settings, command: &Command, name: &str) -> anyhow::Result<()> {
    let paged = command.get_arguments().any(|arg| arg.get_id() == "cursor");
    if settings.all && !paged {
        return Err(exit::Usage(format!("--all: {name} is not a paged list")).into());
    }
    Ok(())
}

/// `getPetById` → `get-pet-by-id`.
fn kebab(operation_id: &str) -> String {
    let mut name = String::with_capacity(operation_id.len() + 4);
    for c in operation_id.chars() {
        if c.is_ascii_uppercase() {
            if !name.is_empty() {
                name.push('-');
            }
            name.push(c.to_ascii_lowercase());
        } else if c == '_' {
            name.push('-');
        } else {
            name.push(c);
        }
    }
    name
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_command_line_is_well_formed() {
        super::command().debug_assert();
    }

    #[test]
    fn operation_ids_become_kebab_case() {
        assert_eq!(super::kebab("getPetById"), "get-pet-by-id");
        assert_eq!(super::kebab("list_subscribers"), "list-subscribers");
    }
}
