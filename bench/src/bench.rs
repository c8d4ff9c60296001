//! `cargo xtask bench`: the release server beside the framework's ceiling
//! (a bare axum server answering the same bytes, `bench/ceiling`),
//! both driven by one load generator (wrk) in the same run, and a table of
//! the figures with each one's ratio to the ceiling. It measures; it asserts
//! nothing (the machines are noisy: compare ratios, not rates).

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context as _;

use crate::load::{
    Ceiling, Figures, Options, WRK_THREAD_INDEX, build_ceiling, find_or_install, measure,
    record_answer, send_all, write_answer,
};
use crate::postgres::FreshDatabases;
use crate::smtp::SmtpSink;
use crate::stress::{Server, build_release, client};

/// The API key the run gives `GET /api/llm-context` (from the environment,
/// as an operator's configuration would hold it).
pub(crate) const BENCH_KEY: &str = "bench-key-0123456789abcdef";

/// The server's environment for a run: rate limits raised (a run measures
/// the work, not the limiter), the API keys `keys` (a TOML array), and
/// emails to the local SMTP server on `smtp_port`.
pub(crate) fn server_env<'a>(keys: &'a str, smtp_port: &'a str) -> Vec<(&'static str, &'a str)> {
    vec![
        (
            "PETSTORE_PORTFOLIO_PORTFOLIO__RATE_LIMIT__PER_KEY_PER_MINUTE",
            "1000000000",
        ),
        (
            "PETSTORE_PORTFOLIO_PORTFOLIO__RATE_LIMIT__ANONYMOUS_PER_MINUTE",
            "1000000000",
        ),
        ("PETSTORE_PORTFOLIO_PORTFOLIO__API_KEYS", keys),
        ("PETSTORE_PORTFOLIO_MAIL__SMTP__HOST", "127.0.0.1"),
        ("PETSTORE_PORTFOLIO_MAIL__SMTP__PORT", smtp_port),
        ("PETSTORE_PORTFOLIO_MAIL__SMTP__TLS", "none"),
    ]
}

/// One measured request (`place-order` has a script of its own: each order
/// is for another available pet, see [`wrk_script`]).
struct Endpoint {
    name: &'static str,
    method: &'static str,
    path: &'static str,
    headers: &'static [(&'static str, &'static str)],
    body: Option<&'static str>,
}

const ENDPOINTS: &[Endpoint] = &[
    Endpoint {
        name: "pet-json",
        method: "GET",
        path: "/v2/pet/1",
        headers: &[("Accept", "application/json")],
        body: None,
    },
    Endpoint {
        name: "pet-xml",
        method: "GET",
        path: "/v2/pet/1",
        headers: &[("Accept", "application/xml")],
        body: None,
    },
    Endpoint {
        name: "find-by-status",
        method: "GET",
        path: "/v2/pet/findByStatus?status=available",
        headers: &[],
        body: None,
    },
    Endpoint {
        name: "inventory",
        method: "GET",
        path: "/v2/store/inventory",
        headers: &[],
        body: None,
    },
    Endpoint {
        name: "add-pet",
        method: "POST",
        path: "/v2/pet",
        headers: &[("Content-Type", "application/json")],
        body: Some(
            r#"{"name":"bench","photoUrls":["https://example.com/p.png"],"status":"available"}"#,
        ),
    },
    // The same pet with a new Idempotency-Key each time: what keeping the
    // answer for a retry costs.
    // A pet as the official clients send one: with a category and tags
    // (each tag a row of its own).
    Endpoint {
        name: "add-pet-tags",
        method: "POST",
        path: "/v2/pet",
        headers: &[("Content-Type", "application/json")],
        body: Some(
            r#"{"name":"bench","category":{"id":1,"name":"Dogs"},"photoUrls":["https://example.com/p.png"],"tags":[{"id":1,"name":"bench"},{"id":2,"name":"tagged"}],"status":"available"}"#,
        ),
    },
    Endpoint {
        name: "add-pet-keyed",
        method: "POST",
        path: "/v2/pet",
        headers: &[
            ("Content-Type", "application/json"),
            ("Idempotency-Key", "bench-keyed-sample"),
        ],
        body: Some(
            r#"{"name":"bench","photoUrls":["https://example.com/p.png"],"status":"available"}"#,
        ),
    },
    // One key, sent again and again: every request after the first is a
    // retry, answered from the kept answer (one read by the primary key).
    Endpoint {
        name: "add-pet-replayed",
        method: "POST",
        path: "/v2/pet",
        headers: &[
            ("Content-Type", "application/json"),
            ("Idempotency-Key", "bench-replayed"),
        ],
        body: Some(
            r#"{"name":"bench","photoUrls":["https://example.com/p.png"],"status":"available"}"#,
        ),
    },
    Endpoint {
        name: "place-order",
        method: "POST",
        path: "/v2/store/order",
        headers: &[("Content-Type", "application/json")],
        body: Some(r#"{"petId":1,"quantity":1,"status":"placed"}"#),
    },
    Endpoint {
        name: "site-info",
        method: "GET",
        path: "/api/site-info",
        headers: &[],
        body: None,
    },
    Endpoint {
        name: "llm-context",
        method: "GET",
        path: "/api/llm-context",
        headers: &[("X-API-Key", BENCH_KEY)],
        body: None,
    },
];

/// The endpoints measured again on a server with what an operator turns
/// on: metrics (`--metrics-bind`) and the access log (written to a file).
const OBSERVED: &[&str] = &[
    "pet-json",
    "pet-xml",
    "find-by-status",
    "inventory",
    "add-pet",
    "site-info",
    "llm-context",
];

pub async fn run(root: &Path, options: &Options) -> anyhow::Result<()> {
    let wrk = find_or_install("wrk", "wrk")?;
    let binary = build_release(root)?;
    let ceiling_binary = build_ceiling(root)?;
    let scripts = tempfile::tempdir()?;

    // On PostgreSQL each server of the run gets a fresh database, as each
    // gets a fresh SQLite file.
    let mut databases = options.database_url.as_deref().map(FreshDatabases::new);
    let mut database_args = |purpose: &str| -> anyhow::Result<Vec<String>> {
        Ok(match databases.as_mut() {
            Some(databases) => vec!["--database-url".to_owned(), databases.create(purpose)?],
            None => Vec::new(),
        })
    };
    let args = database_args("main")?;
    let mix_args = database_args("mix")?;
    let hot_spot_args = database_args("hot_spot")?;
    let bench_key = format!(r#"{{name="bench",key="{BENCH_KEY}",scopes=["admin"]}}"#);
    let keys = format!("[{bench_key}]");
    let mix_keys = format!("[{bench_key},{}]", crate::mix::mix_keys_config());
    let smtp = SmtpSink::start(root)?;
    let smtp_port = smtp.port.to_string();
    let env = server_env(&keys, &smtp_port);
    let http = client()?;
    // The start is noisy on a shared machine (a first run of a fresh
    // binary reads it from disk; a busy neighbour delays a thread): the
    // median of five starts, each on fresh data. The last is the server
    // the table measures.
    let mut starts = Vec::new();
    for n in 1..START_SAMPLES {
        let args = database_args(&format!("start{n}"))?;
        // Stopped at once: only its start is measured.
        let (_stopped, first_answer) = start_and_ask(&http, &binary, &env, &args).await?;
        starts.push(first_answer);
    }
    let (server, first_answer) = start_and_ask(&http, &binary, &env, &args).await?;
    starts.push(first_answer);
    starts.sort();
    let first_answer = starts[starts.len() / 2];
    let mut first_new_pet = 0;

    // The ceiling answers each endpoint with the bytes the server answered.
    let answers = tempfile::tempdir()?;
    for endpoint in ENDPOINTS {
        let mut request = http.request(
            endpoint.method.parse()?,
            format!("{}{}", server.url, endpoint.path),
        );
        for (name, value) in endpoint.headers {
            request = request.header(*name, *value);
        }
        if let Some(body) = endpoint.body {
            request = request.body(body);
        }
        let response = request.send().await?;
        let status = response.status();
        anyhow::ensure!(status.is_success(), "{} answered {status}", endpoint.name);
        if endpoint.name == "add-pet" {
            // The pets `add-pet` adds under load come after this one; they
            // are the available pets `place-order` orders.
            let pet: serde_json::Value = response.json().await?;
            first_new_pet = pet["id"].as_i64().context("add-pet: no id")? + 1;
            let body = serde_json::to_vec(&pet)?;
            write_answer(
                answers.path(),
                endpoint.name,
                "application/json",
                &body,
                status,
            )?;
            continue;
        }
        record_answer(answers.path(), endpoint.name, response).await?;
    }
    let ceiling = Ceiling::start(&ceiling_binary, answers.path())?;

    // The same server, observed: metrics recorded (scraped by nobody, which
    // costs the same) and an access-log line per request, to a file.
    let logs = tempfile::tempdir()?;
    let access_log = logs.path().join("access.log");
    let mut observed_env = env.to_vec();
    observed_env.push(("RUST_LOG", "error,access=info"));
    let mut observed_args = args.clone();
    observed_args.extend(["--metrics-bind".to_owned(), "127.0.0.1:0".to_owned()]);
    let observed = Server::spawn(
        &binary,
        &observed_env,
        &format!("exec 2>'{}';", access_log.display()),
        &observed_args,
    )?;

    let database = options
        .database_url
        .as_deref()
        .map_or("SQLite (a fresh file)", |_| "PostgreSQL");
    println!(
        "cargo xtask bench: release build on {database}; wrk, {} connections, 2 threads, {} s per run",
        options.connections, options.seconds
    );
    println!(
        "{:<16} {:>10} {:>8} {:>8} | {:>10} {:>8} {:>8} | {:>6} {:>7}",
        "endpoint", "req/s", "p50 ms", "p99 ms", "ceiling", "p50 ms", "p99 ms", "ratio", "p99 x"
    );
    // Both servers, and the machine, warm up on reads first: the first run
    // of a fresh process (and of wrk) is slower, and would weigh on
    // whichever endpoint came first.
    if let Some(first) = ENDPOINTS.first() {
        let script = scripts.path().join("warm-up.lua");
        std::fs::write(&script, wrk_script(first, first_new_pet))?;
        let warm_up = Options {
            seconds: options.seconds.min(2),
            ..options.clone()
        };
        measure(
            &wrk,
            &format!("{}/{}", ceiling.url, first.name),
            &script,
            &warm_up,
        )?;
        for url in [&server.url, &observed.url] {
            measure(&wrk, &format!("{url}{}", first.path), &script, &warm_up)?;
        }
    }
    let mut rows: Vec<(&str, Figures, Figures)> = Vec::new();
    for endpoint in ENDPOINTS.iter().filter(|e| options.measures(e.name)) {
        let script = scripts.path().join(format!("{}.lua", endpoint.name));
        std::fs::write(&script, wrk_script(endpoint, first_new_pet))?;
        let top = measure(
            &wrk,
            &format!("{}/{}", ceiling.url, endpoint.name),
            &script,
            options,
        )?;
        let ours = measure(
            &wrk,
            &format!("{}{}", server.url, endpoint.path),
            &script,
            options,
        )?;
        print_row(endpoint.name, &ours, &top);
        rows.push((endpoint.name, ours, top));
        if OBSERVED.contains(&endpoint.name) {
            let seen = measure(
                &wrk,
                &format!("{}{}", observed.url, endpoint.path),
                &script,
                options,
            )?;
            println!(
                "{:<16} {:>10.0} {:>8.2} {:>8.2} | {:>10} {:>8} {:>8} | {:>6.2} {:>7.1}{}",
                "  + observed",
                seen.requests_per_sec,
                seen.p50_ms,
                seen.p99_ms,
                "",
                "",
                "",
                seen.requests_per_sec / top.requests_per_sec,
                seen.p99_ms / top.p99_ms,
                if seen.errors > 0 {
                    format!("  ({} answers not 2xx)", seen.errors)
                } else {
                    String::new()
                }
            );
        }
    }
    let logged = std::fs::read_to_string(&access_log)
        .map(|text| text.lines().count())
        .unwrap_or(0);
    println!(
        "observed server (+ observed: metrics on, access log on): {logged} access-log lines written, \
         peak resident memory {:.1} MiB",
        observed.peak_rss_mib()?
    );
    drop(observed);
    // On PostgreSQL the rows before wrote thousands of pets, and its
    // checkpoint of them would land in the mix (slower, with a far longer
    // tail than the mix run alone): they are written out before it.
    if let Some(databases) = &databases {
        databases.checkpoint()?;
    }
    // The mixes, on a server of their own with a fresh database.
    let mut mix_env = env.to_vec();
    mix_env.retain(|(name, _)| *name != "PETSTORE_PORTFOLIO_PORTFOLIO__API_KEYS");
    mix_env.push(("PETSTORE_PORTFOLIO_PORTFOLIO__API_KEYS", mix_keys.as_str()));
    let mix_server = Server::start_with_args(&binary, &mix_env, &mix_args)?;
    if options.measures("pet-store-mix") {
        let (ours, top) =
            crate::mix::pet_store(&wrk, &ceiling_binary, &mix_server, &http, options).await?;
        print_row("pet store mix", &ours, &top);
        rows.push(("pet-store-mix", ours, top));
    }
    if options.measures("portfolio-mix") {
        let (ours, top) =
            crate::mix::portfolio(&wrk, &ceiling_binary, &mix_server, &http, options).await?;
        print_row("portfolio mix", &ours, &top);
        rows.push(("portfolio-mix", ours, top));
    }
    println!(
        "mix server: peak resident memory {:.1} MiB",
        mix_server.peak_rss_mib()?
    );
    drop(mix_server);
    if options.measures("hot-spot-mix") {
        let hot_server = Server::start_with_args(&binary, &env, &hot_spot_args)?;
        let (ours, top) =
            crate::mix::hot_spot(&wrk, &ceiling_binary, &hot_server, &http, options).await?;
        print_row("hot-spot mix", &ours, &top);
        rows.push(("hot-spot-mix", ours, top));
    }
    let point_reads = match databases.as_mut() {
        Some(databases) => {
            let tps = crate::postgres::pgbench_point_reads(databases, options.seconds)?;
            println!(
                "PostgreSQL's own point reads (pgbench -S -M prepared, 16 clients): {tps:.0} tps"
            );
            Some(tps)
        }
        None => None,
    };
    if options.only.is_none() {
        let rate = |name: &str| {
            rows.iter()
                .find(|(n, _, _)| *n == name)
                .map_or(0.0, |(_, ours, _)| ours.requests_per_sec)
        };
        println!(
            "durable POST /v2/pet / GET /v2/pet/1: {:.2}",
            rate("add-pet") / rate("pet-json")
        );
        println!(
            "POST /v2/pet with a new Idempotency-Key / without one: {:.2}",
            rate("add-pet-keyed") / rate("add-pet")
        );
        println!(
            "replayed POST /v2/pet (same key) / GET /v2/pet/1: {:.2}",
            rate("add-pet-replayed") / rate("pet-json")
        );
    }
    println!(
        "start to first answer: {} ms (median of {START_SAMPLES} starts: {})",
        first_answer.as_millis(),
        starts
            .iter()
            .map(|start| format!("{} ms", start.as_millis()))
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!(
        "peak resident memory of the server: {:.1} MiB",
        server.peak_rss_mib()?
    );
    if options.database_url.is_none() && options.measures("instructions") {
        let (ours, top) = crate::instructions::per_cached_read(
            &http,
            &binary,
            &env,
            &ceiling_binary,
            answers.path(),
        )
        .await?;
        println!(
            "instructions per cached GET /v2/pet/1 (callgrind, inside the runtime's tasks): \
             {ours:.0}, ceiling {top:.0} ({:.2} x)",
            ours / top
        );
    }
    if options.measures("find-by-status-scaling") {
        find_by_status_scaling(&server, &http).await?;
    }
    if options.measures("list-pullers") {
        list_pullers(&server, &http, &wrk, scripts.path(), options).await?;
    }
    if options.measures("notify") {
        notify_subscribers(&server, &http, &smtp).await?;
    }
    let peak_rss = server.peak_rss_mib()?;
    println!("peak resident memory of the server, whole run: {peak_rss:.1} MiB");
    if options.only.is_some() {
        return Ok(());
    }
    let targets = match point_reads {
        None => sqlite_targets(&rows, first_answer, peak_rss),
        Some(tps) => postgres_targets(&rows, tps, first_answer),
    };
    print_targets(&targets);
    Ok(())
}

/// One of the targets BENCHMARKS.md sets: what was measured, and the bound
/// it must meet.
struct Target {
    what: &'static str,
    measured: f64,
    /// At least this (`true`) or at most this (`false`).
    at_least: bool,
    bound: f64,
}

impl Target {
    fn met(&self) -> bool {
        if self.at_least {
            self.measured >= self.bound
        } else {
            self.measured <= self.bound
        }
    }
}

fn figures<'a>(
    rows: &'a [(&str, Figures, Figures)],
    name: &str,
) -> Option<&'a (&'a str, Figures, Figures)> {
    rows.iter().find(|(n, _, _)| *n == name)
}

/// How many starts the start time printed is the median of.
const START_SAMPLES: usize = 5;

/// Starts the server and asks for `GET /v2/pet/1` every millisecond until
/// it answers; the server and the time from the start to its first answer.
async fn start_and_ask(
    http: &reqwest::Client,
    binary: &Path,
    env: &[(&str, &str)],
    args: &[String],
) -> anyhow::Result<(Server, Duration)> {
    let started = Instant::now();
    let server = Server::start_with_args(binary, env, args)?;
    loop {
        let answered = http.get(format!("{}/v2/pet/1", server.url)).send().await;
        if answered.is_ok_and(|r| r.status().is_success()) {
            return Ok((server, started.elapsed()));
        }
        anyhow::ensure!(
            started.elapsed() < Duration::from_secs(30),
            "the server does not answer"
        );
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// The ratio of a row's rate to its ceiling's, and of its p99 to the ceiling's.
fn ratios(rows: &[(&str, Figures, Figures)], name: &str) -> (f64, f64) {
    figures(rows, name).map_or((0.0, f64::INFINITY), |(_, ours, top)| {
        (
            ours.requests_per_sec / top.requests_per_sec,
            ours.p99_ms / top.p99_ms,
        )
    })
}

fn sqlite_targets(
    rows: &[(&str, Figures, Figures)],
    start: Duration,
    peak_rss: f64,
) -> Vec<Target> {
    let rate = |name| figures(rows, name).map_or(0.0, |(_, ours, _)| ours.requests_per_sec);
    let (mix, mix_p99) = ratios(rows, "pet-store-mix");
    let (hot, hot_p99) = ratios(rows, "hot-spot-mix");
    let (order, order_p99) = ratios(rows, "place-order");
    let at_least = |what, measured, bound| Target {
        what,
        measured,
        at_least: true,
        bound,
    };
    let at_most = |what, measured, bound| Target {
        what,
        measured,
        at_least: false,
        bound,
    };
    vec![
        at_least("pet store mix / ceiling", mix, 0.45),
        at_most("pet store mix p99 / ceiling's", mix_p99, 6.0),
        at_least("hot-spot mix / ceiling", hot, 0.45),
        at_most("hot-spot mix p99 / ceiling's", hot_p99, 6.0),
        at_least("inventory / ceiling", ratios(rows, "inventory").0, 0.4),
        at_least(
            "llm-context with a key / ceiling",
            ratios(rows, "llm-context").0,
            0.4,
        ),
        at_least("placeOrder / ceiling", order, 0.15),
        at_most("placeOrder p99 / ceiling's", order_p99, 3.0),
        at_least(
            "addPet with tags / GET /v2/pet/1",
            rate("add-pet-tags") / rate("pet-json"),
            0.25,
        ),
        at_least("GET /v2/pet/1 / ceiling", ratios(rows, "pet-json").0, 0.6),
        at_most("peak resident memory, MiB", peak_rss, 64.0),
        at_most(
            "start to first answer, ms",
            start.as_secs_f64() * 1000.0,
            100.0,
        ),
    ]
}

fn postgres_targets(
    rows: &[(&str, Figures, Figures)],
    point_reads: f64,
    start: Duration,
) -> Vec<Target> {
    let of_pgbench =
        |name| figures(rows, name).map_or(0.0, |(_, ours, _)| ours.requests_per_sec / point_reads);
    let at_least = |what, measured, bound| Target {
        what,
        measured,
        at_least: true,
        bound,
    };
    vec![
        at_least("GET /v2/pet/1 / pgbench -S", of_pgbench("pet-json"), 0.5),
        at_least(
            "pet store mix / pgbench -S",
            of_pgbench("pet-store-mix"),
            0.35,
        ),
        at_least(
            "hot-spot mix / pgbench -S",
            of_pgbench("hot-spot-mix"),
            0.45,
        ),
        at_least("placeOrder / pgbench -S", of_pgbench("place-order"), 0.1),
        Target {
            what: "start to first answer, ms",
            measured: start.as_secs_f64() * 1000.0,
            at_least: false,
            bound: 150.0,
        },
    ]
}

fn print_targets(targets: &[Target]) {
    println!("the targets (BENCHMARKS.md), in this run:");
    for target in targets {
        println!(
            "  {:<38} {:>8.2} {} {:<6} {}",
            target.what,
            target.measured,
            if target.at_least { ">=" } else { "<=" },
            target.bound,
            if target.met() { "met" } else { "MISSED" }
        );
    }
}

fn print_row(name: &str, ours: &Figures, top: &Figures) {
    println!(
        "{:<16} {:>10.0} {:>8.2} {:>8.2} | {:>10.0} {:>8.2} {:>8.2} | {:>6.2} {:>7.1}{}",
        name,
        ours.requests_per_sec,
        ours.p50_ms,
        ours.p99_ms,
        top.requests_per_sec,
        top.p50_ms,
        top.p99_ms,
        ours.requests_per_sec / top.requests_per_sec,
        ours.p99_ms / top.p99_ms,
        if ours.errors > 0 {
            format!("  ({} answers not 2xx)", ours.errors)
        } else {
            String::new()
        }
    );
}

/// `findByStatus` over 1k, 10k and 100k pets: `sold` pets are added up to
/// each count (the load above adds only available and pending ones), and
/// the whole list is read a few times. It prints the time per pet and the
/// server's resident memory after each, which must not grow with the list.
async fn find_by_status_scaling(server: &Server, http: &reqwest::Client) -> anyhow::Result<()> {
    const READS: usize = 5;
    println!("findByStatus?status=sold (median of {READS} reads, whole body):");
    println!(
        "{:>8} {:>10} {:>10} {:>12} {:>12}",
        "pets", "ms", "us/pet", "body MiB", "RSS MiB"
    );
    for count in [1_000_usize, 10_000, 100_000] {
        let sold = sold_pets(http, &server.url).await?;
        add_sold_pets(http, &server.url, count.saturating_sub(sold)).await?;
        let mut times = Vec::new();
        let mut size = 0;
        for _ in 0..READS {
            let started = Instant::now();
            let response = http
                .get(format!("{}/v2/pet/findByStatus?status=sold", server.url))
                .send()
                .await?;
            anyhow::ensure!(response.status().is_success(), "findByStatus failed");
            size = response.bytes().await?.len();
            times.push(started.elapsed().as_secs_f64() * 1000.0);
        }
        times.sort_by(f64::total_cmp);
        let median = times[READS / 2];
        println!(
            "{:>8} {:>10.1} {:>10.2} {:>12.1} {:>12.1}",
            count.max(sold),
            median,
            median * 1000.0 / count.max(sold) as f64,
            size as f64 / (1024.0 * 1024.0),
            server.rss_mib()?
        );
    }
    Ok(())
}

/// Whole lists beside everyone else: `GET /v2/pet/1` from 8 connections
/// alone, then again while 8 other clients each pull the whole list of
/// 150,000 sold pets over and over; and what a page of 100 costs at the
/// start of that list and deep in it.
async fn list_pullers(
    server: &Server,
    http: &reqwest::Client,
    wrk: &Path,
    scripts: &Path,
    options: &Options,
) -> anyhow::Result<()> {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    const PULLERS: usize = 8;
    const LISTED: usize = 150_000;
    let sold = sold_pets(http, &server.url).await?;
    add_sold_pets(http, &server.url, LISTED.saturating_sub(sold)).await?;
    let script = scripts.join("get-beside-pullers.lua");
    std::fs::write(&script, "wrk.method = \"GET\"\n")?;
    let get = Options {
        connections: 8,
        ..options.clone()
    };
    let url = format!("{}/v2/pet/1", server.url);
    let alone = measure(wrk, &url, &script, &get)?;

    let stop = Arc::new(AtomicBool::new(false));
    let pulled = Arc::new(AtomicUsize::new(0));
    let pullers: Vec<_> = (0..PULLERS)
        .map(|_| {
            let (http, stop, pulled) = (http.clone(), stop.clone(), pulled.clone());
            let list = format!("{}/v2/pet/findByStatus?status=sold", server.url);
            tokio::spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    let body = http
                        .get(&list)
                        .send()
                        .await?
                        .error_for_status()?
                        .bytes()
                        .await?;
                    anyhow::ensure!(body.ends_with(b"]"), "a whole list was cut short");
                    pulled.fetch_add(1, Ordering::Relaxed);
                }
                anyhow::Ok(())
            })
        })
        .collect();
    let (wrk, script) = (wrk.to_path_buf(), script.clone());
    let crowded = tokio::task::spawn_blocking(move || measure(&wrk, &url, &script, &get)).await??;
    stop.store(true, Ordering::Relaxed);
    for puller in pullers {
        puller.await??;
    }
    println!(
        "GET /v2/pet/1 from 8 connections: alone {:.0} req/s, p99 {:.2} ms; beside {PULLERS} \
         clients pulling whole lists of {LISTED} sold pets ({} lists in {} s): {:.0} req/s ({:.2} \
         of alone), p99 {:.2} ms",
        alone.requests_per_sec,
        alone.p99_ms,
        pulled.load(Ordering::Relaxed),
        options.seconds,
        crowded.requests_per_sec,
        crowded.requests_per_sec / alone.requests_per_sec,
        crowded.p99_ms,
    );

    // Every page of 100 of the list, in order: the first ten's and the
    // last ten's median times.
    let mut times = Vec::new();
    let mut next = Some("/v2/pet/findByStatus?status=sold&limit=100".to_owned());
    while let Some(target) = next.take() {
        let started = Instant::now();
        let response = http
            .get(format!("{}{target}", server.url))
            .send()
            .await?
            .error_for_status()?;
        next = response
            .headers()
            .get(reqwest::header::LINK)
            .and_then(|link| link.to_str().ok())
            .and_then(|link| link.strip_prefix('<'))
            .and_then(|link| link.split_once('>'))
            .map(|(target, _)| target.to_owned());
        response.bytes().await?;
        times.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    let median = |mut some: Vec<f64>| {
        some.sort_by(f64::total_cmp);
        some.get(some.len() / 2).copied().unwrap_or(0.0)
    };
    let first: Vec<f64> = times.iter().take(10).copied().collect();
    let last: Vec<f64> = times.iter().rev().take(10).copied().collect();
    println!(
        "findByStatus?status=sold&limit=100, every page of the list ({} pages): the first ten \
         {:.2} ms, the last ten {:.2} ms (medians)",
        times.len(),
        median(first),
        median(last),
    );
    Ok(())
}

/// 10,000 subscribers, each welcomed by email, then `notify-subscribers`
/// for a post: how long it takes to answer, and how fast the outbox then
/// delivers the emails it queued to the local SMTP server.
async fn notify_subscribers(
    server: &Server,
    http: &reqwest::Client,
    smtp: &SmtpSink,
) -> anyhow::Result<()> {
    const SUBSCRIBERS: usize = 10_000;
    let run = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_millis();
    let before = smtp.delivered()?;
    let started = Instant::now();
    send_all((0..SUBSCRIBERS).map(|n| {
        http.post(format!("{}/api/newsletter", server.url))
            .json(&serde_json::json!({ "email": format!("s{n}-{run}@example.test") }))
    }))
    .await?;
    let subscribing = started.elapsed();
    smtp.wait_for(before + SUBSCRIBERS as u64, Duration::from_secs(120))
        .await?;
    let welcomed = started.elapsed();
    println!(
        "newsletter: {SUBSCRIBERS} subscriptions in {:.1} s; their welcome emails delivered \
         by {:.1} s ({:.0} emails/s overall)",
        subscribing.as_secs_f64(),
        welcomed.as_secs_f64(),
        SUBSCRIBERS as f64 / welcomed.as_secs_f64()
    );

    let before = smtp.delivered()?;
    let started = Instant::now();
    let queued = notify_all(http, &server.url).await?;
    let answered = started.elapsed();
    smtp.wait_for(before + queued, Duration::from_secs(120))
        .await?;
    let delivered = started.elapsed() - answered;
    println!(
        "notify-subscribers: {queued} emails queued, answered in {} ms; delivered in {:.1} s \
         ({:.0} emails/s)",
        answered.as_millis(),
        delivered.as_secs_f64(),
        queued as f64 / delivered.as_secs_f64()
    );
    Ok(())
}

/// How many sold pets the store holds.
async fn sold_pets(http: &reqwest::Client, url: &str) -> anyhow::Result<usize> {
    Ok(usize::try_from(
        inventory(http, url).await?["sold"].as_u64().unwrap_or(0),
    )?)
}

/// The store's inventory, as `getInventory` answers it.
pub(crate) async fn inventory(
    http: &reqwest::Client,
    url: &str,
) -> anyhow::Result<serde_json::Value> {
    Ok(http
        .get(format!("{url}/v2/store/inventory"))
        .send()
        .await?
        .error_for_status()?
        .json()
        .await?)
}

/// `notify-subscribers` for the sample content's newest post, with the
/// run's key: how many emails it queued.
pub(crate) async fn notify_all(http: &reqwest::Client, url: &str) -> anyhow::Result<u64> {
    let posts: serde_json::Value = http
        .get(format!("{url}/api/posts"))
        .send()
        .await?
        .error_for_status()?
        .json()
        .await?;
    let slug = posts
        .as_array()
        .and_then(|posts| posts.first())
        .and_then(|post| post["slug"].as_str())
        .context("no post to announce in the sample content")?
        .to_owned();
    let answer: serde_json::Value = http
        .post(format!("{url}/api/notify-subscribers"))
        .header("X-API-Key", BENCH_KEY)
        .json(&serde_json::json!({ "post_slug": slug }))
        .send()
        .await?
        .error_for_status()?
        .json()
        .await?;
    answer["queued"].as_u64().context("no queued count")
}

/// Adds `count` sold pets, 64 at a time.
async fn add_sold_pets(http: &reqwest::Client, url: &str, count: usize) -> anyhow::Result<()> {
    let body = r#"{"name":"sold","photoUrls":["https://example.com/p.png"],"tags":[{"id":1,"name":"bench"}],"status":"sold"}"#;
    send_all((0..count).map(|_| {
        http.post(format!("{url}/v2/pet"))
            .header("Content-Type", "application/json")
            .body(body)
    }))
    .await
}

/// A wrk script that sends the endpoint's method, headers and body; for
/// `place-order`, an order for each pet from `first_new_pet` on (each wrk
/// thread takes every other one), since an order makes its pet pending.
fn wrk_script(endpoint: &Endpoint, first_new_pet: i64) -> String {
    let mut script = format!("wrk.method = \"{}\"\n", endpoint.method);
    for (name, value) in endpoint.headers {
        script.push_str(&format!("wrk.headers[\"{name}\"] = \"{value}\"\n"));
    }
    if matches!(endpoint.name, "place-order" | "add-pet-keyed") {
        script.push_str(WRK_THREAD_INDEX);
    }
    if endpoint.name == "place-order" {
        script.push_str(&format!(
            r#"function request()
  local pet = {first_new_pet} + sent * 2 + tindex
  sent = sent + 1
  return wrk.format(nil, nil, nil, string.format('{{"petId":%d,"quantity":1,"status":"placed"}}', pet))
end
"#
        ));
    } else if endpoint.name == "add-pet-keyed" {
        let body = endpoint.body.unwrap_or_default();
        script.push_str(&format!(
            r#"function request()
  sent = sent + 1
  local headers = {{}}
  headers["Content-Type"] = "application/json"
  headers["Idempotency-Key"] = string.format("bench-%d-%d", tindex, sent)
  return wrk.format(nil, nil, headers, [[{body}]])
end
"#
        ));
    } else if let Some(body) = endpoint.body {
        script.push_str(&format!("wrk.body = [[{body}]]\n"));
    }
    script
}
