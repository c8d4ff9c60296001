//! A real SMTP server for the tests: Debian's aiosmtpd, run by
//! `smtp_server.py` beside this file. It keeps every message it accepts as a
//! JSON file, which [`SmtpServer::messages`] reads back.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use petstore_portfolio_server::Config;
use petstore_portfolio_server::config::{SmtpConfig, SmtpTls};
use serde::Deserialize;

use crate::ports::HeldPort;
use crate::{Db, TestServer, eventually};

/// The Python that has aiosmtpd: `SMTP_TEST_PYTHON`, else Debian's.
fn python() -> String {
    std::env::var("SMTP_TEST_PYTHON").unwrap_or_else(|_| {
        if Path::new("/usr/bin/python3").exists() {
            "/usr/bin/python3".to_owned()
        } else {
            "python3".to_owned()
        }
    })
}

/// Can this machine run the test SMTP server? If not, the test that asks
/// says loudly that it is skipped (under CI, where it must run, it fails).
pub fn available(test: &str) -> bool {
    static AVAILABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let available = *AVAILABLE.get_or_init(|| {
        Command::new(python())
            .args(["-c", "import aiosmtpd"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    });
    if !available {
        assert!(
            std::env::var("CI").is_err(),
            "{} has no aiosmtpd under CI: the SMTP tests would not run",
            python()
        );
        // Straight to the file descriptor: the test harness captures eprintln!.
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED (no SMTP test server): {test} (apt-get install python3-aiosmtpd, or set SMTP_TEST_PYTHON)"
        );
    }
    available
}

/// A message the SMTP server accepted.
#[derive(Debug, Clone, Deserialize)]
pub struct ReceivedMessage {
    pub mail_from: String,
    pub rcpt_tos: Vec<String>,
    pub headers: Vec<(String, String)>,
    /// The text part, decoded.
    pub body: String,
    /// The HTML part, decoded; empty when the message has none.
    pub html: String,
}

impl ReceivedMessage {
    /// The first header of that name (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The first line of the body that starts with `prefix`.
    pub fn link(&self, prefix: &str) -> Option<String> {
        self.body
            .lines()
            .map(str::trim)
            .find(|l| l.starts_with(prefix))
            .map(str::to_owned)
    }
}

/// A running SMTP server on 127.0.0.1; stopped when dropped.
pub struct SmtpServer {
    pub port: u16,
    folder: PathBuf,
    _folder_guard: Option<tempfile::TempDir>,
    child: Child,
}

impl std::fmt::Debug for SmtpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SmtpServer")
            .field("port", &self.port)
            .finish_non_exhaustive()
    }
}

impl SmtpServer {
    pub fn start() -> SmtpServer {
        Self::start_on(HeldPort::free())
    }

    /// Starts on a held port (also to bring a "down" server up); the hold
    /// ends once the server listens.
    pub fn start_on(port: HeldPort) -> SmtpServer {
        let folder = tempfile::tempdir().expect("a folder for the received messages");
        let path = folder.path().to_path_buf();
        let server = Self::spawn(port.port(), path, Some(folder));
        drop(port);
        server
    }

    fn spawn(port: u16, folder: PathBuf, guard: Option<tempfile::TempDir>) -> SmtpServer {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("harness/smtp_server.py");
        let mut child = Command::new(python())
            .arg(&script)
            .arg(&folder)
            .arg(port.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("cannot start the test SMTP server ({} with aiosmtpd; apt-get install python3-aiosmtpd): {e}", python())
            });
        let stdout = child.stdout.take().expect("the SMTP server's stdout");
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = ready_tx.send(line);
        });
        match ready_rx.recv_timeout(Duration::from_secs(20)) {
            Ok(line) if line.trim() == "READY" => {}
            other => {
                let _ = child.kill();
                panic!(
                    "the test SMTP server did not start (is python3-aiosmtpd installed?): {other:?}"
                );
            }
        }
        SmtpServer {
            port,
            folder,
            _folder_guard: guard,
            child,
        }
    }

    /// The server's configuration for `mail.smtp`.
    pub fn config(&self) -> SmtpConfig {
        smtp_config(self.port)
    }

    /// Every message received so far, in arrival order.
    pub fn messages(&self) -> Vec<ReceivedMessage> {
        let mut names: Vec<PathBuf> = std::fs::read_dir(&self.folder)
            .map(|entries| entries.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        names.retain(|p| p.extension().is_some_and(|e| e == "json"));
        names.sort();
        names
            .iter()
            .map(|p| {
                let text = std::fs::read_to_string(p).expect("a received message");
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
            })
            .collect()
    }

    /// Waits (polling, at most `within`) until `count` messages arrived.
    pub async fn wait_for(&self, count: usize, within: Duration) -> Vec<ReceivedMessage> {
        eventually(within, &format!("{count} messages arrive"), async || {
            let messages = self.messages();
            if messages.len() >= count {
                Ok(messages)
            } else {
                Err(messages)
            }
        })
        .await
    }
}

impl Drop for SmtpServer {
    fn drop(&mut self) {
        // Closing stdin stops it; kill in case it does not.
        drop(self.child.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `mail.smtp` for a plain-text server on 127.0.0.1 at `port`.
pub fn smtp_config(port: u16) -> SmtpConfig {
    SmtpConfig {
        host: "127.0.0.1".to_owned(),
        port,
        tls: SmtpTls::None,
        username: None,
        password: None,
        timeout_secs: 5,
        connections: 4,
    }
}

/// The name of the running test, for a skip notice: libtest names the
/// test's thread after it, and `#[tokio::test]` runs the test's body there.
fn current_test() -> String {
    std::thread::current()
        .name()
        .unwrap_or("an SMTP test")
        .to_owned()
}

impl TestServer {
    /// A server whose email goes to an SMTP server of its own, both started
    /// here; `adjust` changes the server's configuration further. `None`
    /// where the SMTP server cannot run here: the test is then skipped,
    /// loudly (see [`available`]).
    pub async fn start_with_smtp(
        db: Db,
        adjust: impl FnOnce(&mut Config),
    ) -> Option<(TestServer, SmtpServer)> {
        if !available(&current_test()) {
            return None;
        }
        let smtp = SmtpServer::start();
        let config = smtp.config();
        let server = TestServer::start_with(db, move |c| {
            c.mail.smtp = Some(config);
            adjust(c);
        })
        .await;
        Some((server, smtp))
    }

    /// A server whose SMTP server is down: its port, returned and held, has nobody
    /// listening until the test brings one up there with
    /// [`SmtpServer::start_on`]; `adjust` changes the server's configuration
    /// further. `None` as for [`start_with_smtp`](Self::start_with_smtp).
    pub async fn start_with_smtp_down(
        db: Db,
        adjust: impl FnOnce(&mut Config),
    ) -> Option<(TestServer, HeldPort)> {
        if !available(&current_test()) {
            return None;
        }
        let port = HeldPort::free();
        let number = port.port();
        let server = TestServer::start_with(db, move |c| {
            c.mail.smtp = Some(smtp_config(number));
            adjust(c);
        })
        .await;
        Some((server, port))
    }
}
