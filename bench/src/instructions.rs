//! Instructions per cached `GET /v2/pet/1`, counted by callgrind, for the
//! server and for the ceiling. wrk's rates move by a third between runs on
//! a shared machine; callgrind counts the instructions a process runs, the
//! same for the same binary and the same requests, so a change to the
//! server's own work shows here even when the rates cannot tell it from
//! the noise. It counts inside the runtime's
//! tasks (each connection's: hyper's parsing and writing, the middleware,
//! the handler; and the runtime's own work around them), from after a
//! warm-up to the last request: not the kernel's share, nor the start.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context as _;

/// Requests counted on each server, one after another on one connection.
const REQUESTS: u32 = 2_000;

/// Requests sent before the count starts (the caches filled, the
/// connection's buffers grown).
const WARM_UP: u32 = 200;

/// Instructions per request of the server (`binary`, run with `env` on a
/// fresh SQLite file) and of the ceiling (answering from `answers`), on the
/// path `pet-json` measures.
pub(crate) async fn per_cached_read(
    http: &reqwest::Client,
    binary: &Path,
    env: &[(&str, &str)],
    ceiling: &Path,
    answers: &Path,
) -> anyhow::Result<(f64, f64)> {
    let valgrind = crate::load::find_or_install("valgrind", "valgrind")?;
    let data = tempfile::tempdir()?;
    let counts = tempfile::tempdir()?;
    let mut server = Command::new(&valgrind);
    server
        .args(callgrind_args(&counts.path().join("server.out")))
        .arg(binary)
        .args(["--bind", "127.0.0.1:0", "--data-dir"])
        .arg(data.path())
        .env("RUST_LOG", "error");
    for (name, value) in env {
        server.env(name, value);
    }
    let server = count(http, server, "/v2/pet/1", &counts.path().join("server.out")).await?;
    let mut top = Command::new(&valgrind);
    top.args(callgrind_args(&counts.path().join("ceiling.out")))
        .arg(ceiling)
        .arg(answers);
    let top = count(http, top, "/pet-json", &counts.path().join("ceiling.out")).await?;
    Ok((server, top))
}

/// Callgrind counting only inside the runtime's tasks, not the threads'
/// idle waits. (Counted inside hyper's connection future before, whose
/// `poll` the compiler may inline into the task's: it did, once the
/// application reached hyper unboxed, and nothing was counted.)
fn callgrind_args(out: &Path) -> Vec<String> {
    vec![
        "--tool=callgrind".to_owned(),
        format!("--callgrind-out-file={}", out.display()),
        "--collect-atstart=no".to_owned(),
        "--toggle-collect=*tokio::runtime::task::raw::poll*".to_owned(),
    ]
}

/// Starts `command` (a server under callgrind that prints where it
/// listens), asks it for `path` [`REQUESTS`] times, stops it and returns
/// the instructions counted per request.
async fn count(
    http: &reqwest::Client,
    mut command: Command,
    path: &str,
    out: &Path,
) -> anyhow::Result<f64> {
    let mut child = Stopped(
        command
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .context("cannot start valgrind")?,
    );
    // Under callgrind a server starts some 50 times slower.
    let url = crate::stress::listening_on(&mut child.0, Duration::from_secs(60))?;
    let ask = async |times: u32| -> anyhow::Result<()> {
        for _ in 0..times {
            let response = http.get(format!("{url}{path}")).send().await?;
            anyhow::ensure!(
                response.status().is_success(),
                "{path} answered {} under callgrind",
                response.status()
            );
            response.bytes().await?;
        }
        Ok(())
    };
    // Counted from after the warm-up (and the start, in tasks too) to the
    // last request: zeroed, then dumped (`<out>.1`) by callgrind_control.
    ask(WARM_UP).await?;
    let pid = child.0.id().to_string();
    control(&["-z", &pid])?;
    ask(REQUESTS).await?;
    control(&["-d", &pid])?;
    child.stop()?;
    let dumped = out.with_extension(format!(
        "{}.1",
        out.extension().and_then(|e| e.to_str()).unwrap_or_default()
    ));
    let counted = std::fs::read_to_string(&dumped).context("callgrind dumped no counts")?;
    let total: f64 = counted
        .lines()
        .find_map(|line| {
            line.strip_prefix("totals:")
                .or_else(|| line.strip_prefix("summary:"))
        })
        .and_then(|total| total.trim().parse().ok())
        .context("no totals in callgrind's counts")?;
    Ok(total / f64::from(REQUESTS))
}

/// Runs `callgrind_control` (Debian's valgrind has it) with `args`.
fn control(args: &[&str]) -> anyhow::Result<()> {
    let status = Command::new("callgrind_control")
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .context("cannot run callgrind_control")?;
    anyhow::ensure!(status.success(), "callgrind_control {args:?} failed");
    Ok(())
}

/// A process under callgrind: stopped with SIGTERM, so that callgrind
/// writes its counts (killed, it writes none), and killed if dropped.
struct Stopped(Child);

impl Stopped {
    fn stop(&mut self) -> anyhow::Result<()> {
        rustix::process::kill_process(
            rustix::process::Pid::from_child(&self.0),
            rustix::process::Signal::TERM,
        )
        .context("cannot stop the server under callgrind")?;
        let started = Instant::now();
        while self.0.try_wait()?.is_none() {
            anyhow::ensure!(
                started.elapsed() < Duration::from_secs(60),
                "the server under callgrind did not stop"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(())
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
