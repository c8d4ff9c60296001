//! Failed logins are limited per username and client address, and (ten
//! times higher) per username and per address: brute force gets 429, not an
//! answer; one address cannot lock an account out for everyone; and a
//! client with the right password is never refused for failures, at any
//! concurrency.

use std::net::IpAddr;

use end_to_end_tests::{
    Db, TestServer, header, http_from, inside_a_fresh_minute, on_every_database, send,
};
use serde_json::json;

use crate::support::json_error;

on_every_database!(
    beyond_the_limit_even_the_right_password_is_429,
    one_address_cannot_lock_an_account_out_for_everyone,
    the_account_and_the_address_have_ten_times_higher_ceilings,
    successful_logins_count_nothing,
    a_busy_client_with_the_right_basic_credentials_is_never_refused,
    guesses_sent_at_once_are_limited_too,
);

const LIMIT: u32 = 3;
const FROM_A: [u8; 4] = [127, 0, 0, 2];
const FROM_B: [u8; 4] = [127, 0, 0, 3];

/// A server allowing 3 failed logins a minute, with users ada and bob
/// (password `secret-pw`), started well inside a minute.
async fn start_with_users(db: Db) -> TestServer {
    let server = TestServer::start_with(db, |c| c.petstore.failed_logins_per_minute = LIMIT).await;
    for name in ["ada", "bob"] {
        let body = json!({"username": name, "password": "secret-pw"}).to_string();
        let (status, _, text) = send(server.post_json("/v2/user", body)).await;
        assert_eq!(status, 200, "{text}");
    }
    inside_a_fresh_minute().await;
    server
}

/// Logs in from `address`; returns the status and the answer's headers and body.
async fn login(
    server: &TestServer,
    from: [u8; 4],
    username: &str,
    password: &str,
) -> (u16, reqwest::header::HeaderMap, String) {
    let response = http_from(IpAddr::from(from))
        .get(server.at("/v2/user/login"))
        .query(&[("username", username), ("password", password)])
        .send()
        .await
        .expect("loginUser");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    (status, headers, response.text().await.unwrap_or_default())
}

async fn beyond_the_limit_even_the_right_password_is_429(db: Db) {
    let server = start_with_users(db).await;
    for _ in 0..LIMIT {
        assert_eq!(login(&server, FROM_A, "ada", "wrong").await.0, 400);
    }
    let (status, headers, text) = login(&server, FROM_A, "ada", "secret-pw").await;
    assert_eq!(status, 429, "{text}");
    json_error(status, "application/json", &text, "RATE_LIMITED");
    let retry_after: i64 = header(&headers, "retry-after").unwrap().parse().unwrap();
    assert!((1..=61).contains(&retry_after), "{retry_after}");
    assert_eq!(server.count("user_sessions").await, 0, "no session opened");
    server.stop().await;
}

async fn one_address_cannot_lock_an_account_out_for_everyone(db: Db) {
    let server = start_with_users(db).await;
    for _ in 0..LIMIT {
        assert_eq!(login(&server, FROM_A, "ada", "wrong").await.0, 400);
    }
    assert_eq!(login(&server, FROM_A, "ada", "secret-pw").await.0, 429);
    assert_eq!(login(&server, FROM_B, "ada", "secret-pw").await.0, 200);
    assert_eq!(login(&server, FROM_A, "bob", "secret-pw").await.0, 200);
    server.stop().await;
}

async fn the_account_and_the_address_have_ten_times_higher_ceilings(db: Db) {
    let server = start_with_users(db).await;
    let ceiling = LIMIT * 10;
    // Guesses at ada from many addresses, each under its own limit.
    for n in 0..ceiling {
        let from = [127, 0, 1, u8::try_from(n / LIMIT).unwrap() + 1];
        assert_eq!(login(&server, from, "ada", "wrong").await.0, 400);
    }
    assert_eq!(login(&server, FROM_B, "ada", "secret-pw").await.0, 429);
    // Guesses from one address at many usernames, each once.
    for n in 0..ceiling {
        let (status, _, text) = login(&server, FROM_A, &format!("nobody{n}"), "wrong").await;
        assert_eq!(status, 400, "{text}");
    }
    assert_eq!(login(&server, FROM_A, "bob", "secret-pw").await.0, 429);
    assert_eq!(login(&server, FROM_B, "bob", "secret-pw").await.0, 200);
    server.stop().await;
}

async fn successful_logins_count_nothing(db: Db) {
    let server = start_with_users(db).await;
    for _ in 0..LIMIT + 2 {
        assert_eq!(login(&server, FROM_A, "ada", "secret-pw").await.0, 200);
    }
    server.stop().await;
}

/// 80 requests at once with the right Basic credentials, on a server with
/// one hashing thread and one waiting place, in auth mode `enforce`: every
/// one is answered 200. The attempts of one client are checked one at a
/// time and the password, once verified, is remembered, so the hashing pool
/// sees one verification (before, attempts under way counted as failures:
/// 429s; and each paid a hash of its own: 503s).
async fn a_busy_client_with_the_right_basic_credentials_is_never_refused(db: Db) {
    use base64::Engine as _;
    let server = TestServer::start_with(db, |c| {
        c.petstore.failed_logins_per_minute = LIMIT;
        c.petstore.auth_mode = petstore_portfolio_server::config::AuthMode::Enforce;
        c.petstore.password_hash_threads = 1;
        c.petstore.password_hash_queue = 1;
    })
    .await;
    let body = json!({"username": "ada", "password": "secret-pw"}).to_string();
    assert_eq!(send(server.post_json("/v2/user", body)).await.0, 200);
    let basic = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode("ada:secret-pw")
    );
    let requests: Vec<_> = (0..80)
        .map(|_| {
            let request = http_from(IpAddr::from(FROM_A))
                .get(server.at("/v2/pet/findByStatus"))
                .header("authorization", &basic);
            tokio::spawn(async move { request.send().await.unwrap().status().as_u16() })
        })
        .collect();
    let mut statuses = Vec::new();
    for request in requests {
        statuses.push(request.await.unwrap());
    }
    assert!(statuses.iter().all(|s| *s == 200), "{statuses:?}");
    server.stop().await;
}

/// Password checks beyond the hashing pool's queue are refused with 503
/// and `Retry-After`, never left to pile up (nor answered 500).
#[tokio::test]
async fn a_login_storm_beyond_the_hashing_queue_is_503_with_retry_after() {
    let server = TestServer::start_with(Db::Sqlite, |c| {
        c.petstore.failed_logins_per_minute = 1_000_000;
        c.petstore.password_hash_threads = 1;
        c.petstore.password_hash_queue = 2;
    })
    .await;
    let logins: Vec<_> = (0..24)
        .map(|n| {
            let url = server.at(&format!("/v2/user/login?username=nobody{n}&password=x"));
            tokio::spawn(async move {
                let response = end_to_end_tests::http().get(url).send().await.unwrap();
                let retry_after = header(response.headers(), "retry-after").map(str::to_owned);
                (response.status().as_u16(), retry_after)
            })
        })
        .collect();
    let mut statuses = Vec::new();
    for login in logins {
        let (status, retry_after) = login.await.unwrap();
        if status == 503 {
            assert_eq!(retry_after.as_deref(), Some("1"));
        }
        statuses.push(status);
    }
    assert!(
        statuses.iter().all(|s| *s == 400 || *s == 503),
        "{statuses:?}"
    );
    assert!(
        statuses.contains(&503),
        "the queue is bounded: {statuses:?}"
    );
    assert!(statuses.contains(&400), "some are checked: {statuses:?}");
    server.stop().await;
}

/// Guesses sent at once cannot slip under the limit: attempts of one
/// username from one address are checked one at a time, so each sees the
/// failures before it.
async fn guesses_sent_at_once_are_limited_too(db: Db) {
    let server = start_with_users(db).await;
    let guesses: Vec<_> = (0..24)
        .map(|_| {
            let url = server.at("/v2/user/login?username=ada&password=wrong");
            tokio::spawn(async move {
                let client = http_from(IpAddr::from(FROM_A));
                client.get(url).send().await.unwrap().status().as_u16()
            })
        })
        .collect();
    let mut statuses = Vec::new();
    for guess in guesses {
        statuses.push(guess.await.unwrap());
    }
    let checked = statuses.iter().filter(|s| **s == 400).count();
    assert_eq!(checked, LIMIT as usize, "{statuses:?}");
    assert_eq!(statuses.iter().filter(|s| **s == 429).count(), 24 - checked);
    server.stop().await;
}
