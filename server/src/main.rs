//! `petstore-portfolio`: serves both services; operator tasks are subcommands.

use secrecy::ExposeSecret;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use petstore_portfolio_server::config::{Config, Overrides, Profile};
use petstore_portfolio_server::{ConfigSource, Server, cli, docs, telemetry};
use std::sync::Arc;

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
    version = concat!(
        env!("CARGO_PKG_VERSION"),
        " (commit ", env!("BUILT_FROM_COMMIT"), ", built ", env!("BUILT_ON"), ")"
    ),
    about = "Pet Store (/v2) and Portfolio (/api) services"
)]
struct Cli {
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
    /// How the server runs when no command is given (as `serve`).
    #[command(flatten)]
    serve: ServeArgs,
    #[command(subcommand)]
    command: Option<Command>,
}

/// The flags of a running server: `serve`'s (and `doctor`'s, which checks
/// what `serve` would open). The other commands work on the database only.
#[derive(Debug, Clone, Default, clap::Args)]
struct ServeArgs {
    /// Address to listen on (port 0 picks a free port).
    #[arg(long, env = "PETSTORE_PORTFOLIO_BIND")]
    bind: Option<std::net::SocketAddr>,
    /// Base URL used in links the server hands out (default: the bound address).
    #[arg(long, env = "PETSTORE_PORTFOLIO_PUBLIC_URL")]
    public_url: Option<String>,
    /// Certificate chain (PEM): with --tls-key, serve HTTPS only.
    #[arg(long, env = "PETSTORE_PORTFOLIO_TLS_CERT")]
    tls_cert: Option<PathBuf>,
    /// Private key (PEM) of --tls-cert.
    #[arg(long, env = "PETSTORE_PORTFOLIO_TLS_KEY")]
    tls_key: Option<PathBuf>,
    /// `redis://...`: rate-limit counters shared by every replica.
    #[arg(long, env = "PETSTORE_PORTFOLIO_REDIS_URL", hide_env_values = true)]
    redis_url: Option<String>,
    /// Serve Prometheus metrics at `/metrics` on this address (off by default).
    #[arg(long, env = "PETSTORE_PORTFOLIO_METRICS_BIND")]
    metrics_bind: Option<std::net::SocketAddr>,
    /// Export each request's span to this OTLP/HTTP endpoint
    /// (`http://collector:4318`; off by default).
    #[arg(long, env = "PETSTORE_PORTFOLIO_OTLP_ENDPOINT")]
    otlp_endpoint: Option<String>,
    /// `production`: no demo data or sample users, the pet store's auth
    /// enforced, a rate limit, no CORS origin unless named.
    #[arg(long, value_enum, env = "PETSTORE_PORTFOLIO_PROFILE")]
    profile: Option<Profile>,
}

impl ServeArgs {
    /// `self`'s flags, over `outer`'s (given before the command).
    fn over(self, outer: ServeArgs) -> ServeArgs {
        ServeArgs {
            bind: self.bind.or(outer.bind),
            public_url: self.public_url.or(outer.public_url),
            tls_cert: self.tls_cert.or(outer.tls_cert),
            tls_key: self.tls_key.or(outer.tls_key),
            redis_url: self.redis_url.or(outer.redis_url),
            metrics_bind: self.metrics_bind.or(outer.metrics_bind),
            otlp_endpoint: self.otlp_endpoint.or(outer.otlp_endpoint),
            profile: self.profile.or(outer.profile),
        }
    }
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve both services (the default).
    Serve(ServeArgs),
    /// Check what `serve` would open: the configuration, the database and
    /// its migrations, SMTP, Redis, the certificate, the data directory.
    /// Exits non-zero when a check fails.
    Doctor {
        #[command(flatten)]
        serve: ServeArgs,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// The database's migrations: apply the pending ones (a SQLite database
    /// is backed up first), or list them with --dry-run.
    Migrate {
        /// List the applied and pending migrations; change nothing.
        #[arg(long)]
        dry_run: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Ask a running server's readiness (`/api/health/ready`) on the
    /// configured address: exit 0 when it is ready. For a container's
    /// health check.
    Healthcheck {
        #[command(flatten)]
        serve: ServeArgs,
    },
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
    // `--json` anywhere on the line: errors are JSON too, those of the
    // command line itself included.
    let json = std::env::args_os().skip(1).any(|arg| arg == "--json");
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if json && e.use_stderr() => {
            let message = e.to_string();
            let message = message.strip_prefix("error: ").unwrap_or(&message);
            return fail(true, &e.kind().to_string(), message, 2);
        }
        Err(e) => e.exit(),
    };
    let mut command = cli.command.unwrap_or(Command::Serve(ServeArgs::default()));
    // `serve`'s flags, given before the command or after it.
    let serve_args = match &mut command {
        Command::Serve(args)
        | Command::Doctor { serve: args, .. }
        | Command::Healthcheck { serve: args } => std::mem::take(args).over(cli.serve),
        _ => cli.serve,
    };
    let overrides = Overrides {
        bind: serve_args.bind,
        data_dir: cli.data_dir.clone(),
        database_url: cli.database_url.clone(),
        public_url: serve_args.public_url.clone(),
        tls_cert: serve_args.tls_cert.clone(),
        tls_key: serve_args.tls_key.clone(),
        redis_url: serve_args.redis_url.clone(),
        metrics_bind: serve_args.metrics_bind,
        otlp_endpoint: serve_args.otlp_endpoint.clone(),
        profile: serve_args.profile,
    };
    let config_file = cli.config.clone();
    let load = move || Config::load(config_file.as_deref(), &overrides);
    let config = match load() {
        Ok(config) => config,
        Err(e) if matches!(command, Command::Doctor { .. }) => {
            // The doctor's first finding: the rest cannot be checked.
            let json = matches!(command, Command::Doctor { json: true, .. });
            return exit_code(json, cli::doctor::report_configuration_error(json, &e));
        }
        Err(e) => {
            return fail(
                json,
                "configuration",
                &format!("invalid configuration: {e}"),
                2,
            );
        }
    };
    match command {
        Command::ConfigSchema => {
            match serde_json::to_string_pretty(&Config::json_schema()) {
                Ok(schema) => println!("{schema}"),
                Err(e) => return fail(json, "internal", &e.to_string(), 1),
            }
            ExitCode::SUCCESS
        }
        Command::Doctor { json, .. } => exit_code(json, cli::doctor::run(&config, json).await),
        Command::Migrate { dry_run, json } => {
            exit_code(json, cli::migrate::run(&config, dry_run, json).await)
        }
        Command::Healthcheck { .. } => exit_code(false, cli::healthcheck::run(&config).await),
        Command::Keys(command) => exit_code(json, cli::keys::run(&config, command).await),
        Command::KeyRequests(command) => {
            exit_code(json, cli::key_requests::run(&config, command).await)
        }
        Command::Clients(command) => exit_code(json, cli::clients::run(&config, command).await),
        Command::Outbox(command) => exit_code(json, cli::outbox::run(&config, command).await),
        Command::ConsoleLink { json } => exit_code(json, cli::console::link(&config, json).await),
        Command::Content(command) => exit_code(json, cli::content::run(&config, command).await),
        Command::Backup { to, json } => {
            exit_code(json, cli::backup::backup(&config, to, json).await)
        }
        Command::Restore { from, json } => {
            exit_code(json, cli::backup::restore(&config, from, json).await)
        }
        Command::Serve(_) => exit_code(false, serve(config, Arc::new(move || Ok(load()?))).await),
    }
}

/// Success, or the error on stderr (JSON with `--json`) and a failing
/// exit code.
fn exit_code(json: bool, result: anyhow::Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.is::<cli::Reported>() => ExitCode::FAILURE,
        Err(e) => fail(json, "failed", &cli::error_line(&e), 1),
    }
}

/// Says why the command failed, on stderr: `error: ...`, or with `--json`
/// `{"error": {"kind": ..., "message": ...}}`.
fn fail(json: bool, kind: &str, message: &str, code: u8) -> ExitCode {
    let mut stderr = std::io::stderr().lock();
    if json {
        let error = serde_json::json!({"error": {"kind": kind, "message": message.trim_end()}});
        let _ = writeln!(stderr, "{error}");
    } else {
        let _ = writeln!(stderr, "error: {}", message.trim_end());
    }
    ExitCode::from(code)
}

async fn serve(config: Config, reload: ConfigSource) -> anyhow::Result<()> {
    // SIGHUP's default is to stop the process: a handler from the first
    // moment (tokio's stays for the process's life) lets one sent during
    // the start pass; the server reloads at those that come once it runs.
    #[cfg(unix)]
    let _ = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup());
    let otlp_endpoint = config
        .otlp_endpoint
        .as_ref()
        .map(ExposeSecret::expose_secret);
    let telemetry = telemetry::init(&config.log, otlp_endpoint)?;
    let server = Server::bind(config).await?.reload_config_from(reload);
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
