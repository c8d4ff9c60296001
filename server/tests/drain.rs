//! A stop as a rolling deploy makes it (SIGTERM): readiness answers 503 at
//! once, the listener serves on through the drain period, requests in
//! flight finish, and the process exits 0; behind the documented HAProxy
//! configuration (`docs/deploy/haproxy.cfg`) with two replicas, a replica
//! stopped under 64 connections of load fails no request.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use end_to_end_tests::ports::HeldPort;
use end_to_end_tests::process::ServerProcess;
use end_to_end_tests::{Db, FreshDatabase, http, installed, wait_until};
use serde_json::json;

const BINARY: &str = env!("CARGO_BIN_EXE_petstore-portfolio");

/// Starts a replica on `database` with `env` added.
fn replica(database: &FreshDatabase, env: &[(&str, &str)]) -> ServerProcess {
    ServerProcess::start(Path::new(BINARY), database, &[], env)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_turns_readiness_to_503_serves_through_the_drain_then_exits_0() {
    let database = FreshDatabase::create(Db::Sqlite).await;
    let mut server = replica(
        &database,
        &[("PETSTORE_PORTFOLIO_HTTP__SHUTDOWN_DRAIN_SECS", "2")],
    );
    let client = http();
    let ready = client
        .get(server.at("/api/health/ready"))
        .send()
        .await
        .unwrap();
    assert_eq!(ready.status(), 200);
    // A request in flight across the end of the drain: its body trickles
    // in for three seconds.
    let (parts, body) = futures::channel::mpsc::unbounded::<Result<Vec<u8>, std::io::Error>>();
    let slow = tokio::spawn({
        let request = client
            .post(server.at("/v2/pet"))
            .header("content-type", "application/json")
            .body(reqwest::Body::wrap_stream(body));
        async move { request.send().await.map(|answer| answer.status().as_u16()) }
    });
    parts
        .unbounded_send(Ok(b"{\"name\": \"slow".to_vec()))
        .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;

    let asked = Instant::now();
    server.send_sigterm();
    // Readiness says 503 at once...
    wait_until(Duration::from_secs(2), "readiness 503", async || {
        let answer = http().get(server.at("/api/health/ready")).send().await;
        answer.is_ok_and(|a| a.status() == 503)
    })
    .await;
    let answer = http()
        .get(server.at("/api/health/ready"))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 503);
    let body: serde_json::Value = answer.json().await.unwrap();
    assert_eq!(body["error"]["details"]["draining"], true, "{body}");
    assert!(asked.elapsed() < Duration::from_secs(1));
    // ...while everything else is served, each answer closing its
    // connection so that the client's next one goes elsewhere.
    let answer = http().get(server.at("/v2/pet/1")).send().await.unwrap();
    assert_eq!(answer.status(), 200);
    assert_eq!(answer.headers()["connection"], "close");

    // The drain ends (2 s) while the slow request still sends its body.
    for part in [" but", " finished\"", ", \"photoUrls\": []}"] {
        tokio::time::sleep(Duration::from_millis(1000)).await;
        parts.unbounded_send(Ok(part.as_bytes().to_vec())).unwrap();
    }
    drop(parts);
    assert_eq!(
        slow.await.unwrap().unwrap(),
        200,
        "the request in flight was cut"
    );
    // No new connection is taken after the drain.
    assert!(
        http()
            .get(server.at("/api/health"))
            .timeout(Duration::from_secs(2))
            .send()
            .await
            .is_err()
    );
    let status = server.wait_exit(Duration::from_secs(20)).expect("it exits");
    assert!(status.success(), "{status}");
    assert!(asked.elapsed() >= Duration::from_secs(2));
}

/// HAProxy running the documented configuration; killed when dropped.
struct Haproxy(Child);

impl Drop for Haproxy {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn haproxy(frontend: &str, replicas: [&str; 2]) -> Haproxy {
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/deploy/haproxy.cfg");
    let strip = |url: &str| url.trim_start_matches("http://").to_owned();
    Haproxy(
        Command::new("haproxy")
            .arg("-f")
            .arg(config)
            .arg("-db")
            .env("FRONTEND", frontend)
            .env("REPLICA1", strip(replicas[0]))
            .env("REPLICA2", strip(replicas[1]))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("haproxy starts"),
    )
}

/// How the load went.
#[derive(Debug, Default)]
struct Load {
    answered: AtomicUsize,
    failed: AtomicUsize,
    failures: std::sync::Mutex<Vec<String>>,
}

/// One of the 64 clients: reads and writes through HAProxy until `stop`.
async fn client_loop(base: String, n: usize, load: Arc<Load>, stop: Arc<AtomicBool>) {
    let client = http();
    let mut i = 0;
    while !stop.load(Ordering::SeqCst) {
        i += 1;
        let request = match i % 4 {
            0 => client
                .post(format!("{base}/v2/pet"))
                .header("idempotency-key", format!("drain-{n}-{i}"))
                .json(&json!({"name": format!("drain-{n}-{i}"), "photoUrls": []})),
            1 => client.get(format!("{base}/v2/pet/findByStatus?status=available")),
            2 => client.get(format!("{base}/api/site-info")),
            _ => client.get(format!("{base}/v2/pet/1")),
        };
        match request.timeout(Duration::from_secs(10)).send().await {
            Ok(answer) if answer.status().is_success() => {
                // The whole body, not only the headers.
                match answer.bytes().await {
                    Ok(_) => load.answered.fetch_add(1, Ordering::SeqCst),
                    Err(e) => {
                        load.failures.lock().unwrap().push(format!("body: {e}"));
                        load.failed.fetch_add(1, Ordering::SeqCst)
                    }
                };
            }
            Ok(answer) => {
                let status = answer.status();
                let body = answer.text().await.unwrap_or_default();
                load.failures
                    .lock()
                    .unwrap()
                    .push(format!("status {status}: {body}"));
                load.failed.fetch_add(1, Ordering::SeqCst);
            }
            Err(e) => {
                load.failures.lock().unwrap().push(format!("{e:?}"));
                load.failed.fetch_add(1, Ordering::SeqCst);
            }
        }
    }
}

/// The count of answered requests in a replica's metrics.
async fn answered_by(metrics: &str) -> f64 {
    let scraped = http()
        .get(metrics)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    scraped
        .lines()
        .filter(|line| line.starts_with("http_server_request_duration_seconds_count{"))
        .filter_map(|line| line.rsplit_once(' ')?.1.parse::<f64>().ok())
        .sum()
}

end_to_end_tests::on_every_database!(a_replica_stopped_under_load_behind_haproxy_fails_no_request);

async fn a_replica_stopped_under_load_behind_haproxy_fails_no_request(db: Db) {
    if !installed("haproxy", "SKIPPED: the drain behind HAProxy") {
        return;
    }
    // On PostgreSQL the replicas share the database, as deployed; on
    // SQLite each has its own file.
    let first = FreshDatabase::create(db.clone()).await;
    let second = match db {
        Db::Sqlite => Some(FreshDatabase::create(Db::Sqlite).await),
        Db::Postgres(_) => None,
    };
    // The default drain (5 s); with none (0), this test fails hundreds of
    // requests.
    let env = [
        ("PETSTORE_PORTFOLIO_HTTP__SHUTDOWN_DRAIN_SECS", "5"),
        ("PETSTORE_PORTFOLIO_METRICS_BIND", "127.0.0.1:0"),
        // Every client is 127.0.0.1 here: no per-address limit.
        (
            "PETSTORE_PORTFOLIO_PORTFOLIO__RATE_LIMIT__ANONYMOUS_PER_MINUTE",
            "100000000",
        ),
    ];
    let mut stopped = replica(&first, &env);
    let stopped_metrics = stopped
        .line_starting("metrics:")
        .trim_start_matches(|c: char| c != 'h')
        .trim()
        .to_owned();
    let kept = replica(second.as_ref().unwrap_or(&first), &env);
    // Held until HAProxy listens there too (it binds with SO_REUSEADDR).
    let frontend_port = HeldPort::free();
    let frontend = format!("127.0.0.1:{}", frontend_port.port());
    let _haproxy = haproxy(&frontend, [&stopped.url, &kept.url]);
    let base = format!("http://{frontend}");
    wait_until(Duration::from_secs(10), "HAProxy answers", async || {
        http()
            .get(format!("{base}/api/health/ready"))
            .send()
            .await
            .is_ok_and(|a| a.status() == 200)
    })
    .await;
    drop(frontend_port);

    let load = Arc::new(Load::default());
    let stop = Arc::new(AtomicBool::new(false));
    let clients: Vec<_> = (0..64)
        .map(|n| tokio::spawn(client_loop(base.clone(), n, load.clone(), stop.clone())))
        .collect();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let before_stop = load.answered.load(Ordering::SeqCst);
    let served_by_stopped = answered_by(&stopped_metrics).await;
    stopped.send_sigterm();
    let status = tokio::task::spawn_blocking(move || {
        let status = stopped.wait_exit(Duration::from_secs(30));
        (status, stopped)
    })
    .await
    .unwrap();
    // A moment more of load on the replica that is left.
    tokio::time::sleep(Duration::from_millis(500)).await;
    stop.store(true, Ordering::SeqCst);
    for client in clients {
        client.await.unwrap();
    }
    let answered = load.answered.load(Ordering::SeqCst);
    let failed = load.failed.load(Ordering::SeqCst);
    println!(
        "drain behind HAProxy: {answered} requests answered ({before_stop} before the SIGTERM, \
         {served_by_stopped} of them by the stopped replica), {failed} failed"
    );
    assert_eq!(
        failed,
        0,
        "requests failed: {:?}",
        load.failures
            .lock()
            .unwrap()
            .iter()
            .take(10)
            .collect::<Vec<_>>()
    );
    assert!(served_by_stopped > 10.0, "the stopped replica took no load");
    assert!(
        answered > before_stop + 100,
        "the load stopped with the replica"
    );
    let exit = status.0.expect("the stopped replica exits");
    assert!(exit.success(), "{exit}");
    drop(kept);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mail_worker_cut_off_at_a_stop_hands_back_its_leases() {
    // An SMTP server that takes connections and never says a word: the
    // worker's attempt hangs (for the SMTP timeout, two minutes).
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = silent.local_addr().unwrap().port().to_string();
    let _held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((connection, _)) = silent.accept().await {
            open.push(connection);
        }
    });
    let database = FreshDatabase::create(Db::Sqlite).await;
    let mut server = replica(
        &database,
        &[
            ("PETSTORE_PORTFOLIO_HTTP__SHUTDOWN_DRAIN_SECS", "0"),
            ("PETSTORE_PORTFOLIO_MAIL__SMTP__HOST", "127.0.0.1"),
            ("PETSTORE_PORTFOLIO_MAIL__SMTP__PORT", port.as_str()),
            ("PETSTORE_PORTFOLIO_MAIL__SMTP__TLS", "none"),
            ("PETSTORE_PORTFOLIO_MAIL__SMTP__TIMEOUT_SECS", "120"),
        ],
    );
    let answer = http()
        .post(server.at("/api/newsletter"))
        .json(&json!({"email": "held@example.test"}))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 202);
    let leased = "outbox WHERE lease_until_ms IS NOT NULL";
    wait_until(Duration::from_secs(10), "the email claimed", async || {
        database.count(leased).await == 1
    })
    .await;
    server.send_sigterm();
    let exit = tokio::task::spawn_blocking(move || server.wait_exit(Duration::from_secs(30)))
        .await
        .unwrap()
        .expect("it exits");
    assert!(exit.success(), "{exit}");
    // Due again at once, for another replica (or this one's restart),
    // rather than after its lease of four minutes.
    assert_eq!(database.count(leased).await, 0);
    assert_eq!(database.count("outbox WHERE status = 'pending'").await, 1);
}
