//! A read that starts after a write was acknowledged sees that write or a
//! later one, with the read caches on: writers and readers at
//! once, on one SQLite server, and on two PostgreSQL replicas (writes on
//! one, reads on both). Each pet has one writer, which renames it `v1`,
//! `v2`, ... and publishes each version once it is acknowledged; a reader
//! notes the versions published before it sends its request and checks what
//! it gets against them: the pet by id, the list of its status, and the
//! inventory (a second writer adds sold pets and counts them).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use end_to_end_tests::process::ServerProcess;
use end_to_end_tests::{Db, FreshDatabase, http};
use serde_json::{Value, json};

const BINARY: &str = env!("CARGO_BIN_EXE_petstore-portfolio");
/// Pets renamed, each by a writer of its own.
const PETS: usize = 6;
/// Versions each writer writes.
const VERSIONS: u64 = 120;
/// Sold pets the second writer adds.
const SOLD_ADDED: u64 = 200;
/// Readers of each kind, on each replica read from.
const READERS: usize = 3;

fn start(database: &FreshDatabase) -> ServerProcess {
    ServerProcess::start(std::path::Path::new(BINARY), database, &[], &[])
}

async fn json_of(response: reqwest::Response) -> Value {
    let status = response.status();
    let text = response.text().await.unwrap();
    assert!(status.is_success(), "{status}: {text}");
    serde_json::from_str(&text).unwrap()
}

/// The version in a pet's name (`v<n>`; 0 before the first rename).
fn version_of(pet: &Value) -> u64 {
    pet["name"]
        .as_str()
        .and_then(|name| name.strip_prefix('v'))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// What the writers have had acknowledged so far.
struct Acknowledged {
    /// The pets' ids, and the last version of each acknowledged.
    pets: Vec<(i64, AtomicU64)>,
    /// Sold pets added and acknowledged.
    sold_added: AtomicU64,
    /// The inventory's sold count before any was added.
    sold_before: u64,
    done: AtomicBool,
}

/// Runs the writers on `writer` and the readers on each of `readers` at
/// once; every read is checked. The reads that were checked, by kind.
async fn writes_and_reads(writer: &str, readers: &[&str]) -> [u64; 3] {
    let client = http();
    let mut pets = Vec::new();
    for _ in 0..PETS {
        let added = client
            .post(format!("{writer}/v2/pet"))
            .json(&json!({"name": "v0", "photoUrls": [], "status": "pending"}))
            .send()
            .await
            .unwrap();
        pets.push((
            json_of(added).await["id"].as_i64().unwrap(),
            AtomicU64::new(0),
        ));
    }
    let inventory = json_of(
        client
            .get(format!("{writer}/v2/store/inventory"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    let acknowledged = Arc::new(Acknowledged {
        pets,
        sold_added: AtomicU64::new(0),
        sold_before: inventory["sold"].as_u64().unwrap(),
        done: AtomicBool::new(false),
    });
    // Every reader reads before the writes begin too, so that the caches
    // hold the old values when they do.
    for reader in readers {
        for (id, _) in &acknowledged.pets {
            client
                .get(format!("{reader}/v2/pet/{id}"))
                .send()
                .await
                .unwrap();
        }
        client
            .get(format!("{reader}/v2/pet/findByStatus?status=pending"))
            .send()
            .await
            .unwrap();
        client
            .get(format!("{reader}/v2/store/inventory"))
            .send()
            .await
            .unwrap();
    }

    let mut writers = tokio::task::JoinSet::new();
    for index in 0..PETS {
        let (acknowledged, client, writer) =
            (acknowledged.clone(), client.clone(), writer.to_owned());
        writers.spawn(async move {
            let (id, published) = &acknowledged.pets[index];
            for version in 1..=VERSIONS {
                let pet = json!({"id": id, "name": format!("v{version}"), "photoUrls": [], "status": "pending"});
                let answer = client.put(format!("{writer}/v2/pet")).json(&pet).send().await.unwrap();
                json_of(answer).await;
                published.store(version, Ordering::Release);
            }
        });
    }
    {
        let (acknowledged, client, writer) =
            (acknowledged.clone(), client.clone(), writer.to_owned());
        writers.spawn(async move {
            for added in 1..=SOLD_ADDED {
                let pet = json!({"name": "sold", "photoUrls": [], "status": "sold"});
                json_of(
                    client
                        .post(format!("{writer}/v2/pet"))
                        .json(&pet)
                        .send()
                        .await
                        .unwrap(),
                )
                .await;
                acknowledged.sold_added.store(added, Ordering::Release);
            }
        });
    }

    let mut reading = tokio::task::JoinSet::new();
    for reader in readers {
        for n in 0..READERS {
            for kind in 0..3 {
                let (acknowledged, client, reader) =
                    (acknowledged.clone(), client.clone(), (*reader).to_owned());
                reading.spawn(async move {
                    let mut checked = 0_u64;
                    let mut turn = n;
                    while !acknowledged.done.load(Ordering::Acquire) {
                        turn += 1;
                        match kind {
                            0 => {
                                let (id, published) = &acknowledged.pets[turn % PETS];
                                let at_least = published.load(Ordering::Acquire);
                                let pet = json_of(client.get(format!("{reader}/v2/pet/{id}")).send().await.unwrap()).await;
                                assert!(
                                    version_of(&pet) >= at_least,
                                    "pet {id} read as {pet} on {reader} after v{at_least} was acknowledged"
                                );
                            }
                            1 => {
                                let at_least: Vec<u64> = acknowledged
                                    .pets
                                    .iter()
                                    .map(|(_, published)| published.load(Ordering::Acquire))
                                    .collect();
                                let list = json_of(
                                    client
                                        .get(format!("{reader}/v2/pet/findByStatus?status=pending"))
                                        .send()
                                        .await
                                        .unwrap(),
                                )
                                .await;
                                for ((id, _), at_least) in acknowledged.pets.iter().zip(at_least) {
                                    let pet = list
                                        .as_array()
                                        .unwrap()
                                        .iter()
                                        .find(|pet| pet["id"].as_i64() == Some(*id))
                                        .unwrap_or_else(|| panic!("pet {id} missing from the pending list"));
                                    assert!(
                                        version_of(pet) >= at_least,
                                        "the pending list had pet {id} as {pet} on {reader} after v{at_least} was acknowledged"
                                    );
                                }
                            }
                            _ => {
                                let at_least = acknowledged.sold_added.load(Ordering::Acquire);
                                let inventory = json_of(
                                    client.get(format!("{reader}/v2/store/inventory")).send().await.unwrap(),
                                )
                                .await;
                                let sold = inventory["sold"].as_u64().unwrap();
                                assert!(
                                    sold >= acknowledged.sold_before + at_least,
                                    "the inventory said {sold} sold on {reader} after {at_least} were added to {}",
                                    acknowledged.sold_before
                                );
                            }
                        }
                        checked += 1;
                    }
                    (kind, checked)
                });
            }
        }
    }
    while let Some(finished) = writers.join_next().await {
        finished.unwrap();
    }
    acknowledged.done.store(true, Ordering::Release);
    let mut checked = [0; 3];
    while let Some(finished) = reading.join_next().await {
        let (kind, count) = finished.unwrap();
        checked[kind] += count;
    }
    // The readers ran beside the writers, not after them.
    assert!(
        checked.iter().all(|&count| count >= 50),
        "reads checked by kind: {checked:?}"
    );
    checked
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_sqlite_a_read_after_an_acknowledged_write_sees_it() {
    let database = FreshDatabase::create(Db::Sqlite).await;
    let server = start(&database);
    let checked = writes_and_reads(&server.url, &[&server.url]).await;
    println!("reads checked (pet, list, inventory): {checked:?}");
    server.terminate();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_two_postgres_replicas_a_read_after_an_acknowledged_write_on_either_sees_it() {
    const TEST: &str = "read_after_write::on_two_postgres_replicas_a_read_after_an_acknowledged_write_on_either_sees_it";
    let Some(db) = Db::postgres(TEST) else {
        return;
    };
    let database = FreshDatabase::create(db).await;
    let (first, second) = (start(&database), start(&database));
    let checked = writes_and_reads(&first.url, &[&first.url, &second.url]).await;
    println!("reads checked (pet, list, inventory): {checked:?}");
    first.terminate();
    second.terminate();
}

/// The replicas' listening connections to `url`'s database (what
/// `storage/change_feed.rs` keeps open), and ends them if `end`.
async fn listeners(url: &str, end: bool) -> i64 {
    use sqlx::Connection as _;
    let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
    let sql = if end {
        "SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity \
         WHERE datname = current_database() AND query = 'LISTEN \"petstore_changes\"'"
    } else {
        "SELECT COUNT(*) FROM pg_stat_activity \
         WHERE datname = current_database() AND query = 'LISTEN \"petstore_changes\"'"
    };
    sqlx::query_scalar(sql).fetch_one(&mut conn).await.unwrap()
}

/// When a replica's listening connection breaks, the notices sent
/// meanwhile are lost: once it listens again, it must not serve what it
/// cached before. A pet cached on the second replica is renamed on the
/// first while the second's connection is down; after the second listens
/// again, it answers the new name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_whose_notices_were_cut_off_serves_nothing_it_cached_before() {
    const TEST: &str =
        "read_after_write::a_replica_whose_notices_were_cut_off_serves_nothing_it_cached_before";
    let Some(db) = Db::postgres(TEST) else {
        return;
    };
    let database = FreshDatabase::create(db).await;
    let (first, second) = (start(&database), start(&database));
    let client = http();
    let pet = json_of(
        client
            .post(format!("{}/v2/pet", first.url))
            .json(&json!({"name": "v1", "photoUrls": [], "status": "available"}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    let id = pet["id"].as_i64().unwrap();
    let read = |url: String| {
        let client = client.clone();
        async move {
            version_of(
                &json_of(
                    client
                        .get(format!("{url}/v2/pet/{id}"))
                        .send()
                        .await
                        .unwrap(),
                )
                .await,
            )
        }
    };
    let url = database.url.as_str();
    let listening = |wanted: fn(i64) -> bool| async move {
        for _ in 0..400 {
            if wanted(listeners(url, false).await) {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        }
        panic!("the replicas' listening connections never became as wanted");
    };
    listening(|n| n == 2).await;
    // Read (and so cached) on the second, once its fences arrive.
    for _ in 0..20 {
        assert_eq!(read(second.url.clone()).await, 1);
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(
        listeners(&database.url, true).await,
        2,
        "two replicas listened"
    );
    // Renamed while no replica listens (they connect again after half a
    // second): its notice reaches no one.
    listening(|n| n == 0).await;
    json_of(
        client
            .put(format!("{}/v2/pet", first.url))
            .json(&json!({"id": id, "name": "v2", "photoUrls": [], "status": "available"}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        listeners(&database.url, false).await,
        0,
        "the rename was not heard"
    );
    listening(|n| n == 2).await;
    // Listening again: fences arrive, and what was cached before is gone.
    for _ in 0..20 {
        assert_eq!(read(second.url.clone()).await, 2);
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    first.terminate();
    second.terminate();
}
