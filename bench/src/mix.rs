//! The mixed loads of `cargo xtask bench`: reads and writes at once, as
//! traffic comes, on a server of their own (a fresh database), beside the
//! ceiling answering each kind of request with the bytes the server
//! answered for it.
//!
//! - **The pet store mix**: 1,000 pets (every tenth `sold`, the rest
//!   `available`, each with a category and two tags); of each 100 requests,
//!   80 `getPetById` (ids drawn from a Zipf distribution, s = 1), 10
//!   `findPetsByStatus?status=sold` (the 100 sold pets), 5 `updatePet` (a
//!   Zipf pet renamed, its status kept), 3 `addPet` (with a category and
//!   tags) and 2 `placeOrder` (each for another pet of a pool set aside for
//!   orders). Every write is durable before it is answered, and a write
//!   changes what the reads after it see: what the caches survive shows here.
//! - **The portfolio mix**: of each 100 requests, 35 `site-info`, 15
//!   `projects`, 15 `posts`, 25 `llm-context` (with one of 50 API keys), 5
//!   `contact` (with a key) and 5 `newsletter` (a new address each time);
//!   the emails they queue are delivered during the run.

use std::path::Path;

use anyhow::Context as _;

use crate::load::{Ceiling, Figures, Options, WRK_THREAD_INDEX, measure, record_answer};
use crate::stress::Server;

/// Pets of the mix: ids `MIX_FIRST_PET ..` (chosen by the bench, so that
/// the script knows them).
pub const MIX_PETS: i64 = 1_000;
const MIX_FIRST_PET: i64 = 1_000_000;
/// Pets set aside for orders: ids `ORDER_POOL_FIRST ..`.
const ORDER_POOL_FIRST: i64 = 2_000_000;

/// API keys of the portfolio mix.
pub const MIX_KEYS: usize = 50;

/// The 50 keys, as the configuration lists them.
pub fn mix_keys() -> Vec<String> {
    (0..MIX_KEYS)
        .map(|n| format!("mix-key-{n:02}-0123456789abcdef"))
        .collect()
}

/// The configuration entries of the keys (to append to the bench's own).
pub fn mix_keys_config() -> String {
    mix_keys()
        .iter()
        .enumerate()
        .map(|(n, key)| {
            format!(r#"{{name="mix-{n:02}",key="{key}",scopes=["context:read","contact:write"]}}"#)
        })
        .collect::<Vec<_>>()
        .join(",")
}

fn mix_pet_body(slot: i64) -> String {
    let status = if slot % 10 == 0 { "sold" } else { "available" };
    format!(
        r#"{{"id":{},"name":"pet {slot}","category":{{"id":1,"name":"Dogs"}},"photoUrls":["https://example.com/p.png"],"tags":[{{"id":1,"name":"mix"}},{{"id":2,"name":"zipf"}}],"status":"{status}"}}"#,
        MIX_FIRST_PET + slot
    )
}

const ADDED_PET: &str = r#"{"name":"added","category":{"id":2,"name":"Cats"},"photoUrls":["https://example.com/a.png"],"tags":[{"id":3,"name":"new"},{"id":4,"name":"mix"}],"status":"pending"}"#;

/// Orders each connection may place in a run, per second of it: the pool
/// holds this many pets per second of load (2 % of 100,000 requests/s).
const ORDERS_PER_SECOND: i64 = 2_000;

/// The pet store mix on `server` (a fresh database) and on a ceiling that
/// answers each kind of request with what the server answered.
pub async fn pet_store(
    wrk: &Path,
    ceiling_binary: &Path,
    server: &Server,
    http: &reqwest::Client,
    options: &Options,
) -> anyhow::Result<(Figures, Figures)> {
    let pool = ORDERS_PER_SECOND * i64::from(options.seconds);
    let put = |body: String| {
        http.post(format!("{}/v2/pet", server.url))
            .header("Content-Type", "application/json")
            .body(body)
    };
    crate::load::send_all((0..MIX_PETS).map(|slot| put(mix_pet_body(slot)))).await?;
    crate::load::send_all((0..pool).map(|n| {
        put(format!(
            r#"{{"id":{},"name":"for sale","photoUrls":[],"status":"available"}}"#,
            ORDER_POOL_FIRST + n
        ))
    }))
    .await?;

    // What the ceiling answers: one real answer of each kind.
    let answers = tempfile::tempdir()?;
    let json = "application/json";
    let samples: [(&str, reqwest::RequestBuilder); 5] = [
        (
            "mix-get",
            http.get(format!("{}/v2/pet/{}", server.url, MIX_FIRST_PET + 1)),
        ),
        (
            "mix-find",
            http.get(format!("{}/v2/pet/findByStatus?status=sold", server.url)),
        ),
        (
            "mix-update",
            http.put(format!("{}/v2/pet", server.url))
                .header("Content-Type", json)
                .body(mix_pet_body(1)),
        ),
        (
            "mix-add",
            http.post(format!("{}/v2/pet", server.url))
                .header("Content-Type", json)
                .body(ADDED_PET),
        ),
        (
            // The pool's last pet: the run orders from the first.
            "mix-order",
            http.post(format!("{}/v2/store/order", server.url))
                .header("Content-Type", json)
                .body(format!(
                    r#"{{"petId":{},"quantity":1,"status":"placed"}}"#,
                    ORDER_POOL_FIRST + pool - 1
                )),
        ),
    ];
    record_answers(answers.path(), samples).await?;

    let script = |ceiling: bool| {
        format!(
            r#"{WRK_THREAD_INDEX}
local N = {MIX_PETS}
local CEILING = {ceiling}
local cdf = {{}}
local orders = 0
function init(args)
  math.randomseed(7919 + tindex * 104729)
  local s = 0
  for k = 1, N do s = s + 1 / k; cdf[k] = s end
  for k = 1, N do cdf[k] = cdf[k] / s end
end
-- A pet of the mix, its rank drawn from Zipf's law; ranks are spread
-- over the ids (919 is prime to 1,000), so that the hottest are not all sold.
local function zipf_slot()
  local u = math.random()
  local lo, hi = 1, N
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if cdf[mid] < u then lo = mid + 1 else hi = mid end
  end
  return ((lo - 1) * 919) % N
end
local accept = {{}}
accept["Accept"] = "application/json"
local json = {{}}
json["Content-Type"] = "application/json"
local function path(real, name)
  if CEILING then return "/" .. name end
  return real
end
function request()
  sent = sent + 1
  local r = math.random(100)
  if r <= 80 then
    return wrk.format("GET", path("/v2/pet/" .. ({MIX_FIRST_PET} + zipf_slot()), "mix-get"), accept)
  elseif r <= 90 then
    return wrk.format("GET", path("/v2/pet/findByStatus?status=sold", "mix-find"), accept)
  elseif r <= 95 then
    local slot = zipf_slot()
    local status = "available"
    if slot % 10 == 0 then status = "sold" end
    local body = string.format('{{"id":%d,"name":"pet %d v%d","category":{{"id":1,"name":"Dogs"}},"photoUrls":["https://example.com/p.png"],"tags":[{{"id":1,"name":"mix"}},{{"id":2,"name":"zipf"}}],"status":"%s"}}', {MIX_FIRST_PET} + slot, slot, sent, status)
    return wrk.format("PUT", path("/v2/pet", "mix-update"), json, body)
  elseif r <= 98 then
    return wrk.format("POST", path("/v2/pet", "mix-add"), json, [[{ADDED_PET}]])
  else
    local pet = {ORDER_POOL_FIRST} + orders * 2 + tindex
    orders = orders + 1
    return wrk.format("POST", path("/v2/store/order", "mix-order"), json,
      string.format('{{"petId":%d,"quantity":1,"status":"placed"}}', pet))
  end
end
"#
        )
    };
    run_beside_ceiling(
        wrk,
        ceiling_binary,
        answers.path(),
        &server.url,
        script,
        options,
    )
}

/// The first of the hot-spot mix's pets.
const HOT_FIRST_PET: i64 = 3_000_000;
/// How many pets everyone reads and some rewrite.
const HOT_PETS: i64 = 10;

/// A pending pet of the hot spot, as `updatePet` rewrites it.
fn hot_pet_body(slot: i64, version: i64) -> String {
    format!(
        r#"{{"id":{},"name":"hot {slot} v{version}","category":{{"id":1,"name":"Dogs"}},"photoUrls":["https://example.com/p.png"],"tags":[{{"id":1,"name":"hot"}}],"status":"pending"}}"#,
        HOT_FIRST_PET + slot
    )
}

/// A pet added during the hot-spot mix: available, so that the pending
/// list stays the hot spot's ten.
const HOT_ADDED_PET: &str = r#"{"name":"added","category":{"id":2,"name":"Cats"},"photoUrls":["https://example.com/a.png"],"tags":[{"id":3,"name":"new"}],"status":"available"}"#;

/// Writes where everyone reads, on `server` (a fresh database): of each 100
/// requests, 80 `getPetById` of ten pending pets, 10
/// `findByStatus?status=pending` (those ten), 6 `updatePet` of the same ten
/// (renamed, still pending), 4 `addPet` (available); beside a ceiling that
/// answers each kind with what the server answered.
pub async fn hot_spot(
    wrk: &Path,
    ceiling_binary: &Path,
    server: &Server,
    http: &reqwest::Client,
    options: &Options,
) -> anyhow::Result<(Figures, Figures)> {
    let json = "application/json";
    crate::load::send_all((0..HOT_PETS).map(|slot| {
        http.post(format!("{}/v2/pet", server.url))
            .header("Content-Type", json)
            .body(hot_pet_body(slot, 0))
    }))
    .await?;
    let answers = tempfile::tempdir()?;
    let samples: [(&str, reqwest::RequestBuilder); 4] = [
        (
            "hot-get",
            http.get(format!("{}/v2/pet/{HOT_FIRST_PET}", server.url)),
        ),
        (
            "hot-find",
            http.get(format!("{}/v2/pet/findByStatus?status=pending", server.url)),
        ),
        (
            "hot-update",
            http.put(format!("{}/v2/pet", server.url))
                .header("Content-Type", json)
                .body(hot_pet_body(0, 0)),
        ),
        (
            "hot-add",
            http.post(format!("{}/v2/pet", server.url))
                .header("Content-Type", json)
                .body(HOT_ADDED_PET),
        ),
    ];
    record_answers(answers.path(), samples).await?;
    let script = |ceiling: bool| {
        format!(
            r#"{WRK_THREAD_INDEX}
local CEILING = {ceiling}
function init(args)
  math.randomseed(7919 + tindex * 104729)
end
local accept = {{}}
accept["Accept"] = "application/json"
local json = {{}}
json["Content-Type"] = "application/json"
local function path(real, name)
  if CEILING then return "/" .. name end
  return real
end
function request()
  sent = sent + 1
  local r = math.random(100)
  local slot = math.random({HOT_PETS}) - 1
  if r <= 80 then
    return wrk.format("GET", path("/v2/pet/" .. ({HOT_FIRST_PET} + slot), "hot-get"), accept)
  elseif r <= 90 then
    return wrk.format("GET", path("/v2/pet/findByStatus?status=pending", "hot-find"), accept)
  elseif r <= 96 then
    local body = string.format('{{"id":%d,"name":"hot %d v%d-%d","category":{{"id":1,"name":"Dogs"}},"photoUrls":["https://example.com/p.png"],"tags":[{{"id":1,"name":"hot"}}],"status":"pending"}}', {HOT_FIRST_PET} + slot, slot, tindex, sent)
    return wrk.format("PUT", path("/v2/pet", "hot-update"), json, body)
  else
    return wrk.format("POST", path("/v2/pet", "hot-add"), json, [[{HOT_ADDED_PET}]])
  end
end
"#
        )
    };
    run_beside_ceiling(
        wrk,
        ceiling_binary,
        answers.path(),
        &server.url,
        script,
        options,
    )
}

/// The portfolio mix on `server` (configured with [`mix_keys_config`]).
pub async fn portfolio(
    wrk: &Path,
    ceiling_binary: &Path,
    server: &Server,
    http: &reqwest::Client,
    options: &Options,
) -> anyhow::Result<(Figures, Figures)> {
    let keys = mix_keys();
    let key = keys.first().context("no mix keys")?;
    let json = "application/json";
    let answers = tempfile::tempdir()?;
    let samples: [(&str, reqwest::RequestBuilder); 6] = [
        (
            "pmix-site",
            http.get(format!("{}/api/site-info", server.url)),
        ),
        (
            "pmix-projects",
            http.get(format!("{}/api/projects", server.url)),
        ),
        ("pmix-posts", http.get(format!("{}/api/posts", server.url))),
        (
            "pmix-context",
            http.get(format!("{}/api/llm-context", server.url))
                .header("X-API-Key", key.as_str()),
        ),
        (
            "pmix-contact",
            http.post(format!("{}/api/contact", server.url))
                .header("X-API-Key", key.as_str())
                .header("Content-Type", json)
                .body(CONTACT),
        ),
        (
            "pmix-newsletter",
            http.post(format!("{}/api/newsletter", server.url))
                .header("Content-Type", json)
                .body(r#"{"email":"first@example.test"}"#),
        ),
    ];
    record_answers(answers.path(), samples).await?;
    let lua_keys = keys
        .iter()
        .map(|k| format!("\"{k}\""))
        .collect::<Vec<_>>()
        .join(", ");
    let run = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_millis();
    let script = |ceiling: bool| {
        format!(
            r#"{WRK_THREAD_INDEX}
local CEILING = {ceiling}
local keys = {{ {lua_keys} }}
function init(args)
  math.randomseed(15485863 + tindex * 104729)
end
local function path(real, name)
  if CEILING then return "/" .. name end
  return real
end
function request()
  sent = sent + 1
  local r = math.random(100)
  local headers = {{}}
  if r <= 35 then
    return wrk.format("GET", path("/api/site-info", "pmix-site"))
  elseif r <= 50 then
    return wrk.format("GET", path("/api/projects", "pmix-projects"))
  elseif r <= 65 then
    return wrk.format("GET", path("/api/posts", "pmix-posts"))
  elseif r <= 90 then
    headers["X-API-Key"] = keys[math.random(#keys)]
    return wrk.format("GET", path("/api/llm-context", "pmix-context"), headers)
  elseif r <= 95 then
    headers["X-API-Key"] = keys[math.random(#keys)]
    headers["Content-Type"] = "application/json"
    return wrk.format("POST", path("/api/contact", "pmix-contact"), headers, [[{CONTACT}]])
  else
    headers["Content-Type"] = "application/json"
    return wrk.format("POST", path("/api/newsletter", "pmix-newsletter"), headers,
      string.format('{{"email":"m%d-%d-{run}@example.test"}}', tindex, sent))
  end
end
"#
        )
    };
    run_beside_ceiling(
        wrk,
        ceiling_binary,
        answers.path(),
        &server.url,
        script,
        options,
    )
}

const CONTACT: &str = r#"{"name":"Ada Bench","email":"ada@example.test","subject":"A question","message":"How fast is it with writes among the reads?"}"#;

/// Sends each sample request once and keeps its answer for the ceiling.
async fn record_answers<const N: usize>(
    folder: &Path,
    samples: [(&str, reqwest::RequestBuilder); N],
) -> anyhow::Result<()> {
    for (name, request) in samples {
        record_answer(folder, name, request.send().await?).await?;
    }
    Ok(())
}

/// How many times a mix is measured, on the ceiling and on the server in
/// turn: the machine's speed drifts between two runs of a few seconds (a
/// mix's ratio to its ceiling moved by a fifth between runs of one build),
/// and the round in the middle is less at its mercy than any one.
const MIX_ROUNDS: usize = 3;

/// Runs `script(true)` on a ceiling serving `answers` and `script(false)`
/// on `server_url`, one after the other, [`MIX_ROUNDS`] times; the figures
/// of the round whose ratio is the median (server first).
fn run_beside_ceiling(
    wrk: &Path,
    ceiling_binary: &Path,
    answers: &Path,
    server_url: &str,
    script: impl Fn(bool) -> String,
    options: &Options,
) -> anyhow::Result<(Figures, Figures)> {
    let (ceiling_script, server_script) = (script(true), script(false));
    let ceiling = Ceiling::start(ceiling_binary, answers)?;
    let scripts = tempfile::tempdir()?;
    let ceiling_path = scripts.path().join("ceiling.lua");
    let server_path = scripts.path().join("server.lua");
    std::fs::write(&ceiling_path, ceiling_script)?;
    std::fs::write(&server_path, server_script)?;
    let mut rounds = Vec::with_capacity(MIX_ROUNDS);
    for _ in 0..MIX_ROUNDS {
        let top = measure(wrk, &ceiling.url, &ceiling_path, options)?;
        let ours = measure(wrk, server_url, &server_path, options)?;
        rounds.push((ours, top));
    }
    rounds.sort_by(|(a, a_top), (b, b_top)| {
        (a.requests_per_sec / a_top.requests_per_sec)
            .total_cmp(&(b.requests_per_sec / b_top.requests_per_sec))
    });
    rounds
        .into_iter()
        .nth(MIX_ROUNDS / 2)
        .context("no round of the mix was measured")
}
