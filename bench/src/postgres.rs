//! PostgreSQL for `cargo xtask bench --database-url postgres://…`: a fresh
//! database for each server of the run (on the server the URL names,
//! dropped at the end), and the database's own point-read rate, measured by
//! `pgbench -S -M prepared`, the ceiling of the PostgreSQL rows.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context as _;

/// Databases made for this run; dropped with it.
pub struct FreshDatabases {
    /// The URL given, whose database is used only to create the others.
    url: String,
    made: Vec<String>,
}

impl FreshDatabases {
    pub fn new(url: &str) -> FreshDatabases {
        FreshDatabases {
            url: url.to_owned(),
            made: Vec::new(),
        }
    }

    /// A new, empty database; its URL.
    pub fn create(&mut self, purpose: &str) -> anyhow::Result<String> {
        let name = format!("petstore_bench_{}_{purpose}", std::process::id());
        psql(
            &self.url,
            &format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
        )?;
        psql(&self.url, &format!("CREATE DATABASE {name}"))?;
        self.made.push(name.clone());
        with_database(&self.url, &name)
    }

    /// Writes every dirty page to disk now (`CHECKPOINT`), so that the
    /// writes of the rows before are not flushed during the next one.
    pub fn checkpoint(&self) -> anyhow::Result<()> {
        psql(&self.url, "CHECKPOINT")
    }
}

impl Drop for FreshDatabases {
    fn drop(&mut self) {
        for name in &self.made {
            if let Err(err) = psql(
                &self.url,
                &format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
            ) {
                eprintln!("cannot drop the bench's database {name}: {err:#}");
            }
        }
    }
}

/// `url` with its database replaced by `name`.
fn with_database(url: &str, name: &str) -> anyhow::Result<String> {
    let after_scheme = url.find("://").context("a database URL has a scheme")? + 3;
    let (base, query) = match url[after_scheme..].find('/') {
        Some(slash) => {
            let path = &url[after_scheme + slash..];
            let query = path.find('?').map_or("", |q| &path[q..]);
            (&url[..after_scheme + slash], query)
        }
        None => (url, ""),
    };
    Ok(format!("{base}/{name}{query}"))
}

/// The size of the database `url` names, in MiB.
pub fn database_size_mib(url: &str) -> anyhow::Result<f64> {
    let output = Command::new("psql")
        .args(["-X", "-q", "-A", "-t", "-d", url, "-c"])
        .arg("SELECT pg_database_size(current_database())")
        .output()
        .context("cannot run psql (Debian's postgresql-client)")?;
    anyhow::ensure!(
        output.status.success(),
        "psql: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let bytes: f64 = String::from_utf8_lossy(&output.stdout).trim().parse()?;
    Ok(bytes / (1024.0 * 1024.0))
}

fn psql(url: &str, statement: &str) -> anyhow::Result<()> {
    let output = Command::new("psql")
        .args([
            "-X",
            "-q",
            "-v",
            "ON_ERROR_STOP=1",
            "-d",
            url,
            "-c",
            statement,
        ])
        .output()
        .context("cannot run psql (Debian's postgresql-client)")?;
    anyhow::ensure!(
        output.status.success(),
        "psql -c {statement:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    Ok(())
}

/// How many times pgbench runs: its rate moves by a third between two runs
/// on this machine, as the mixes' do.
const PGBENCH_ROUNDS: usize = 3;

/// PostgreSQL's own rate of point reads by primary key (`pgbench -S -M
/// prepared`, 16 clients, 2 threads) on a database `databases` makes:
/// transactions per second, the median of [`PGBENCH_ROUNDS`] runs.
pub fn pgbench_point_reads(databases: &mut FreshDatabases, seconds: u32) -> anyhow::Result<f64> {
    let pgbench = find_pgbench()?;
    let url = databases.create("pgbench")?;
    let init = Command::new(&pgbench)
        .args(["-i", "-q", "-s", "1", &url])
        .output()
        .context("cannot run pgbench -i")?;
    anyhow::ensure!(
        init.status.success(),
        "pgbench -i failed: {}",
        String::from_utf8_lossy(&init.stderr)
    );
    let mut rates = Vec::with_capacity(PGBENCH_ROUNDS);
    for _ in 0..PGBENCH_ROUNDS {
        let output = Command::new(&pgbench)
            .args(["-n", "-S", "-M", "prepared", "-c", "16", "-j", "2", "-T"])
            .arg(seconds.to_string())
            .arg(&url)
            .output()
            .context("cannot run pgbench")?;
        let report = String::from_utf8_lossy(&output.stdout);
        anyhow::ensure!(output.status.success(), "pgbench failed: {report}");
        rates.push(
            parse_tps(&report)
                .with_context(|| format!("cannot read pgbench's report:\n{report}"))?,
        );
    }
    rates.sort_by(f64::total_cmp);
    rates
        .get(PGBENCH_ROUNDS / 2)
        .copied()
        .context("pgbench never ran")
}

/// `tps = 38123.456 (without initial connection time)`.
fn parse_tps(report: &str) -> anyhow::Result<f64> {
    let line = report
        .lines()
        .find(|line| line.starts_with("tps = "))
        .context("no tps line")?;
    let number = line
        .trim_start_matches("tps = ")
        .split_whitespace()
        .next()
        .context("no number")?;
    Ok(number.parse()?)
}

/// pgbench from PATH (Debian puts it in the server's package, `postgresql-15`).
fn find_pgbench() -> anyhow::Result<PathBuf> {
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("pgbench"))
            .find(|path| path.is_file())
    });
    on_path
        .or_else(|| {
            let lib = Path::new("/usr/lib/postgresql");
            std::fs::read_dir(lib).ok()?.find_map(|version| {
                let path = version.ok()?.path().join("bin/pgbench");
                path.is_file().then_some(path)
            })
        })
        .context(
            "pgbench is missing: install Debian's postgresql-15 (pgbench comes with the server)",
        )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn urls_get_another_database_and_reports_are_read() {
        assert_eq!(
            with_database("postgres://u@h:5432/bench?sslmode=disable", "x").unwrap(),
            "postgres://u@h:5432/x?sslmode=disable"
        );
        assert_eq!(
            with_database("postgresql://h", "x").unwrap(),
            "postgresql://h/x"
        );
        let report = "latency average = 0.4 ms\ninitial connection time = 10 ms\n\
                      tps = 38123.456789 (without initial connection time)\n";
        assert!((parse_tps(report).unwrap() - 38_123.456_789).abs() < 1e-6);
    }
}
