//! Driving load and reading what it did: the run's options, wrk (its
//! Lua helpers, its reports), the framework's ceiling beside our server,
//! answers recorded for the ceiling to repeat, and the Debian tools the
//! runs need, installed if missing.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use anyhow::Context as _;

use crate::stress::cargo_build_release;

/// How the load is made.
#[derive(Debug, Clone)]
pub struct Options {
    /// Seconds of load for each endpoint, on each server.
    pub seconds: u32,
    /// Open connections.
    pub connections: u32,
    /// Run on this database instead of a fresh SQLite file.
    pub database_url: Option<String>,
    /// Only the rows and scenarios whose name contains one of these
    /// (comma-separated); no targets.
    pub only: Option<String>,
}

impl Options {
    /// Whether the row `name` is measured in this run.
    pub(crate) fn measures(&self, name: &str) -> bool {
        self.only.as_deref().is_none_or(|only| {
            only.split(',')
                .map(str::trim)
                .any(|part| !part.is_empty() && name.contains(part))
        })
    }
}

/// What wrk measured.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Figures {
    pub(crate) requests_per_sec: f64,
    pub(crate) p50_ms: f64,
    pub(crate) p99_ms: f64,
    /// Answers that were not 2xx/3xx.
    pub(crate) errors: u64,
}

/// Sends the requests, 64 at a time; every answer must be a success.
pub(crate) async fn send_all(
    requests: impl Iterator<Item = reqwest::RequestBuilder>,
) -> anyhow::Result<()> {
    use futures::StreamExt as _;
    let mut sent = futures::stream::iter(requests)
        .map(|request| async {
            request.send().await?.error_for_status()?;
            anyhow::Ok(())
        })
        .buffer_unordered(64);
    while let Some(result) = sent.next().await {
        result?;
    }
    Ok(())
}

/// Writes what the ceiling answers for `name`.
/// Keeps `response`, a success, as the ceiling's answer `name`.
pub(crate) async fn record_answer(
    folder: &Path,
    name: &str,
    response: reqwest::Response,
) -> anyhow::Result<()> {
    let status = response.status();
    anyhow::ensure!(status.is_success(), "{name} answered {status}");
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/octet-stream")
        .to_owned();
    let body = response.bytes().await?;
    write_answer(folder, name, &content_type, &body, status)
}

pub(crate) fn write_answer(
    folder: &Path,
    name: &str,
    content_type: &str,
    body: &[u8],
    status: reqwest::StatusCode,
) -> anyhow::Result<()> {
    let file = |extension: &str| folder.join(format!("{name}.{extension}"));
    std::fs::write(file("body"), body)?;
    std::fs::write(file("type"), content_type)?;
    std::fs::write(file("status"), status.as_u16().to_string())?;
    Ok(())
}

/// Gives each wrk thread an index (`tindex`) and a count of what it sent
/// (`sent`), for scripts whose requests differ one from the next.
pub(crate) const WRK_THREAD_INDEX: &str = r#"local threads = 0
function setup(thread)
  thread:set("tindex", threads)
  threads = threads + 1
end
local sent = 0
"#;

/// Runs wrk against `url` and reads its report.
pub(crate) fn measure(
    wrk: &Path,
    url: &str,
    script: &Path,
    options: &Options,
) -> anyhow::Result<Figures> {
    let output = Command::new(wrk)
        .args(["-t2", "--latency"])
        .arg(format!("-c{}", options.connections))
        .arg(format!("-d{}s", options.seconds))
        .arg("-s")
        .arg(script)
        .arg(url)
        .output()
        .context("cannot run wrk")?;
    let report = String::from_utf8_lossy(&output.stdout);
    anyhow::ensure!(output.status.success(), "wrk failed: {report}");
    parse_wrk(&report).with_context(|| format!("cannot read wrk's report:\n{report}"))
}

fn parse_wrk(report: &str) -> anyhow::Result<Figures> {
    let value = |prefix: &str| {
        report
            .lines()
            .find_map(|line| line.trim().strip_prefix(prefix))
            .map(|rest| rest.trim().to_owned())
    };
    let requests_per_sec: f64 = value("Requests/sec:").context("no Requests/sec")?.parse()?;
    let p50_ms = duration_ms(&value("50%").context("no 50% line (--latency)")?)?;
    let p99_ms = duration_ms(&value("99%").context("no 99% line (--latency)")?)?;
    let errors = value("Non-2xx or 3xx responses:").map_or(Ok(0), |v| v.parse())?;
    Ok(Figures {
        requests_per_sec,
        p50_ms,
        p99_ms,
        errors,
    })
}

/// wrk's `1.23ms`, `456.00us`, `1.02s` in milliseconds.
fn duration_ms(text: &str) -> anyhow::Result<f64> {
    let (number, factor) = if let Some(n) = text.strip_suffix("us") {
        (n, 0.001)
    } else if let Some(n) = text.strip_suffix("ms") {
        (n, 1.0)
    } else if let Some(n) = text.strip_suffix('s') {
        (n, 1000.0)
    } else if let Some(n) = text.strip_suffix('m') {
        (n, 60_000.0)
    } else {
        anyhow::bail!("not a duration: {text}")
    };
    Ok(number.parse::<f64>()? * factor)
}

/// `command` from PATH, or Debian's `package`, installed now (as root,
/// non-interactively).
pub(crate) fn find_or_install(command: &str, package: &str) -> anyhow::Result<PathBuf> {
    let found = |name: &str| {
        std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|dir| dir.join(name))
                .find(|path| path.is_file())
        })
    };
    if let Some(path) = found(command) {
        return Ok(path);
    }
    apt_install(package)?;
    found(command).with_context(|| format!("{command} is still not on PATH"))
}

/// Installs a Debian package (as root, non-interactively).
pub(crate) fn apt_install(package: &str) -> anyhow::Result<()> {
    eprintln!("{package} is missing; installing Debian's (apt-get install {package})");
    let status = Command::new("apt-get")
        .args(["install", "-y", "-qq", package])
        .env("DEBIAN_FRONTEND", "noninteractive")
        .status()
        .with_context(|| format!("cannot run apt-get: install {package}"))?;
    anyhow::ensure!(status.success(), "apt-get install {package} failed");
    Ok(())
}

/// Builds `bench/ceiling` (release; it shares the server's axum, hyper and
/// tokio) and returns its path.
pub(crate) fn build_ceiling(root: &Path) -> anyhow::Result<PathBuf> {
    Ok(cargo_build_release(root, &["-p", "bench-ceiling"])?.join("bench-ceiling"))
}

/// The ceiling's process; killed when dropped.
pub(crate) struct Ceiling {
    child: Child,
    pub(crate) url: String,
}

impl Ceiling {
    pub(crate) fn start(binary: &Path, answers: &Path) -> anyhow::Result<Ceiling> {
        let mut child = Command::new(binary)
            .arg(answers)
            .stdout(Stdio::piped())
            .spawn()
            .context("cannot start the ceiling")?;
        let line = first_line(&mut child)?;
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .context("the ceiling did not say where it listens")?
            .to_owned();
        Ok(Ceiling { child, url })
    }
}

impl Drop for Ceiling {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The first line a child process prints (where it listens, or that it is
/// ready).
pub(crate) fn first_line(child: &mut std::process::Child) -> anyhow::Result<String> {
    let stdout = child.stdout.take().context("no stdout")?;
    let mut line = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(stdout), &mut line)?;
    Ok(line)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn wrk_reports_are_read() {
        let report = "Running 10s test @ http://127.0.0.1:1/x
  2 threads and 64 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   601.00us  200.00us   5.00ms   90.00%
  Latency Distribution
     50%  550.00us
     75%  700.00us
     90%    1.00ms
     99%    2.50ms
  1000 requests in 10.00s, 1.00MB read
  Non-2xx or 3xx responses: 3
Requests/sec: 100000.50
Transfer/sec:     10.00MB
";
        let figures = parse_wrk(report).unwrap();
        assert!((figures.requests_per_sec - 100_000.5).abs() < 1e-6);
        assert!((figures.p50_ms - 0.55).abs() < 1e-9);
        assert!((figures.p99_ms - 2.5).abs() < 1e-9);
        assert_eq!(figures.errors, 3);
        assert!((duration_ms("1.02s").unwrap() - 1020.0).abs() < 1e-9);
    }
}
