//! `cargo xtask stress <scenario>`: the release binary under a hostile or
//! unlucky load, with the figures printed (peak memory, answers, latency).
//! These measure; they assert nothing (the machines are noisy), except that
//! the server keeps answering.

pub mod login_storm;
pub mod slowloris;

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::Context as _;

/// Builds the release binary and returns its path.
///
/// `PETSTORE_BENCH_BINARY` names a server binary to run instead (one kept
/// from an earlier build), to compare two builds in alternating runs.
pub fn build_release(root: &Path) -> anyhow::Result<PathBuf> {
    if let Some(binary) = std::env::var_os("PETSTORE_BENCH_BINARY") {
        return Ok(PathBuf::from(binary));
    }
    Ok(cargo_build_release(root, &["--bin", "petstore-portfolio"])?.join("petstore-portfolio"))
}

/// `cargo build --release <what>` in the workspace; returns the folder the
/// release binaries land in.
pub fn cargo_build_release(root: &Path, what: &[&str]) -> anyhow::Result<PathBuf> {
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()))
        .args(["build", "--release", "--quiet"])
        .args(what)
        .current_dir(root)
        .status()
        .context("cannot run cargo build")?;
    anyhow::ensure!(status.success(), "cargo build --release {what:?} failed");
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    Ok(target.join("release"))
}

/// The release server on a fresh data folder (SQLite), on a free port.
pub struct Server {
    child: Child,
    pub url: String,
    data: tempfile::TempDir,
}

impl Server {
    /// Starts `binary` with `env` set (configuration by environment), through
    /// `sh -c` so that `shell_prefix` (e.g. `ulimit -n 1024;`) applies first.
    pub fn start(
        binary: &Path,
        env: &[(&str, &str)],
        shell_prefix: &str,
    ) -> anyhow::Result<Server> {
        Self::spawn(binary, env, shell_prefix, &[])
    }

    /// Like [`start`](Self::start), with `args` added to the command line.
    pub fn start_with_args(
        binary: &Path,
        env: &[(&str, &str)],
        args: &[String],
    ) -> anyhow::Result<Server> {
        Self::spawn(binary, env, "", args)
    }

    pub(crate) fn spawn(
        binary: &Path,
        env: &[(&str, &str)],
        shell_prefix: &str,
        args: &[String],
    ) -> anyhow::Result<Server> {
        Self::spawn_in(tempfile::tempdir()?, binary, env, shell_prefix, args)
    }

    /// Like [`start_with_args`](Self::start_with_args), on the data folder
    /// `data` (prepared before the start, e.g. with an OAuth client).
    pub(crate) fn start_in(
        data: tempfile::TempDir,
        binary: &Path,
        env: &[(&str, &str)],
        args: &[String],
    ) -> anyhow::Result<Server> {
        Self::spawn_in(data, binary, env, "", args)
    }

    fn spawn_in(
        data: tempfile::TempDir,
        binary: &Path,
        env: &[(&str, &str)],
        shell_prefix: &str,
        args: &[String],
    ) -> anyhow::Result<Server> {
        let script = format!(
            "{shell_prefix} data=\"$1\"; shift; exec \"$0\" --bind 127.0.0.1:0 --data-dir \"$data\" \"$@\"",
        );
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg(script)
            .arg(binary)
            .arg(data.path())
            .args(args)
            .env("RUST_LOG", "error")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        for (name, value) in env {
            command.env(name, value);
        }
        let mut child = command.spawn().context("cannot start the server")?;
        let url = listening_on(&mut child, Duration::from_secs(30))?;
        Ok(Server { child, url, data })
    }

    /// The server's data folder (its SQLite database, emails as files).
    pub(crate) fn data_dir(&self) -> &Path {
        self.data.path()
    }

    /// The server's peak resident memory so far (VmHWM), in MiB.
    pub fn peak_rss_mib(&self) -> anyhow::Result<f64> {
        self.status_field("VmHWM:")
    }

    /// How many files (sockets included) the server has open now.
    pub fn open_files(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/fd", self.child.id())).map_or(0, |d| d.count())
    }

    /// The server's resident memory now (VmRSS), in MiB.
    pub fn rss_mib(&self) -> anyhow::Result<f64> {
        self.status_field("VmRSS:")
    }

    fn status_field(&self, field: &str) -> anyhow::Result<f64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .context("cannot read the server's /proc status")?;
        let kib: f64 = status
            .lines()
            .find_map(|l| l.strip_prefix(field))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .with_context(|| format!("no {field} in /proc status"))?;
        Ok(kib / 1024.0)
    }
}

/// The address a server prints on its standard output (`... listening on
/// http://...`), within `timeout`.
pub(crate) fn listening_on(child: &mut Child, timeout: Duration) -> anyhow::Result<String> {
    let stdout = child.stdout.take().context("no stdout")?;
    let (lines, received) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = lines.send(line);
        }
    });
    loop {
        let line = received
            .recv_timeout(timeout)
            .context("the server did not say where it listens")?;
        if let Some((_, url)) = line.split_once("listening on ") {
            return Ok(url.trim().to_owned());
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP client for the load (TLS is not needed, but reqwest is built
/// with rustls and wants a crypto provider).
pub fn client() -> anyhow::Result<reqwest::Client> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    Ok(reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()?)
}
