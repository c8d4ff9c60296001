//! `cargo xtask bench --scale`: what each read costs as the data grows a
//! thousandfold. One fresh server is filled through the API to 1,000,
//! 10,000, 100,000 and 1,000,000 pets; at each size it prints `getPetById`
//! (random pets, under wrk), a page of `findByStatus` at the start and deep
//! in the list, the whole list's time and bytes, `getInventory` (from memory,
//! and the first after a write), resident memory and the database's size.
//! Then the portfolio gets 100,000 subscribers and 1,000,000 page views:
//! the admin subscriber page, the analytics summary, and `notify-subscribers`
//! to all of them into a local SMTP server (emails per second, memory while
//! it sends, and that every email arrived). Nothing is asserted: the figures
//! are for BENCHMARKS.md.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::Context as _;

use crate::bench::{BENCH_KEY, inventory, notify_all, server_env};
use crate::load::{Figures, Options, find_or_install, measure, send_all};
use crate::postgres::{FreshDatabases, database_size_mib};
use crate::smtp::SmtpSink;
use crate::stress::{Server, build_release, client};

/// The store's sizes, in pets.
pub const SIZES: [usize; 4] = [1_000, 10_000, 100_000, 1_000_000];
const SUBSCRIBERS: usize = 100_000;
const PAGE_VIEWS: usize = 1_000_000;
/// Distinct paths the page views are spread over.
const PATHS: usize = 1_000;
/// The pets of the hot set `getPetById` is measured on.
const HOT_PETS: usize = 1_000;
/// Sequential requests whose median time a row shows.
const SAMPLES: usize = 21;
/// How long the outbox may take to deliver 100,000 emails.
const DELIVERY: Duration = Duration::from_secs(1_800);

pub async fn run(root: &Path, options: &Options, sizes: &[usize]) -> anyhow::Result<()> {
    let wrk = find_or_install("wrk", "wrk")?;
    let binary = build_release(root)?;
    let smtp = SmtpSink::start(root)?;
    let smtp_port = smtp.port.to_string();
    let keys = format!(r#"[{{name="bench",key="{BENCH_KEY}",scopes=["admin"]}}]"#);
    let env = server_env(&keys, &smtp_port);
    let mut databases = options.database_url.as_deref().map(FreshDatabases::new);
    let database_url = match databases.as_mut() {
        Some(databases) => Some(databases.create("scale")?),
        None => None,
    };
    let mut args = Vec::new();
    if let Some(url) = &database_url {
        args.extend(["--database-url".to_owned(), url.clone()]);
    }
    // An OAuth client for the admin lists, registered before the start as
    // an operator would.
    let data = tempfile::tempdir()?;
    let (client_id, client_secret) = register_client(&binary, data.path(), &args)?;
    let server = Server::start_in(data, &binary, &env, &args)?;
    let http = client()?;
    let size_of_database = || match &database_url {
        Some(url) => database_size_mib(url),
        None => sqlite_size_mib(server.data_dir()),
    };
    let scripts = tempfile::tempdir()?;
    let database = database_url.as_ref().map_or("SQLite", |_| "PostgreSQL");
    println!(
        "cargo xtask bench --scale: release build on {database}; wrk {} connections, {} s per run; \
         times (ms) are medians of {SAMPLES} sequential requests. getPetById of a random pet among \
         the first {HOT_PETS} (hot) and among all (any; its time: one at a time, each another \
         pet); a page of 100 sold pets at the start \
         (page1) and 90 % into the list (deep); the whole list of sold pets (a third); \
         getInventory from memory, and just after a write (cold)",
        options.connections, options.seconds
    );
    println!(
        "{:>9} {:>7} | {:>8} {:>6} | {:>8} {:>6} {:>5} | {:>5} {:>5} | {:>7} {:>6} | {:>8} {:>6} {:>6} | {:>5} {:>6}",
        "pets",
        "added/s",
        "hot r/s",
        "p99",
        "any r/s",
        "p99",
        "time",
        "page1",
        "deep",
        "whole",
        "MiB",
        "inv r/s",
        "p99",
        "cold",
        "RSS",
        "DB MiB"
    );
    let mut pets = count_pets(&http, &server.url).await?;
    for &size in sizes {
        let started = Instant::now();
        let adding = size.saturating_sub(pets);
        add_pets(&http, &server.url, pets, adding).await?;
        let added_per_second = adding as f64 / started.elapsed().as_secs_f64();
        pets = pets.max(size);
        // The pets people look at (a thousand, which the cache holds), and
        // any pet at all (almost every one read from the database).
        let hot = measure(
            &wrk,
            &server.url,
            &script(scripts.path(), "hot-pet", &random_pet_script(HOT_PETS))?,
            options,
        )?;
        let any = measure(
            &wrk,
            &server.url,
            &script(scripts.path(), "any-pet", &random_pet_script(pets))?,
            options,
        )?;
        let any_time = any_pet_ms(&http, &server.url, pets).await?;
        let sold = format!("{}/v2/pet/findByStatus?status=sold", server.url);
        let first_page = median_ms(&http, &format!("{sold}&limit=100")).await?;
        let deep_page =
            median_ms(&http, &format!("{sold}&limit=100&cursor={}", pets * 9 / 10)).await?;
        let started = Instant::now();
        let whole = http
            .get(&sold)
            .send()
            .await?
            .error_for_status()?
            .bytes()
            .await?;
        let whole_ms = started.elapsed().as_secs_f64() * 1000.0;
        let inventory = measure(
            &wrk,
            &format!("{}/v2/store/inventory", server.url),
            &script(scripts.path(), "inventory", "wrk.method = \"GET\"\n")?,
            options,
        )?;
        let cold = cold_inventory_ms(&http, &server.url).await?;
        pets += COLD_SAMPLES;
        println!(
            "{:>9} {:>7.0} | {:>8.0} {:>6.2} | {:>8.0} {:>6.2} {:>5.2} | {:>5.2} {:>5.2} | {:>7.0} {:>6.1} | {:>8.0} {:>6.2} {:>6.2} | {:>5.1} {:>6.1}{}",
            size,
            added_per_second,
            hot.requests_per_sec,
            hot.p99_ms,
            any.requests_per_sec,
            any.p99_ms,
            any_time,
            first_page,
            deep_page,
            whole_ms,
            whole.len() as f64 / (1024.0 * 1024.0),
            inventory.requests_per_sec,
            inventory.p99_ms,
            cold,
            server.rss_mib()?,
            size_of_database()?,
            errors(&[hot, any, inventory]),
        );
    }
    println!(
        "pet store: peak resident memory {:.1} MiB",
        server.peak_rss_mib()?
    );

    let token = bearer_token(&http, &server.url, &client_id, &client_secret).await?;
    // A quick try with smaller stores gets a smaller portfolio too.
    let largest = sizes.iter().copied().max().unwrap_or(0);
    let portfolio_size = Portfolio {
        subscribers: SUBSCRIBERS.min(largest / 10).max(100),
        page_views: PAGE_VIEWS.min(largest).max(1_000),
    };
    portfolio(&http, &server, &smtp, &token, portfolio_size).await?;
    println!(
        "whole run: peak resident memory {:.1} MiB, database {:.1} MiB",
        server.peak_rss_mib()?,
        size_of_database()?
    );
    Ok(())
}

/// How much the portfolio is filled with.
#[derive(Debug, Clone, Copy)]
struct Portfolio {
    subscribers: usize,
    page_views: usize,
}

/// The portfolio at 100,000 subscribers and 1,000,000 page views.
async fn portfolio(
    http: &reqwest::Client,
    server: &Server,
    smtp: &SmtpSink,
    token: &str,
    size: Portfolio,
) -> anyhow::Result<()> {
    let url = &server.url;
    let Portfolio {
        subscribers,
        page_views,
    } = size;
    let before = smtp.delivered()?;
    let started = Instant::now();
    send_all((0..subscribers).map(|n| {
        http.post(format!("{url}/api/newsletter"))
            .json(&serde_json::json!({ "email": format!("reader{n}@example.test") }))
    }))
    .await?;
    let subscribed = started.elapsed();
    smtp.wait_for(before + subscribers as u64, DELIVERY).await?;
    println!(
        "{subscribers} subscriptions in {:.1} s ({:.0}/s); their welcome emails delivered by {:.1} s",
        subscribed.as_secs_f64(),
        subscribers as f64 / subscribed.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );

    let started = Instant::now();
    send_all((0..page_views).map(|n| {
        http.post(format!("{url}/api/analytics/pageview"))
            .json(&serde_json::json!({ "path": format!("/posts/p{}", n % PATHS) }))
    }))
    .await?;
    let viewed = started.elapsed();
    // Page views are written in batches about once a second.
    tokio::time::sleep(Duration::from_secs(2)).await;
    println!(
        "{page_views} page views ({PATHS} paths) in {:.1} s ({:.0}/s)",
        viewed.as_secs_f64(),
        page_views as f64 / viewed.as_secs_f64()
    );

    let subscriber_page = format!("{url}/api/admin/subscribers?per_page=100");
    let first = median_ms_with(http, &subscriber_page, |r| r.bearer_auth(token)).await?;
    let deep = median_ms_with(
        http,
        &format!("{subscriber_page}&cursor={}", subscribers * 9 / 10),
        |r| r.bearer_auth(token),
    )
    .await?;
    let numbered = median_ms_with(
        http,
        &format!("{subscriber_page}&page={}", subscribers / 100 * 9 / 10),
        |r| r.bearer_auth(token),
    )
    .await?;
    let summary = median_ms_with(http, &format!("{url}/api/analytics/summary"), |r| {
        r.header("X-API-Key", BENCH_KEY)
    })
    .await?;
    println!(
        "admin subscriber page of 100 at {subscribers} subscribers: first {first:.2} ms, 90 % \
         deep by cursor {deep:.2} ms, the same by page number {numbered:.2} ms; analytics \
         summary {summary:.2} ms"
    );

    let before = smtp.delivered()?;
    let rss_before = server.rss_mib()?;
    let started = Instant::now();
    let queued = notify_all(http, url).await?;
    let answered = started.elapsed();
    // Memory while the outbox sends, sampled as the emails arrive.
    let mut most_rss = rss_before;
    while smtp.delivered()? < before + queued {
        anyhow::ensure!(
            started.elapsed() < DELIVERY,
            "the outbox delivered {} of {queued} emails in {} s",
            smtp.delivered()? - before,
            DELIVERY.as_secs()
        );
        most_rss = most_rss.max(server.rss_mib()?);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let delivered = started.elapsed() - answered;
    let failed: serde_json::Value = http
        .get(format!("{url}/api/admin/outbox/failed"))
        .bearer_auth(token)
        .send()
        .await?
        .error_for_status()?
        .json()
        .await?;
    let failed = failed.as_array().map_or(0, Vec::len);
    println!(
        "notify-subscribers to {queued} subscribers: answered in {} ms; every email delivered in \
         {:.1} s ({:.0} emails/s), {} arrived, {failed} failed; resident memory {rss_before:.1} \
         MiB before, at most {most_rss:.1} MiB while sending",
        answered.as_millis(),
        delivered.as_secs_f64(),
        queued as f64 / delivered.as_secs_f64(),
        smtp.delivered()? - before,
    );
    Ok(())
}

/// The pets the store holds now (the sample's, at the start).
async fn count_pets(http: &reqwest::Client, url: &str) -> anyhow::Result<usize> {
    let inventory = inventory(http, url).await?;
    let counts = inventory.as_object().context("an inventory is an object")?;
    Ok(counts
        .values()
        .filter_map(serde_json::Value::as_u64)
        .sum::<u64>()
        .try_into()?)
}

/// Adds `count` pets after the first `from`: a third of each status, tags
/// from a hundred.
async fn add_pets(
    http: &reqwest::Client,
    url: &str,
    from: usize,
    count: usize,
) -> anyhow::Result<()> {
    const STATUSES: [&str; 3] = ["available", "pending", "sold"];
    send_all((from..from + count).map(|n| {
        let body = format!(
            r#"{{"name":"pet{n}","photoUrls":["https://example.com/{n}.png"],"tags":[{{"id":{},"name":"t{}"}}],"status":"{}"}}"#,
            n % 100 + 1,
            n % 100,
            STATUSES[n % 3]
        );
        http.post(format!("{url}/v2/pet"))
            .header("Content-Type", "application/json")
            .body(body)
    }))
    .await
}

/// A wrk script asking for a random pet among the first `pets` ids.
fn random_pet_script(pets: usize) -> String {
    format!(
        "math.randomseed(7)\nrequest = function()\n  return wrk.format(\"GET\", \"/v2/pet/\" .. math.random(1, {pets}))\nend\n"
    )
}

fn script(folder: &Path, name: &str, text: &str) -> anyhow::Result<std::path::PathBuf> {
    let path = folder.join(format!("{name}.lua"));
    std::fs::write(&path, text)?;
    Ok(path)
}

/// Pets added by [`cold_inventory_ms`], one per sample.
const COLD_SAMPLES: usize = 5;

/// `getInventory` just after a pet was added (the counts read again): the
/// median of a few.
async fn cold_inventory_ms(http: &reqwest::Client, url: &str) -> anyhow::Result<f64> {
    let mut times = Vec::new();
    for _ in 0..COLD_SAMPLES {
        http.post(format!("{url}/v2/pet"))
            .header("Content-Type", "application/json")
            .body(r#"{"name":"cold","photoUrls":[],"status":"available"}"#)
            .send()
            .await?
            .error_for_status()?;
        let started = Instant::now();
        http.get(format!("{url}/v2/store/inventory"))
            .send()
            .await?
            .error_for_status()?
            .bytes()
            .await?;
        times.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    Ok(median(times))
}

/// `getPetById` of one pet after another among the first `pets`, spread
/// over them (at a million, nearly every one read from the database): the
/// median time.
async fn any_pet_ms(http: &reqwest::Client, url: &str, pets: usize) -> anyhow::Result<f64> {
    // 104,729 is prime to every size the run makes: each sample is another
    // pet.
    let urls = (0..SAMPLES).map(|sample| {
        let id = 1 + (sample * 104_729 + 7_919) % pets.max(1);
        format!("{url}/v2/pet/{id}")
    });
    median_ms_over(http, urls, |request| request).await
}

async fn median_ms(http: &reqwest::Client, url: &str) -> anyhow::Result<f64> {
    median_ms_with(http, url, |request| request).await
}

/// The median time of [`SAMPLES`] sequential GETs of `url`, each whole.
async fn median_ms_with(
    http: &reqwest::Client,
    url: &str,
    with: impl Fn(reqwest::RequestBuilder) -> reqwest::RequestBuilder,
) -> anyhow::Result<f64> {
    median_ms_over(http, std::iter::repeat_n(url.to_owned(), SAMPLES), with).await
}

/// The median time of sequential GETs of `urls`, each whole.
async fn median_ms_over(
    http: &reqwest::Client,
    urls: impl Iterator<Item = String>,
    with: impl Fn(reqwest::RequestBuilder) -> reqwest::RequestBuilder,
) -> anyhow::Result<f64> {
    let mut times = Vec::new();
    for url in urls {
        let started = Instant::now();
        with(http.get(&url))
            .send()
            .await?
            .error_for_status()
            .with_context(|| format!("GET {url}"))?
            .bytes()
            .await?;
        times.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    Ok(median(times))
}

fn median(mut times: Vec<f64>) -> f64 {
    times.sort_by(f64::total_cmp);
    times.get(times.len() / 2).copied().unwrap_or(0.0)
}

fn errors(runs: &[Figures]) -> String {
    let errors: u64 = runs.iter().map(|run| run.errors).sum();
    if errors > 0 {
        format!("  ({errors} answers not 2xx)")
    } else {
        String::new()
    }
}

/// The size of the SQLite files in `folder` (the database, its WAL).
fn sqlite_size_mib(folder: &Path) -> anyhow::Result<f64> {
    let mut bytes = 0;
    for entry in std::fs::read_dir(folder)? {
        let entry = entry?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.contains(".db") || name.ends_with(".sqlite") || name.ends_with("-wal") {
            bytes += entry.metadata()?.len();
        }
    }
    Ok(bytes as f64 / (1024.0 * 1024.0))
}

/// Registers an OAuth client with `admin` on the data folder (or the
/// database `args` name) with the binary's `clients create`.
fn register_client(
    binary: &Path,
    data: &Path,
    args: &[String],
) -> anyhow::Result<(String, String)> {
    let output = Command::new(binary)
        .args([
            "clients", "create", "--name", "scale", "--scope", "admin", "--json",
        ])
        .arg("--data-dir")
        .arg(data)
        .args(args)
        .output()
        .context("cannot run clients create")?;
    anyhow::ensure!(
        output.status.success(),
        "clients create: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let shown: serde_json::Value = serde_json::from_slice(&output.stdout)?;
    let id = shown["client"]["client_id"]
        .as_str()
        .context("no client_id")?;
    let secret = shown["client_secret"]
        .as_str()
        .context("no client_secret")?;
    Ok((id.to_owned(), secret.to_owned()))
}

async fn bearer_token(
    http: &reqwest::Client,
    url: &str,
    id: &str,
    secret: &str,
) -> anyhow::Result<String> {
    let answer: serde_json::Value = http
        .post(format!("{url}/api/oauth/token"))
        .basic_auth(id, Some(secret))
        .form(&[("grant_type", "client_credentials")])
        .send()
        .await?
        .error_for_status()?
        .json()
        .await?;
    Ok(answer["access_token"]
        .as_str()
        .context("no access_token")?
        .to_owned())
}
