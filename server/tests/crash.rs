//! The real binary killed with `kill -9` under write load: while it writes
//! emails as `.eml` files (no file is ever torn, no acknowledged write is
//! lost, every email ends up written once), and while many clients add pets
//! at once, their writes committed in groups (every pet acknowledged is
//! there after the restart).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use end_to_end_tests::process::ServerProcess;
use end_to_end_tests::{Db, FreshDatabase, http, on_every_database, send_json, wait_until};
use serde_json::json;

const BINARY: &str = env!("CARGO_BIN_EXE_petstore-portfolio");
const KILLS: usize = 3;
const WRITERS: usize = 8;
/// Enough clients at once that their writes share commits.
const PET_WRITERS: usize = 32;
const WAIT: Duration = Duration::from_secs(60);

on_every_database!(
    killed_while_writing_emails_no_file_is_torn_and_nothing_is_lost,
    killed_while_adding_pets_every_acknowledged_pet_is_there,
);

/// Subscribes fresh addresses from several clients until `stop`; returns the
/// addresses the server acknowledged (202).
async fn subscribe_until(url: String, round: usize, stop: Arc<AtomicBool>) -> Vec<String> {
    let mut writers = Vec::new();
    for writer in 0..WRITERS {
        let (url, stop) = (url.clone(), stop.clone());
        writers.push(tokio::spawn(async move {
            let client = http();
            let mut acknowledged = Vec::new();
            for n in 0.. {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                let email = format!("r{round}-w{writer}-n{n}@example.test");
                let answer = client
                    .post(format!("{url}/api/newsletter"))
                    .json(&json!({ "email": email }))
                    .timeout(Duration::from_secs(5))
                    .send()
                    .await;
                match answer {
                    Ok(answer) if answer.status().as_u16() == 202 => acknowledged.push(email),
                    // The server was killed under this request: not acknowledged.
                    _ => break,
                }
            }
            acknowledged
        }));
    }
    let mut acknowledged = Vec::new();
    for writer in writers {
        acknowledged.extend(writer.await.unwrap());
    }
    acknowledged
}

/// The `.eml` files of the folder (by recipient) and the names of any other
/// files; panics on a torn file: a welcome email (`multipart/alternative`)
/// ends with its closing boundary, and its text (quoted-printable) holds
/// the unsubscribe link its `List-Unsubscribe` header names.
fn emails_in(folder: &Path) -> (BTreeMap<String, Vec<String>>, Vec<String>) {
    let mut by_recipient: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut others = Vec::new();
    for entry in std::fs::read_dir(folder).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.extension().is_none_or(|e| e != "eml") {
            others.push(name);
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let link = text
            .split_once("List-Unsubscribe: <")
            .and_then(|(_, rest)| rest.split_once('>'))
            .map(|(link, _)| link)
            .unwrap_or_default();
        let closing = text
            .split_once("boundary=\"")
            .and_then(|(_, rest)| rest.split_once('"'))
            .map(|(boundary, _)| format!("--{boundary}--\r\n"))
            .unwrap_or_default();
        let body = text.split_once("\r\n\r\n").map_or("", |(_, body)| body);
        let decoded = body.replace("=\r\n", "").replace("=3D", "=");
        assert!(
            !link.is_empty()
                && !closing.is_empty()
                && text.ends_with(&closing)
                && decoded.contains(link),
            "{name} is torn: {text:?}"
        );
        let to = text
            .lines()
            .find_map(|l| l.strip_prefix("To: "))
            .unwrap_or_default()
            .to_owned();
        by_recipient.entry(to).or_default().push(name);
    }
    (by_recipient, others)
}

async fn killed_while_writing_emails_no_file_is_torn_and_nothing_is_lost(db: Db) {
    let database = FreshDatabase::create(db).await;
    let outbox = database.data_dir().join("outbox");
    let mut acknowledged = Vec::new();
    for round in 0..KILLS {
        let server = ServerProcess::start(Path::new(BINARY), &database, &[], &[]);
        let stop = Arc::new(AtomicBool::new(false));
        let load = tokio::spawn(subscribe_until(server.url.clone(), round, stop.clone()));
        // Kill it while emails are being written: once this round has put
        // some on disk, with more queued behind them.
        let written_before = std::fs::read_dir(&outbox).map_or(0, |d| d.count());
        wait_until(WAIT, "emails are being written", async || {
            std::fs::read_dir(&outbox).map_or(0, |d| d.count()) >= written_before + 40
        })
        .await;
        server.kill();
        stop.store(true, Ordering::SeqCst);
        acknowledged.extend(load.await.unwrap());
        // No torn file, whenever the kill came.
        emails_in(&outbox);
    }

    // A last start delivers what the kills left queued.
    let server = ServerProcess::start(Path::new(BINARY), &database, &[], &[]);
    wait_until(WAIT, "the outbox drains", async || {
        database.count("outbox WHERE status = 'pending'").await == 0
    })
    .await;
    server.terminate();

    let (by_recipient, others) = emails_in(&outbox);
    assert!(others.is_empty(), "only whole .eml files: {others:?}");
    let subscribers = database.count("subscribers").await;
    assert!(
        subscribers >= acknowledged.len() as i64,
        "every acknowledged subscription is stored: {subscribers} < {}",
        acknowledged.len()
    );
    for email in &acknowledged {
        let files = by_recipient.get(email).map_or(0, Vec::len);
        assert_eq!(files, 1, "{email} has one welcome email");
    }
    let twice: Vec<_> = by_recipient.iter().filter(|(_, f)| f.len() > 1).collect();
    assert!(twice.is_empty(), "no email written twice: {twice:?}");
    database.remove().await;
}

/// Adds pets from many clients at once (so that their writes share commits)
/// until `stop`; returns the pets the server acknowledged (200), by id and
/// name, and counts them in `acknowledged` as they come.
async fn add_pets_until(
    url: String,
    round: usize,
    stop: Arc<AtomicBool>,
    acknowledged: Arc<AtomicUsize>,
) -> Vec<(i64, String)> {
    let mut writers = Vec::new();
    for writer in 0..PET_WRITERS {
        let (url, stop, count) = (url.clone(), stop.clone(), acknowledged.clone());
        writers.push(tokio::spawn(async move {
            let client = http();
            let mut added = Vec::new();
            for n in 0.. {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                let name = format!("r{round}-w{writer}-n{n}");
                let answer = client
                    .post(format!("{url}/v2/pet"))
                    .json(&json!({ "name": name, "photoUrls": [], "tags": [{ "name": "crash" }] }))
                    .timeout(Duration::from_secs(5))
                    .send()
                    .await;
                let Ok(answer) = answer else { break };
                if answer.status().as_u16() != 200 {
                    break;
                }
                // The server was killed under this answer if it is not whole.
                let Ok(pet) = answer.json::<serde_json::Value>().await else {
                    break;
                };
                added.push((pet["id"].as_i64().unwrap(), name));
                count.fetch_add(1, Ordering::SeqCst);
            }
            added
        }));
    }
    let mut added = Vec::new();
    for writer in writers {
        added.extend(writer.await.unwrap());
    }
    added
}

async fn killed_while_adding_pets_every_acknowledged_pet_is_there(db: Db) {
    let database = FreshDatabase::create(db).await;
    let mut acknowledged = Vec::new();
    for round in 0..KILLS {
        let server = ServerProcess::start(Path::new(BINARY), &database, &[], &[]);
        let stop = Arc::new(AtomicBool::new(false));
        let count = Arc::new(AtomicUsize::new(0));
        let load = tokio::spawn(add_pets_until(
            server.url.clone(),
            round,
            stop.clone(),
            count.clone(),
        ));
        // Kill it in full flow: writes acknowledged, more in the batch.
        wait_until(WAIT, "pets are being added", async || {
            count.load(Ordering::SeqCst) >= 300
        })
        .await;
        server.kill();
        stop.store(true, Ordering::SeqCst);
        acknowledged.extend(load.await.unwrap());
    }

    let server = ServerProcess::start(Path::new(BINARY), &database, &[], &[]);
    let client = http();
    let mut missing = Vec::new();
    for (id, name) in &acknowledged {
        let (_, _, pet) = send_json(client.get(server.at(&format!("/v2/pet/{id}")))).await;
        if pet["name"].as_str() != Some(name.as_str()) || pet["tags"][0]["name"] != "crash" {
            missing.push((id, name, pet));
        }
    }
    server.terminate();
    assert!(
        acknowledged.len() >= 300 * KILLS,
        "{} pets acknowledged",
        acknowledged.len()
    );
    assert!(
        missing.is_empty(),
        "{} of {} acknowledged pets are missing or different after the kills: {:?}",
        missing.len(),
        acknowledged.len(),
        &missing[..missing.len().min(5)]
    );
    database.remove().await;
}
