//! The real server binary as a child process, for what only a process
//! shows: a crash (`kill -9`), limits of the operating system, the lines it
//! prints at start-up.

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::FreshDatabase;

/// How long a server process may take to say where it listens.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// A running server process; killed when dropped.
#[derive(Debug)]
pub struct ServerProcess {
    child: Child,
    /// `http://127.0.0.1:<port>` (or `https://`), as the server printed it.
    pub url: String,
    /// What the server printed on stdout up to its address line.
    pub banner: Vec<String>,
    /// The lines it prints on stdout after that.
    later: mpsc::Receiver<String>,
}

impl ServerProcess {
    /// Starts `binary` on `database` (its URL and data folder), listening on
    /// a free port of 127.0.0.1, with `args` and `env` added, and waits for
    /// the line that says where it listens.
    pub fn start(
        binary: &Path,
        database: &FreshDatabase,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> ServerProcess {
        let mut command = Command::new(binary);
        command
            .args(["--bind", "127.0.0.1:0", "--database-url", &database.url])
            .arg("--data-dir")
            .arg(database.data_dir())
            .args(args)
            .env_remove("PETSTORE_PORTFOLIO_CONFIG")
            .env("RUST_LOG", "warn")
            // No load balancer to drain for: SIGTERM stops at once (the
            // drain's own tests set it).
            .env("PETSTORE_PORTFOLIO_HTTP__SHUTDOWN_DRAIN_SECS", "0")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        for (name, value) in env {
            command.env(name, value);
        }
        Self::spawn(command)
    }

    /// Spawns a prepared command (for a shell that sets limits first) and
    /// waits for its address line.
    pub fn spawn(mut command: Command) -> ServerProcess {
        let mut child = command.spawn().expect("the server binary starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let (lines, received) = mpsc::channel();
        // Reads to the end, after the address line too, so the server never
        // writes into a closed pipe.
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = lines.send(line);
            }
        });
        let mut banner = Vec::new();
        loop {
            match received.recv_timeout(START_TIMEOUT) {
                Ok(line) => {
                    let url = line
                        .split_once(" listening on ")
                        .map(|(_, url)| url.trim().to_owned());
                    banner.push(line);
                    if let Some(url) = url {
                        return ServerProcess {
                            child,
                            url,
                            banner,
                            later: received,
                        };
                    }
                }
                Err(e) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    panic!("the server did not say where it listens ({e}): {banner:?}");
                }
            }
        }
    }

    /// The next line of stdout that starts with `prefix` (after trimming),
    /// waiting for it at most [`START_TIMEOUT`].
    pub fn line_starting(&self, prefix: &str) -> String {
        loop {
            match self.later.recv_timeout(START_TIMEOUT) {
                Ok(line) if line.trim_start().starts_with(prefix) => return line,
                Ok(_) => {}
                Err(e) => panic!("the server printed no line starting with {prefix:?} ({e})"),
            }
        }
    }

    /// The full URL of a path on this server.
    pub fn at(&self, path: &str) -> String {
        format!("{}{path}", self.url)
    }

    /// The process id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// `kill -9`: the process ends at once, in the middle of whatever it does.
    pub fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// `kill -TERM`, without waiting: a stop begins.
    pub fn send_sigterm(&self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
    }

    /// Waits for the process to exit, at most `within`; its exit status, or
    /// `None` if it still runs.
    pub fn wait_exit(&mut self, within: Duration) -> Option<std::process::ExitStatus> {
        let deadline = std::time::Instant::now() + within;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            if std::time::Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// `kill -TERM` and wait: a graceful stop.
    pub fn terminate(mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
