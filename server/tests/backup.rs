//! Backups of the real binary's data: `backup` under 8 writers and
//! `restore` into a fresh directory (every write acknowledged before the
//! backup began is there, and the database is intact); `restore` refusing
//! while a server runs (however the database is named) and refusing a
//! damaged file or one with a schema of someone else's, which `backup`
//! refuses to write too; PostgreSQL's
//! `pg_dump`/`pg_restore` as docs/deploy.md gives them; Litestream with the
//! documented configuration (docs/deploy/litestream.yml).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use end_to_end_tests::process::ServerProcess;
use end_to_end_tests::{Db, FreshDatabase, http, installed, wait_until};
use serde_json::json;
use sqlx::Connection as _;

const BINARY: &str = env!("CARGO_BIN_EXE_petstore-portfolio");
const WRITERS: usize = 8;

/// Runs the binary's subcommand `args` on `data_dir` (its SQLite default).
fn command(data_dir: &Path, args: &[&str]) -> Output {
    Command::new(BINARY)
        .args(args)
        .arg("--data-dir")
        .arg(data_dir)
        .env_remove("PETSTORE_PORTFOLIO_CONFIG")
        .env_remove("PETSTORE_PORTFOLIO_DATABASE_URL")
        .output()
        .unwrap()
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// The pets' names in a SQLite file, and its integrity check's verdict.
async fn pets_in(file: &Path) -> (BTreeSet<String>, String) {
    let url = format!("sqlite://{}?mode=ro", file.display());
    let mut conn = sqlx::SqliteConnection::connect(&url).await.unwrap();
    let names: Vec<String> = sqlx::query_scalar("SELECT name FROM pets")
        .fetch_all(&mut conn)
        .await
        .unwrap();
    let verdict: String = sqlx::query_scalar("PRAGMA integrity_check")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    conn.close().await.unwrap();
    (names.into_iter().collect(), verdict)
}

/// Adds an available pet named `name` on the server at `base`; its answer.
async fn add_pet(client: &reqwest::Client, base: &str, name: &str) -> serde_json::Value {
    let answer = client
        .post(format!("{base}/v2/pet"))
        .json(&json!({"name": name, "photoUrls": [], "status": "available"}))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    answer.json().await.unwrap()
}

/// Adds pets named `w<writer>-<n>` until `stop`; each acknowledged name
/// goes into `acknowledged` as its answer arrives.
async fn write_until(
    base: String,
    writer: usize,
    acknowledged: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
) {
    let client = http();
    for n in 0.. {
        if stop.load(Ordering::SeqCst) {
            return;
        }
        let name = format!("w{writer}-{n}");
        add_pet(&client, &base, &name).await;
        acknowledged.lock().unwrap().push(name);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_under_8_writers_restored_into_a_fresh_directory_has_every_acknowledged_write() {
    let database = FreshDatabase::create(Db::Sqlite).await;
    let server = ServerProcess::start(Path::new(BINARY), &database, &[], &[]);
    let acknowledged = Arc::new(Mutex::new(Vec::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            tokio::spawn(write_until(
                server.url.clone(),
                w,
                acknowledged.clone(),
                stop.clone(),
            ))
        })
        .collect();
    wait_until(Duration::from_secs(20), "writes under way", async || {
        acknowledged.lock().unwrap().len() >= 200
    })
    .await;

    let backups = tempfile::tempdir().unwrap();
    let file = backups.path().join("pets.backup");
    let before: BTreeSet<String> = acknowledged.lock().unwrap().iter().cloned().collect();
    let data_dir = database.data_dir().to_owned();
    let backed_up = {
        let file = file.clone();
        tokio::task::spawn_blocking(move || {
            command(&data_dir, &["backup", "--to", file.to_str().unwrap()])
        })
        .await
        .unwrap()
    };
    let during = acknowledged.lock().unwrap().len() - before.len();
    stop.store(true, Ordering::SeqCst);
    for writer in writers {
        writer.await.unwrap();
    }
    assert!(backed_up.status.success(), "{}", text(&backed_up));
    assert!(
        text(&backed_up).contains("integrity ok"),
        "{}",
        text(&backed_up)
    );
    assert!(during > 0, "no write went on during the backup");

    drop(server);
    let fresh = FreshDatabase::create(Db::Sqlite).await;
    let restored = command(
        fresh.data_dir(),
        &["restore", "--from", file.to_str().unwrap()],
    );
    assert!(restored.status.success(), "{}", text(&restored));
    let (names, verdict) = pets_in(&fresh.data_dir().join("petstore-portfolio.db")).await;
    assert_eq!(verdict, "ok");
    let missing: Vec<_> = before.difference(&names).collect();
    println!(
        "backup under {WRITERS} writers: {} writes acknowledged before it began, {during} during it; \
         the restored database has {} pets, none missing",
        before.len(),
        names.len()
    );
    assert!(
        missing.is_empty(),
        "{} acknowledged writes lost: {missing:?}",
        missing.len()
    );

    // A server starts on the restored directory and serves what it holds.
    let server = ServerProcess::start(Path::new(BINARY), &fresh, &[], &[]);
    let answer = http()
        .get(server.at("/v2/pet/findByStatus?status=available"))
        .send()
        .await
        .unwrap();
    let found: Vec<serde_json::Value> = answer.json().await.unwrap();
    assert!(found.iter().any(|pet| pet["name"] == "w0-0"), "{found:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restore_refuses_while_a_server_runs_and_refuses_a_damaged_file() {
    let database = FreshDatabase::create(Db::Sqlite).await;
    let data_dir = database.data_dir().to_owned();
    let backups = tempfile::tempdir().unwrap();
    let good = backups.path().join("good.backup");
    let server = ServerProcess::start(Path::new(BINARY), &database, &[], &[]);
    add_pet(&http(), &server.url, "kept").await;
    let backed_up = command(&data_dir, &["backup", "--to", good.to_str().unwrap()]);
    assert!(backed_up.status.success(), "{}", text(&backed_up));
    // A backup never overwrites a file.
    let again = command(&data_dir, &["backup", "--to", good.to_str().unwrap()]);
    assert!(!again.status.success());
    assert!(text(&again).contains("exists"), "{}", text(&again));

    let refused = command(&data_dir, &["restore", "--from", good.to_str().unwrap()]);
    assert!(!refused.status.success());
    assert!(
        text(&refused).contains("a server is using the database"),
        "{}",
        text(&refused)
    );
    server.terminate();

    // Damaged: the file cut short; not a database; another SQLite file.
    let bytes = std::fs::read(&good).unwrap();
    let cut = backups.path().join("cut.backup");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let junk = backups.path().join("junk.backup");
    std::fs::write(&junk, "not a database").unwrap();
    let other = backups.path().join("other.backup");
    let mut conn =
        sqlx::SqliteConnection::connect(&format!("sqlite://{}?mode=rwc", other.display()))
            .await
            .unwrap();
    sqlx::query("CREATE TABLE t (x INTEGER)")
        .execute(&mut conn)
        .await
        .unwrap();
    conn.close().await.unwrap();
    let live = data_dir.join("petstore-portfolio.db");
    let before = std::fs::read(&live).unwrap();
    for damaged in [&cut, &junk, &other] {
        let refused = command(&data_dir, &["restore", "--from", damaged.to_str().unwrap()]);
        assert!(!refused.status.success(), "{}", text(&refused));
        assert_eq!(
            std::fs::read(&live).unwrap(),
            before,
            "{}",
            damaged.display()
        );
    }
    // The good one goes in, and the database it replaced is kept.
    let restored = command(&data_dir, &["restore", "--from", good.to_str().unwrap()]);
    assert!(restored.status.success(), "{}", text(&restored));
    assert!(text(&restored).contains("kept as"), "{}", text(&restored));
    let (names, verdict) = pets_in(&live).await;
    assert!(names.contains("kept"));
    assert_eq!(verdict, "ok");
    assert!(!data_dir.join("petstore-portfolio.db-shm").exists());
}

/// A server started on another data directory, with its database named by
/// `--database-url`: a restore given that URL refuses to touch the file the
/// server holds, whatever data directory it is given.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restore_refuses_a_database_a_server_holds_however_it_is_named() {
    let database = FreshDatabase::create(Db::Sqlite).await;
    let backups = tempfile::tempdir().unwrap();
    let good = backups.path().join("good.backup");
    let server = ServerProcess::start(Path::new(BINARY), &database, &[], &[]);
    add_pet(&http(), &server.url, "kept").await;
    let backed_up = command(
        database.data_dir(),
        &["backup", "--to", good.to_str().unwrap()],
    );
    assert!(backed_up.status.success(), "{}", text(&backed_up));
    add_pet(&http(), &server.url, "after the backup").await;

    let live = database.data_dir().join("petstore-portfolio.db");
    // The same file by another spelling of its path.
    let elsewhere = tempfile::tempdir().unwrap();
    let spelled = format!(
        "sqlite://{}/../{}/petstore-portfolio.db",
        database.data_dir().display(),
        database.data_dir().file_name().unwrap().to_str().unwrap()
    );
    for url in [database.url.as_str(), spelled.as_str()] {
        let refused = Command::new(BINARY)
            .args(["restore", "--from", good.to_str().unwrap()])
            .args(["--database-url", url])
            .arg("--data-dir")
            .arg(elsewhere.path())
            .env_remove("PETSTORE_PORTFOLIO_CONFIG")
            .env_remove("PETSTORE_PORTFOLIO_DATABASE_URL")
            .output()
            .unwrap();
        assert!(!refused.status.success(), "{url}: {}", text(&refused));
        assert!(
            text(&refused).contains("a server is using the database"),
            "{}",
            text(&refused)
        );
    }
    // The server's database is the one it writes, with everything in it.
    add_pet(&http(), &server.url, "later still").await;
    server.terminate();
    let (names, verdict) = pets_in(&live).await;
    assert_eq!(verdict, "ok");
    for name in ["kept", "after the backup", "later still"] {
        assert!(names.contains(name), "{name}: {names:?}");
    }
}

/// A backup handed to the operator with a table and a trigger of someone
/// else's (the trigger gives every new user the password of a sample user)
/// is refused, naming them; and `backup` refuses to write such a file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restore_and_backup_refuse_a_schema_the_migrations_do_not_make() {
    let database = FreshDatabase::create(Db::Sqlite).await;
    let data_dir = database.data_dir().to_owned();
    let backups = tempfile::tempdir().unwrap();
    let good = backups.path().join("good.backup");
    let server = ServerProcess::start(Path::new(BINARY), &database, &[], &[]);
    add_pet(&http(), &server.url, "kept").await;
    let backed_up = command(&data_dir, &["backup", "--to", good.to_str().unwrap()]);
    assert!(backed_up.status.success(), "{}", text(&backed_up));
    server.terminate();

    let tampered = backups.path().join("tampered.backup");
    std::fs::copy(&good, &tampered).unwrap();
    let url = format!("sqlite://{}", tampered.display());
    let mut conn = sqlx::SqliteConnection::connect(&url).await.unwrap();
    for statement in [
        "CREATE TABLE notes (x TEXT)",
        "CREATE TRIGGER same_password AFTER INSERT ON users BEGIN \
         UPDATE users SET password_hash = (SELECT password_hash FROM users WHERE id = 1) \
         WHERE id = NEW.id; END",
    ] {
        sqlx::query(statement).execute(&mut conn).await.unwrap();
    }
    conn.close().await.unwrap();

    let live = data_dir.join("petstore-portfolio.db");
    let before = std::fs::read(&live).unwrap();
    let refused = command(
        &data_dir,
        &["restore", "--from", tampered.to_str().unwrap()],
    );
    assert!(!refused.status.success(), "{}", text(&refused));
    for named in ["trigger \"same_password\"", "table \"notes\""] {
        assert!(
            text(&refused).contains(named),
            "{named}: {}",
            text(&refused)
        );
    }
    assert_eq!(
        std::fs::read(&live).unwrap(),
        before,
        "nothing was restored"
    );

    // The same objects in the live database: `backup` checks what it wrote.
    // (Without the stopped server's write-ahead log, which belongs to the
    // file replaced.)
    for leftover in ["petstore-portfolio.db-wal", "petstore-portfolio.db-shm"] {
        let _ = std::fs::remove_file(data_dir.join(leftover));
    }
    std::fs::copy(&tampered, &live).unwrap();
    let copy = backups.path().join("copy.backup");
    let refused = command(&data_dir, &["backup", "--to", copy.to_str().unwrap()]);
    assert!(!refused.status.success(), "{}", text(&refused));
    assert!(
        text(&refused).contains("same_password"),
        "{}",
        text(&refused)
    );
    assert!(!copy.exists(), "no backup is left behind");
    // The untouched backup still goes in.
    let restored = command(&data_dir, &["restore", "--from", good.to_str().unwrap()]);
    assert!(restored.status.success(), "{}", text(&restored));
}

/// Runs `program` with `args`, failing the test with its output if it fails.
fn run(program: &str, args: &[&str]) {
    let output = Command::new(program).args(args).output().unwrap();
    assert!(
        output.status.success(),
        "{program} {args:?}: {}",
        text(&output)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pg_dump_and_pg_restore_as_documented_carry_the_data_to_a_new_database() {
    let Some(db) = Db::postgres("backup::pg_dump_and_pg_restore_as_documented") else {
        return;
    };
    let source = FreshDatabase::create(db.clone()).await;
    let server = ServerProcess::start(Path::new(BINARY), &source, &[], &[]);
    let id = add_pet(&http(), &server.url, "dumped").await["id"].clone();
    let dump = tempfile::tempdir().unwrap();
    let file = dump.path().join("petstore-portfolio.dump");
    // docs/deploy.md: pg_dump while the server runs.
    run(
        "pg_dump",
        &[
            "--format=custom",
            "--file",
            file.to_str().unwrap(),
            &source.url,
        ],
    );
    server.terminate();
    let target = FreshDatabase::create(db).await;
    run(
        "pg_restore",
        &[
            "--no-owner",
            "--exit-on-error",
            "--dbname",
            &target.url,
            file.to_str().unwrap(),
        ],
    );
    let restored = ServerProcess::start(Path::new(BINARY), &target, &[], &[]);
    let answer = http()
        .get(restored.at(&format!("/v2/pet/{id}")))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    assert_eq!(
        answer.json::<serde_json::Value>().await.unwrap()["name"],
        "dumped"
    );
}

/// Litestream: from the project's Python tools (`.ci/run`), else the PATH.
fn litestream() -> Option<PathBuf> {
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/ci-venv/bin/litestream");
    if venv.exists() {
        return Some(venv);
    }
    installed("litestream", "SKIPPED: backup::litestream").then(|| PathBuf::from("litestream"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn litestream_with_the_documented_configuration_replicates_and_restores() {
    let Some(litestream) = litestream() else {
        return;
    };
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/deploy/litestream.yml");
    let database = FreshDatabase::create(Db::Sqlite).await;
    let replica = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(Path::new(BINARY), &database, &[], &[]);
    let env = [
        (
            "PETSTORE_PORTFOLIO_DATA_DIR",
            database.data_dir().as_os_str(),
        ),
        ("LITESTREAM_REPLICA", replica.path().as_os_str()),
    ];
    let mut replicating = Command::new(&litestream)
        .arg("replicate")
        .arg("-config")
        .arg(&config)
        .envs(env)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let client = http();
    let mut written = BTreeSet::new();
    for n in 0..50 {
        let name = format!("streamed-{n}");
        add_pet(&client, &server.url, &name).await;
        written.insert(name);
    }
    // Litestream ships the WAL every second: restore until every write is
    // in the replica.
    let restored = replica.path().join("restored.db");
    let live = database.data_dir().join("petstore-portfolio.db");
    wait_until(
        Duration::from_secs(30),
        "the writes in the replica",
        async || {
            let _ = std::fs::remove_file(&restored);
            let output = Command::new(&litestream)
                .arg("restore")
                .arg("-config")
                .arg(&config)
                .arg("-o")
                .arg(&restored)
                .arg(&live)
                .envs(env)
                .output()
                .unwrap();
            output.status.success() && pets_in(&restored).await.0.is_superset(&written)
        },
    )
    .await;
    let _ = replicating.kill();
    let _ = replicating.wait();
    server.terminate();
    let (names, verdict) = pets_in(&restored).await;
    assert_eq!(verdict, "ok");
    assert!(names.is_superset(&written));

    // Put in place with the server's own restore, into a fresh directory,
    // and served.
    let fresh = FreshDatabase::create(Db::Sqlite).await;
    let put = command(
        fresh.data_dir(),
        &["restore", "--from", restored.to_str().unwrap()],
    );
    assert!(put.status.success(), "{}", text(&put));
    let server = ServerProcess::start(Path::new(BINARY), &fresh, &[], &[]);
    let answer = http()
        .get(server.at("/v2/pet/findByStatus?status=available"))
        .send()
        .await
        .unwrap();
    let found: Vec<serde_json::Value> = answer.json().await.unwrap();
    assert!(
        found.iter().any(|pet| pet["name"] == "streamed-49"),
        "{found:?}"
    );
}
