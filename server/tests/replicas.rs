//! Several server processes on one database, as replicas behind a load
//! balancer run (DESIGN 4.9): started at once on a fresh database, they
//! migrate it once and all serve; a server that finds a schema newer than it
//! knows refuses to start.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use end_to_end_tests::process::ServerProcess;
use end_to_end_tests::{Db, FreshDatabase, http, on_every_database};

const BINARY: &str = env!("CARGO_BIN_EXE_petstore-portfolio");
const REPLICAS: usize = 3;

on_every_database!(a_server_refuses_a_schema_newer_than_it_knows);

/// Three replicas started at the same moment on an empty PostgreSQL
/// database: one migrates it (under sqlx's advisory lock), the others wait
/// and find it done; all three serve, and each migration is recorded once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_started_at_once_migrate_once_and_all_serve() {
    let Some(db) = Db::postgres("replicas::replicas_started_at_once_migrate_once_and_all_serve")
    else {
        return;
    };
    let database = FreshDatabase::create(db).await;
    let starting: Vec<_> = (0..REPLICAS)
        .map(|_| {
            let url = database.url.clone();
            let data_dir = database.data_dir().to_path_buf();
            std::thread::spawn(move || {
                let mut command = Command::new(BINARY);
                command
                    .args(["--bind", "127.0.0.1:0", "--database-url", &url])
                    .arg("--data-dir")
                    .arg(data_dir)
                    .env_remove("PETSTORE_PORTFOLIO_CONFIG")
                    .env("RUST_LOG", "warn")
                    .stdout(Stdio::piped());
                ServerProcess::spawn(command)
            })
        })
        .collect();
    let replicas: Vec<ServerProcess> = starting.into_iter().map(|t| t.join().unwrap()).collect();
    let client = http();
    for replica in &replicas {
        let answer = client
            .get(replica.at("/api/health/ready"))
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 200, "{}", replica.url);
    }
    let migrations =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations/postgres"))
            .unwrap()
            .count();
    assert_eq!(
        database.count("_sqlx_migrations").await,
        i64::try_from(migrations).unwrap()
    );
    for replica in replicas {
        replica.terminate();
    }
    database.remove().await;
}

/// A newer version of the server has migrated the database: this one stops
/// at once, says why, and changes nothing.
async fn a_server_refuses_a_schema_newer_than_it_knows(db: Db) {
    let database = FreshDatabase::create(db).await;
    // Migrated by this version first.
    ServerProcess::start(Path::new(BINARY), &database, &[], &[]).terminate();
    sqlx::any::install_default_drivers();
    let pool = sqlx::AnyPool::connect(&database.url).await.unwrap();
    sqlx::query(
        "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
         VALUES ($1, 'from a newer server', TRUE, $2, 0)",
    )
    .bind(99_991_231_000_000_i64)
    .bind(vec![0_u8; 48])
    .execute(&pool)
    .await
    .unwrap();
    pool.close().await;
    let before = database.count("_sqlx_migrations").await;

    let mut server = Command::new(BINARY)
        .args(["--bind", "127.0.0.1:0", "--database-url", &database.url])
        .arg("--data-dir")
        .arg(database.data_dir())
        .env_remove("PETSTORE_PORTFOLIO_CONFIG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Were it to start and serve, it would not end by itself.
    let started = Instant::now();
    while server.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(60) {
            server.kill().unwrap();
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let output = server.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "it started: {stderr}");
    assert!(
        stderr.contains(
            "the database's schema is newer than this server: migration 99991231000000 was \
             applied to it by a newer version of the server"
        ),
        "{stderr}"
    );
    assert_eq!(database.count("_sqlx_migrations").await, before);
    database.remove().await;
}
