//! `petstore-portfolio`: serves both services; operator tasks are subcommands.

use secrecy::ExposeSecret;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use petstore_portfolio_server::config::{Config, Overrides};
use petstore_portfolio_server::{Server, cli, docs, telemetry};

// mimalloc instead of glibc's malloc, for the whole process: its
// `override` feature defines `malloc` and `free` themselves, so SQLite's
// allocations go to it too (glibc's per-thread arenas kept 15-20 MiB after a
// burst of writes), and so do Rust's through the system allocator. Not as
// `#[global_allocator]`: mimalloc's Rust allocator asks for every block
// with `mi_malloc_aligned`, whose fast path only serves blocks of up to
// 1 KiB; a larger one (a request's boxed futures are) goes the slow path,
// a cost every request pays. The system allocator calls plain `malloc`
// for the alignments `malloc` already gives.
use mimalloc as _;

#[derive(Debug, Parser)]
#[command(
    version = concat!(env!("CARGO_PKG_VERSION"), " (commit ", env!("BUILT_FROM_COMMIT"), ")"),
    about = "Pet Store (/v2) and Portfolio (/api) services"
)]
struct Cli {
    /// Address to listen on (port 0 picks a free port).
    #[arg(long, global = true, env = "PETSTORE_PORTFOLIO_BIND")]
    bind: Option<std::net::SocketAddr>,
    /// Folder for the SQLite database and other files the server keeps.
    #[arg(long, global = true, env = "PETSTORE_PORTFOLIO_DATA_DIR")]
    data_dir: Option<PathBuf>,
    /// `sqlite:...` or `postgres://...` (default: a SQLite file in the data dir).
    #[arg(
        long,
        global = true,
        env = "PETSTORE_PORTFOLIO_DATABASE_URL",
        hide_env_values = true
    )]
    database_url: Option<String>,
    /// TOML configuration file.
    #[arg(long, global = true, env = "PETSTORE_PORTFOLIO_CONFIG")]
    config: Option<PathBuf>,
    /// Base URL used in links the server hands out (default: the bound address).
    #[arg(long, global = true, env = "PETSTORE_PORTFOLIO_PUBLIC_URL")]
    public_url: Option<String>,
    /// Certificate chain (PEM): with --tls-key, serve HTTPS only.
    #[arg(long, global = true, env = "PETSTORE_PORTFOLIO_TLS_CERT")]
    tls_cert: Option<PathBuf>,
    /// Private key (PEM) of --tls-cert.
    #[arg(long, global = true, env = "PETSTORE_PORTFOLIO_TLS_KEY")]
    tls_key: Option<PathBuf>,
    /// `redis://...`: rate-limit counters shared by every replica.
    #[arg(
        long,
        global = true,
        env = "PETSTORE_PORTFOLIO_REDIS_URL",
        hide_env_values = true
    )]
    redis_url: Option<String>,
    /// Serve Prometheus metrics at `/metrics` on this address (off by default).
    #[arg(long, global = true, env = "PETSTORE_PORTFOLIO_METRICS_BIND")]
    metrics_bind: Option<std::net::SocketAddr>,
    /// Export each request's span to this OTLP/HTTP endpoint
    /// (`http://collector:4318`; off by default).
    #[arg(long, global = true, env = "PETSTORE_PORTFOLIO_OTLP_ENDPOINT")]
    otlp_endpoint: Option<String>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve both services (the default).
    Serve,
    /// Print the JSON Schema of the configuration file.
    ConfigSchema,
    /// API keys: create, list, rotate, revoke.
    #[command(subcommand)]
    Keys(cli::keys::KeysCommand),
    /// Requests for API keys: list, approve, reject.
    #[command(subcommand)]
    KeyRequests(cli::key_requests::KeyRequestsCommand),
    /// OAuth clients (bearer tokens for the portfolio): create, list, revoke.
    #[command(subcommand)]
    Clients(cli::clients::ClientsCommand),
    /// The portfolio's content file: import it into the database.
    #[command(subcommand)]
    Content(cli::content::ContentCommand),
    /// Print a link that signs in to the owner's console (/console/) once,
    /// within 15 minutes.
    ConsoleLink {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// The emails of the outbox: list them, requeue the failed ones.
    #[command(subcommand)]
    Outbox(cli::outbox::OutboxCommand),
    /// Copy the SQLite database to a new file, consistently, while a server
    /// may be writing it; the copy is checked before it is kept.
    Backup {
        /// The file to write (it must not exist).
        #[arg(long)]
        to: PathBuf,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Put a backup in place of the SQLite database (no server may be
    /// running on the data directory); the database it replaces is kept.
    Restore {
        /// The backup to restore.
        #[arg(long)]
        from: PathBuf,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let overrides = Overrides {
        bind: cli.bind,
        data_dir: cli.data_dir.clone(),
        database_url: cli.database_url.clone(),
        public_url: cli.public_url.clone(),
        tls_cert: cli.tls_cert.clone(),
        tls_key: cli.tls_key.clone(),
        redis_url: cli.redis_url.clone(),
        metrics_bind: cli.metrics_bind,
        otlp_endpoint: cli.otlp_endpoint.clone(),
    };
    let config = match Config::load(cli.config.as_deref(), &overrides) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("error: invalid configuration: {e}");
            return ExitCode::from(2);
        }
    };
    match cli.command.unwrap_or(Command::Serve) {
        Command::ConfigSchema => {
            match serde_json::to_string_pretty(&Config::json_schema()) {
                Ok(schema) => println!("{schema}"),
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::FAILURE;
                }
            }
            ExitCode::SUCCESS
        }
        Command::Keys(command) => exit_code(cli::keys::run(&config, command).await),
        Command::KeyRequests(command) => exit_code(cli::key_requests::run(&config, command).await),
        Command::Clients(command) => exit_code(cli::clients::run(&config, command).await),
        Command::Outbox(command) => exit_code(cli::outbox::run(&config, command).await),
        Command::ConsoleLink { json } => exit_code(cli::console::link(&config, json).await),
        Command::Content(command) => exit_code(cli::content::run(&config, command).await),
        Command::Backup { to, json } => exit_code(cli::backup::backup(&config, to, json).await),
        Command::Restore { from, json } => {
            exit_code(cli::backup::restore(&config, from, json).await)
        }
        Command::Serve => exit_code(serve(config).await),
    }
}

/// Success, or the error on stderr and a failing exit code.
fn exit_code(result: anyhow::Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", cli::error_line(&e));
            ExitCode::FAILURE
        }
    }
}

async fn serve(config: Config) -> anyhow::Result<()> {
    let otlp_endpoint = config
        .otlp_endpoint
        .as_ref()
        .map(ExposeSecret::expose_secret);
    let telemetry = telemetry::init(&config.log, otlp_endpoint)?;
    let server = Server::bind(config).await?;
    let base = format!("{}://{}", server.scheme(), server.local_addr());
    // Where it listens, for people and for scripts that wait for the first
    // line. A closed stdout (a supervisor that does not read it) is no
    // reason to stop.
    let _ = writeln!(
        std::io::stdout(),
        "petstore-portfolio listening on {base}\n  \
         pet store:  {base}/v2   (document: {base}{})\n  \
         portfolio:  {base}/api  (document: {base}{})\n  \
         Swagger UI: {base}{}/\n  \
         client profiles (to generate clients from): {base}{} {base}{}",
        docs::PETSTORE_JSON_PATH,
        docs::PORTFOLIO_JSON_PATH,
        docs::SWAGGER_UI_PATH,
        docs::PETSTORE_CLIENT_PROFILE_PATH,
        docs::PORTFOLIO_CLIENT_PROFILE_PATH
    );
    if let Some(metrics) = server.metrics_addr() {
        let _ = writeln!(std::io::stdout(), "  metrics:    http://{metrics}/metrics");
    }
    let served = server.run(shutdown_signal()).await;
    // Blocking: the last spans' export (bounded by the exporter's timeout).
    tokio::task::spawn_blocking(move || telemetry.shutdown()).await?;
    served
}

/// Ctrl-C or SIGTERM: stop accepting, finish what is in flight.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
    tracing::info!("asked to stop");
}
