//! Slowloris: the release server with the common file limit of 1,024, and
//! 1,100 connections that send their headers a byte at a time (and come
//! back when cut off). Meanwhile a normal client asks for a pet ten times a
//! second on fresh connections; the figures are how many of those were
//! answered, and how fast.

use std::time::{Duration, Instant};

use tokio::io::AsyncWriteExt as _;
use tokio::net::TcpStream;

use super::{Server, build_release, client};

const SLOW_CONNECTIONS: usize = 1100;
const RUN_FOR: Duration = Duration::from_secs(20);
const DRIP_EVERY: Duration = Duration::from_millis(500);
const NORMAL_EVERY: Duration = Duration::from_millis(100);

pub async fn run(root: &std::path::Path) -> anyhow::Result<()> {
    let binary = build_release(root)?;
    // This process holds the 1,100 connections: it needs more descriptors
    // than the server gets.
    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile);
    rustix::process::setrlimit(
        rustix::process::Resource::Nofile,
        rustix::process::Rlimit {
            current: limit.maximum,
            maximum: limit.maximum,
        },
    )?;
    let server = Server::start(&binary, &[], "ulimit -n 1024;")?;
    let address = server.url.trim_start_matches("http://").to_owned();
    println!(
        "slowloris against the release build on {} (file limit 1,024; default connection cap)",
        server.url
    );

    let until = Instant::now() + RUN_FOR;
    let mut attackers = Vec::new();
    for n in 0..SLOW_CONNECTIONS {
        let address = address.clone();
        attackers.push(tokio::spawn(async move { drip(&address, n, until).await }));
    }
    // Let the attack take its places before measuring.
    tokio::time::sleep(Duration::from_secs(2)).await;

    let http = client()?;
    let mut latencies = Vec::new();
    let mut failures = 0;
    let mut most_open = 0;
    let pet = format!("{}/v2/store/inventory", server.url);
    while Instant::now() < until {
        let started = Instant::now();
        let fresh = reqwest::Client::builder()
            .timeout(Duration::from_secs(5))
            .pool_max_idle_per_host(0)
            .build()?;
        match fresh.get(&pet).send().await {
            Ok(answer) if answer.status().is_success() => latencies.push(started.elapsed()),
            _ => failures += 1,
        }
        most_open = most_open.max(server.open_files());
        tokio::time::sleep(NORMAL_EVERY).await;
    }
    drop(http);
    let mut opened = 0;
    let mut cut_off = 0;
    for attacker in attackers {
        let (o, c) = attacker.await?;
        opened += o;
        cut_off += c;
    }
    latencies.sort();
    let at = |q: f64| {
        latencies
            .get(((latencies.len() as f64 - 1.0) * q).round() as usize)
            .map_or(f64::NAN, |d| d.as_secs_f64() * 1000.0)
    };
    println!(
        "  {SLOW_CONNECTIONS} dripping clients: {opened} connections opened over {} s, {cut_off} cut off by the server",
        RUN_FOR.as_secs()
    );
    println!(
        "  the server held at most {most_open} files open (connections, database, listener) under its limit of 1,024"
    );
    println!(
        "  normal requests: {} answered, {failures} failed; latency p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms (target: every one within 1 s)",
        latencies.len(),
        at(0.5),
        at(0.99),
        latencies
            .last()
            .map_or(f64::NAN, |d| d.as_secs_f64() * 1000.0)
    );
    println!(
        "  server's peak resident memory: {:.1} MiB",
        server.peak_rss_mib()?
    );
    Ok(())
}

/// One slow client: opens a connection, sends a request line and then a
/// header a byte at a time; opens another when cut off. Returns how many
/// connections it opened and how many the server closed.
async fn drip(address: &str, n: usize, until: Instant) -> (usize, usize) {
    let (mut opened, mut cut_off) = (0, 0);
    while Instant::now() < until {
        let Ok(mut stream) = TcpStream::connect(address).await else {
            tokio::time::sleep(DRIP_EVERY).await;
            continue;
        };
        opened += 1;
        let head = format!("GET /v2/pet/{n} HTTP/1.1\r\nHost: pets\r\nX-Drip-{n}: ");
        if stream.write_all(head.as_bytes()).await.is_err() {
            cut_off += 1;
            continue;
        }
        loop {
            if Instant::now() >= until {
                return (opened, cut_off);
            }
            tokio::time::sleep(DRIP_EVERY).await;
            if stream.write_all(b"a").await.is_err() {
                cut_off += 1;
                break;
            }
        }
    }
    (opened, cut_off)
}
