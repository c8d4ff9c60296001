//! A local SMTP server for the runs that send email: it counts what it
//! accepts, so a run can wait for its emails and see that none was lost.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context as _;

use crate::load::{apt_install, first_line};

/// Debian's Python, which python3-aiosmtpd installs into (a `python3` first
/// on PATH may be another).
const DEBIAN_PYTHON: &str = "/usr/bin/python3";

/// An SMTP server that counts what it accepts (`bench/smtp_sink.py`,
/// on Debian's python3-aiosmtpd, installed if missing).
pub(crate) struct SmtpSink {
    child: Child,
    pub(crate) port: u16,
    counter: tempfile::NamedTempFile,
}

impl SmtpSink {
    pub(crate) fn start(root: &Path) -> anyhow::Result<SmtpSink> {
        let has_aiosmtpd = || {
            Command::new(DEBIAN_PYTHON)
                .args(["-c", "import aiosmtpd"])
                .status()
                .is_ok_and(|s| s.success())
        };
        if !has_aiosmtpd() {
            apt_install("python3-aiosmtpd")?;
            anyhow::ensure!(has_aiosmtpd(), "aiosmtpd is still missing");
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        let counter = tempfile::NamedTempFile::new()?;
        let mut child = Command::new(DEBIAN_PYTHON)
            .arg(root.join("bench/smtp_sink.py"))
            .arg(counter.path())
            .arg(port.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .context("cannot start the SMTP server")?;
        let line = first_line(&mut child)?;
        anyhow::ensure!(line.trim() == "READY", "the SMTP server did not start");
        Ok(SmtpSink {
            child,
            port,
            counter,
        })
    }

    /// Emails accepted so far.
    pub(crate) fn delivered(&self) -> anyhow::Result<u64> {
        Ok(std::fs::metadata(self.counter.path())?.len())
    }

    /// Waits until `count` emails were accepted (at most `within`).
    pub(crate) async fn wait_for(&self, count: u64, within: Duration) -> anyhow::Result<()> {
        let started = Instant::now();
        while self.delivered()? < count {
            anyhow::ensure!(
                started.elapsed() < within,
                "the outbox delivered {} of {count} emails in {} s",
                self.delivered()?,
                within.as_secs()
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        Ok(())
    }
}

impl Drop for SmtpSink {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
