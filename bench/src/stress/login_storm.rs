//! A login storm: 100 concurrent logins for users that do not exist, then 16
//! clients creating users (each with a password) for 10 seconds. Every one
//! is an argon2id hash of 19 MiB; the figure to watch is the peak resident
//! memory, which the bounded hashing pool keeps flat.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use super::{Server, build_release, client};

const LOGINS: usize = 100;
const CREATORS: usize = 16;
const CREATING_FOR: Duration = Duration::from_secs(10);

pub async fn run(root: &std::path::Path) -> anyhow::Result<()> {
    let binary = build_release(root)?;
    // The failed-login limit would stop the storm after 10: lifted, to
    // measure the hashing itself.
    let server = Server::start(
        &binary,
        &[
            (
                "PETSTORE_PORTFOLIO_PETSTORE__FAILED_LOGINS_PER_MINUTE",
                "1000000",
            ),
            ("PETSTORE_PORTFOLIO_PETSTORE__DEMO_DATA", "false"),
        ],
        "",
    )?;
    let http = client()?;
    let idle = server.rss_mib()?;
    println!(
        "login storm against the release build on {} (SQLite)",
        server.url
    );
    println!("  resident memory at rest: {idle:.1} MiB");

    let started = Instant::now();
    let logins: Vec<_> = (0..LOGINS)
        .map(|n| {
            let (http, url) = (http.clone(), format!("{}/v2/user/login", server.url));
            tokio::spawn(async move {
                let answer = http
                    .get(url)
                    .query(&[
                        ("username", format!("nobody{n}")),
                        ("password", "x".to_owned()),
                    ])
                    .send()
                    .await;
                answer.map(|a| a.status().as_u16()).unwrap_or(0)
            })
        })
        .collect();
    let mut statuses: BTreeMap<u16, usize> = BTreeMap::new();
    for login in logins {
        *statuses.entry(login.await?).or_default() += 1;
    }
    println!(
        "  {LOGINS} concurrent logins for unknown users in {:.2} s: {}",
        started.elapsed().as_secs_f64(),
        describe(&statuses)
    );
    println!(
        "  peak resident memory so far: {:.1} MiB",
        server.peak_rss_mib()?
    );

    let until = Instant::now() + CREATING_FOR;
    let creators: Vec<_> = (0..CREATORS)
        .map(|c| {
            let (http, url) = (http.clone(), format!("{}/v2/user", server.url));
            tokio::spawn(async move {
                let mut statuses: BTreeMap<u16, usize> = BTreeMap::new();
                let mut n = 0;
                while Instant::now() < until {
                    let user = serde_json::json!({
                        "username": format!("c{c}-u{n}"),
                        "password": "correct horse battery staple",
                    });
                    let status = http
                        .post(&url)
                        .json(&user)
                        .send()
                        .await
                        .map(|a| a.status().as_u16())
                        .unwrap_or(0);
                    *statuses.entry(status).or_default() += 1;
                    n += 1;
                }
                statuses
            })
        })
        .collect();
    let mut created: BTreeMap<u16, usize> = BTreeMap::new();
    for creator in creators {
        for (status, count) in creator.await? {
            *created.entry(status).or_default() += count;
        }
    }
    let made = created.get(&200).copied().unwrap_or(0);
    println!(
        "  {CREATORS} clients creating users for {} s: {} ({:.0} users/s)",
        CREATING_FOR.as_secs(),
        describe(&created),
        made as f64 / CREATING_FOR.as_secs_f64()
    );
    let peak = server.peak_rss_mib()?;
    println!(
        "  peak resident memory over the whole run: {peak:.1} MiB (target: under 128 MiB); now {:.1} MiB",
        server.rss_mib()?
    );
    Ok(())
}

/// `66 × 400, 34 × 503` (0: no answer).
fn describe(statuses: &BTreeMap<u16, usize>) -> String {
    statuses
        .iter()
        .map(|(status, count)| format!("{count} × {status}"))
        .collect::<Vec<_>>()
        .join(", ")
}
