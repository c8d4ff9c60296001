//! Several server processes on one database, as replicas behind a load
//! balancer run: started at once on a fresh database, they
//! migrate it once and all serve; what one writes the others see within a
//! second; their outbox workers deliver every email once, also when one is
//! killed; a limit holds across them with Redis; a demo reset by one is
//! served by all; an idempotency key used on one is replayed by all; a
//! server that finds a schema newer than it knows refuses to start.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use end_to_end_tests::ports::HeldPort;
use end_to_end_tests::process::ServerProcess;
use end_to_end_tests::smtp::{self, SmtpServer};
use end_to_end_tests::{
    Db, FreshDatabase, http, inside_a_fresh_minute, on_every_database, redis_url, send, send_json,
    wait_until,
};

const BINARY: &str = env!("CARGO_BIN_EXE_petstore-portfolio");
const REPLICAS: usize = 3;

on_every_database!(
    a_server_refuses_a_schema_newer_than_it_knows,
    with_redis_down_requests_are_answered_and_readiness_says_so,
);

/// The PostgreSQL database for a test of replicas (they share PostgreSQL;
/// SQLite serves one process), or `None` with a loud note where none is
/// configured.
async fn postgres(test: &str) -> Option<FreshDatabase> {
    Some(FreshDatabase::create(Db::postgres(test)?).await)
}

/// Starts [`REPLICAS`] servers on `database` at the same moment, with `env`
/// added, and waits until each says where it listens.
fn start_replicas(database: &FreshDatabase, env: &[(&str, &str)]) -> Vec<ServerProcess> {
    let starting: Vec<_> = (0..REPLICAS)
        .map(|_| {
            let mut command = Command::new(BINARY);
            command
                .args(["--bind", "127.0.0.1:0", "--database-url", &database.url])
                .arg("--data-dir")
                .arg(database.data_dir())
                .env_remove("PETSTORE_PORTFOLIO_CONFIG")
                .env("RUST_LOG", "warn")
                .env("PETSTORE_PORTFOLIO_HTTP__SHUTDOWN_DRAIN_SECS", "0")
                .stdout(Stdio::piped());
            for (name, value) in env {
                command.env(name, value);
            }
            std::thread::spawn(move || ServerProcess::spawn(command))
        })
        .collect();
    starting.into_iter().map(|t| t.join().unwrap()).collect()
}

/// Three replicas started at the same moment on an empty PostgreSQL
/// database: one migrates it (under sqlx's advisory lock), the others wait
/// and find it done; all three serve, and each migration is recorded once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_started_at_once_migrate_once_and_all_serve() {
    let Some(database) =
        postgres("replicas::replicas_started_at_once_migrate_once_and_all_serve").await
    else {
        return;
    };
    let replicas = start_replicas(&database, &[]);
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
    stop(replicas, database).await;
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

/// Stops `replicas` gracefully, then drops their database.
async fn stop(replicas: Vec<ServerProcess>, database: FreshDatabase) {
    for replica in replicas {
        replica.terminate();
    }
    database.remove().await;
}

/// Subscribes `emails` through `replicas` in turn; each is acknowledged.
async fn subscribe(replicas: &[&ServerProcess], emails: &[String]) {
    let client = http();
    for (email, replica) in emails.iter().zip(replicas.iter().cycle()) {
        let answer = client
            .post(replica.at("/api/newsletter"))
            .json(&serde_json::json!({ "email": email }))
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 202, "{email} through {}", replica.url);
    }
}

/// How many emails each recipient received.
fn received_by_recipient(smtp: &SmtpServer) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for message in smtp.messages() {
        for to in message.rcpt_tos {
            *counts.entry(to).or_default() += 1;
        }
    }
    counts
}

/// Three replicas' outbox workers share one outbox: every email reaches the
/// SMTP server exactly once. Then one replica is killed (`kill -9`) while
/// emails are on their way: every email still arrives, and only those it had
/// in flight (at most its SMTP connections) may arrive twice, after their
/// lease ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_deliver_every_email_once_even_when_one_is_killed() {
    const TEST: &str = "replicas::replicas_deliver_every_email_once_even_when_one_is_killed";
    if !smtp::available(TEST) {
        return;
    }
    let Some(database) = postgres(TEST).await else {
        return;
    };
    let smtp = SmtpServer::start();
    let port = smtp.port.to_string();
    let connections = 4;
    let connections_text = connections.to_string();
    let env = [
        ("PETSTORE_PORTFOLIO_MAIL__SMTP__HOST", "127.0.0.1"),
        ("PETSTORE_PORTFOLIO_MAIL__SMTP__PORT", port.as_str()),
        ("PETSTORE_PORTFOLIO_MAIL__SMTP__TLS", "none"),
        // The lease of an email in flight is 2 x this + 30 s.
        ("PETSTORE_PORTFOLIO_MAIL__SMTP__TIMEOUT_SECS", "1"),
        (
            "PETSTORE_PORTFOLIO_MAIL__SMTP__CONNECTIONS",
            connections_text.as_str(),
        ),
    ];
    let mut replicas = start_replicas(&database, &env);

    let first: Vec<String> = (0..60).map(|n| format!("first-{n}@example.test")).collect();
    subscribe(&replicas.iter().collect::<Vec<_>>(), &first).await;
    smtp.wait_for(first.len(), Duration::from_secs(60)).await;
    let received = received_by_recipient(&smtp);
    for email in &first {
        assert_eq!(received.get(email), Some(&1), "{email}: {received:?}");
    }
    assert_eq!(received.len(), first.len(), "{received:?}");

    // The third replica takes its share of new subscriptions, and is
    // killed while their emails are being delivered.
    let killed = replicas.pop().unwrap();
    let second: Vec<String> = (0..60)
        .map(|n| format!("second-{n}@example.test"))
        .collect();
    subscribe(&[&replicas[0], &replicas[1], &killed], &second).await;
    killed.kill();
    let third: Vec<String> = (0..30).map(|n| format!("third-{n}@example.test")).collect();
    subscribe(&replicas.iter().collect::<Vec<_>>(), &third).await;

    let all: Vec<&String> = first.iter().chain(&second).chain(&third).collect();
    wait_until(Duration::from_secs(90), "every email arrives", async || {
        let received = received_by_recipient(&smtp);
        all.iter().all(|email| received.contains_key(*email))
    })
    .await;
    let received = received_by_recipient(&smtp);
    let twice: Vec<_> = received.iter().filter(|(_, n)| **n > 1).collect();
    assert!(
        twice.len() <= connections
            && twice
                .iter()
                .all(|(email, n)| **n == 2 && email.starts_with("second-")),
        "more than the killed replica's emails in flight arrived twice: {twice:?}"
    );
    assert_eq!(received.len(), all.len(), "{received:?}");
    stop(replicas, database).await;
}

/// An API key the rate-limit tests call with (its own counter, apart from
/// the address's, which readiness checks use).
const KEY: &str = "replica-test-key-0123456789";

/// A prefix for this test's counters in the shared Redis: nothing else
/// (another test, another run in the same minute) counts with them.
fn unique_prefix() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("test-{}-{nanos}", std::process::id())
}

/// With a limit of 100 requests a minute per key, 150 requests sent at once
/// and spread over three replicas: exactly 100 pass, 50 are refused (429
/// with `Retry-After`), and every answer carries the limit's headers. With
/// counters of each process's own, 150 would pass.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_limit_holds_across_replicas_exactly() {
    const TEST: &str = "replicas::a_limit_holds_across_replicas_exactly";
    let Some(redis) = redis_url(TEST) else {
        return;
    };
    let Some(database) = postgres(TEST).await else {
        return;
    };
    let prefix = unique_prefix();
    let keys = format!(r#"[{{name="replicas",key="{KEY}",scopes=["admin"]}}]"#);
    let env = [
        ("PETSTORE_PORTFOLIO_REDIS_URL", redis.as_str()),
        ("PETSTORE_PORTFOLIO_REDIS_KEY_PREFIX", prefix.as_str()),
        ("PETSTORE_PORTFOLIO_PORTFOLIO__API_KEYS", keys.as_str()),
        (
            "PETSTORE_PORTFOLIO_PORTFOLIO__RATE_LIMIT__PER_KEY_PER_MINUTE",
            "100",
        ),
    ];
    let replicas = start_replicas(&database, &env);
    let client = http();
    for replica in &replicas {
        let (_, _, ready) = send_json(client.get(replica.at("/api/health/ready"))).await;
        assert_eq!(ready["status"], "ready", "{ready}");
        assert_eq!(ready["checks"]["rate_limits"]["ok"], true, "{ready}");
    }

    inside_a_fresh_minute().await;
    let answers = futures::future::join_all((0..150).map(|n| {
        client
            .get(replicas[n % REPLICAS].at("/api/site-info"))
            .header("X-API-Key", KEY)
            .send()
    }))
    .await;
    let (mut passed, mut refused) = (0, 0);
    for answer in answers {
        let answer = answer.unwrap();
        let headers = answer.headers();
        assert_eq!(headers["x-ratelimit-limit"], "100");
        assert!(headers.contains_key("ratelimit"));
        match answer.status().as_u16() {
            200 => passed += 1,
            429 => {
                assert!(headers.contains_key("retry-after"));
                assert_eq!(headers["x-ratelimit-remaining"], "0");
                refused += 1;
            }
            other => panic!("answered {other}"),
        }
    }
    assert_eq!((passed, refused), (100, 50));
    stop(replicas, database).await;
}

/// Redis configured but not there: every request is still answered (the
/// limit counted in the process), readiness says `degraded` and why, and
/// nothing is a 500.
async fn with_redis_down_requests_are_answered_and_readiness_says_so(db: Db) {
    let database = FreshDatabase::create(db).await;
    let nobody = HeldPort::free();
    let nothing_there = format!("redis://127.0.0.1:{}", nobody.port());
    let keys = format!(r#"[{{name="operator",key="{KEY}",scopes=["admin"]}}]"#);
    let server = ServerProcess::start(
        Path::new(BINARY),
        &database,
        &["--redis-url", &nothing_there],
        &[
            (
                "PETSTORE_PORTFOLIO_PORTFOLIO__RATE_LIMIT__ANONYMOUS_PER_MINUTE",
                "5",
            ),
            ("PETSTORE_PORTFOLIO_PORTFOLIO__API_KEYS", keys.as_str()),
        ],
    );
    let client = http();
    let mut statuses = Vec::new();
    for _ in 0..7 {
        let answer = client
            .get(server.at("/api/site-info"))
            .send()
            .await
            .unwrap();
        assert!(answer.headers().contains_key("x-ratelimit-remaining"));
        statuses.push(answer.status().as_u16());
    }
    // Counted in the process: the limit still holds there.
    assert_eq!(statuses, [200, 200, 200, 200, 200, 429, 429]);

    // Over the address's limit by now, but health checks are never refused.
    let (status, _, ready) = send_json(client.get(server.at("/api/health/ready"))).await;
    assert_eq!(status, 200);
    assert_eq!(ready["status"], "degraded", "{ready}");
    assert_eq!(ready["checks"]["rate_limits"]["ok"], false, "{ready}");
    assert!(
        !ready.to_string().contains("redis://"),
        "no internals to anyone: {ready}"
    );
    // The operator is told why.
    let (_, _, ready) = send_json(
        client
            .get(server.at("/api/health/ready"))
            .header("x-api-key", KEY),
    )
    .await;
    let detail = ready["checks"]["rate_limits"]["detail"].as_str().unwrap();
    assert!(
        detail.contains("does not answer") && detail.contains("requests are still answered"),
        "{detail}"
    );
    server.terminate();
    database.remove().await;
}

/// A bearer token with the admin scope: an OAuth client registered with the
/// operator's command, its token asked of `replica`.
async fn admin_token(database: &FreshDatabase, replica: &ServerProcess) -> String {
    let output = Command::new(BINARY)
        .args([
            "clients", "create", "--name", "replicas", "--scope", "admin", "--json",
        ])
        .args(["--database-url", &database.url])
        .arg("--data-dir")
        .arg(database.data_dir())
        .env_remove("PETSTORE_PORTFOLIO_CONFIG")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let registered: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    token_of(&registered, replica).await
}

/// A token for the client `registered` (as registering it answered), asked
/// of `replica`.
async fn token_of(registered: &serde_json::Value, replica: &ServerProcess) -> String {
    let (_, _, token) = send_json(
        http()
            .post(replica.at("/api/oauth/token"))
            .basic_auth(
                registered["client"]["client_id"].as_str().unwrap(),
                registered["client_secret"].as_str(),
            )
            .form(&[("grant_type", "client_credentials")]),
    )
    .await;
    token["access_token"].as_str().unwrap().to_owned()
}

/// Waits until `seen` holds on each of `replicas`, at most 2 s each (the
/// access caches look for changes every second).
async fn seen_by_every_replica(
    replicas: &[ServerProcess],
    what: &str,
    seen: impl AsyncFn(&ServerProcess) -> bool,
) {
    for replica in replicas {
        wait_until(Duration::from_secs(2), what, async || seen(replica).await).await;
    }
}

/// What one replica writes, the others see within a second: a key made
/// and revoked, an OAuth client revoked, the site information changed, a pet
/// added and changed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_one_replica_writes_the_others_see_within_a_second() {
    const TEST: &str = "replicas::what_one_replica_writes_the_others_see_within_a_second";
    let Some(database) = postgres(TEST).await else {
        return;
    };
    let replicas = start_replicas(&database, &[]);
    let (writer, readers) = (&replicas[0], &replicas[1..]);
    let client = http();
    let admin = admin_token(&database, writer).await;

    // A key made on one replica works on the others...
    let (_, _, made) = send_json(
        client
            .post(writer.at("/api/admin/api-keys"))
            .bearer_auth(&admin)
            .json(&serde_json::json!({"name": "coherence", "scopes": ["admin"]})),
    )
    .await;
    let (Some(id), Some(key)) = (made["api_key"]["id"].as_str(), made["key"].as_str()) else {
        panic!("no key made: {made}");
    };
    let (id, key) = (id.to_owned(), key.to_owned());
    let status_on = async |replica: &ServerProcess, key: &str| {
        send(
            client
                .get(replica.at("/api/llm-context"))
                .header("X-API-Key", key),
        )
        .await
        .0
    };
    seen_by_every_replica(
        readers,
        "a new key works on every replica",
        async |reader| status_on(reader, &key).await == 200,
    )
    .await;
    // ...and, revoked there, on none.
    let (revoked, _, _) = send(
        client
            .post(writer.at(&format!("/api/admin/api-keys/{id}/revoke")))
            .bearer_auth(&admin),
    )
    .await;
    assert_eq!(revoked, 200);
    seen_by_every_replica(
        readers,
        "a revoked key is refused on every replica",
        async |reader| status_on(reader, &key).await == 401,
    )
    .await;

    // An OAuth client registered on one replica, its token taken on
    // another and used on the third; revoked on the first, its token is
    // refused everywhere.
    let (_, _, registered) = send_json(
        client
            .post(writer.at("/api/admin/oauth-clients"))
            .bearer_auth(&admin)
            .json(&serde_json::json!({"name": "coherence", "scopes": ["admin"]})),
    )
    .await;
    let client_id = registered["client"]["client_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let token = token_of(&registered, &readers[0]).await;
    let with_token = async |replica: &ServerProcess| {
        send(
            client
                .get(replica.at("/api/admin/api-keys"))
                .bearer_auth(&token),
        )
        .await
        .0
    };
    assert_eq!(with_token(&readers[1]).await, 200);
    let (revoked, _, _) = send(
        client
            .post(writer.at(&format!("/api/admin/oauth-clients/{client_id}/revoke")))
            .bearer_auth(&admin),
    )
    .await;
    assert_eq!(revoked, 200);
    seen_by_every_replica(
        readers,
        "a revoked client's token is refused on every replica",
        async |reader| with_token(reader).await == 401,
    )
    .await;

    // The site information.
    let site =
        serde_json::json!({"name": "Ada", "headline": "Replicated", "bio": "b", "links": []});
    let (changed, _, _) = send(
        client
            .put(writer.at("/api/admin/site-info"))
            .bearer_auth(&admin)
            .json(&site),
    )
    .await;
    assert_eq!(changed, 200);
    seen_by_every_replica(
        readers,
        "the new site information on every replica",
        async |reader| {
            let (_, _, info) = send_json(client.get(reader.at("/api/site-info"))).await;
            info["headline"] == "Replicated"
        },
    )
    .await;

    // A pet added, then changed, on one replica.
    let pet: serde_json::Value = client
        .post(writer.at("/v2/pet"))
        .json(&serde_json::json!({"name": "Replicated", "photoUrls": []}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let pet_id = pet["id"].as_i64().unwrap();
    let name_on = async |replica: &ServerProcess| {
        let (_, _, pet) = send_json(client.get(replica.at(&format!("/v2/pet/{pet_id}")))).await;
        pet["name"].as_str().map(str::to_owned)
    };
    for reader in readers {
        assert_eq!(name_on(reader).await.as_deref(), Some("Replicated"));
    }
    let (renamed, _, _) = send(
        client
            .put(writer.at("/v2/pet"))
            .json(&serde_json::json!({"id": pet_id, "name": "Renamed", "photoUrls": []})),
    )
    .await;
    assert_eq!(renamed, 200);
    seen_by_every_replica(
        readers,
        "the renamed pet on every replica",
        async |reader| name_on(reader).await.as_deref() == Some("Renamed"),
    )
    .await;
    stop(replicas, database).await;
}

/// With the pet store's credentials enforced, a session begun on one
/// replica works on the others, and ended there, works on none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_ended_on_one_replica_is_refused_by_all() {
    const TEST: &str = "replicas::a_session_ended_on_one_replica_is_refused_by_all";
    let Some(database) = postgres(TEST).await else {
        return;
    };
    let replicas = start_replicas(
        &database,
        &[("PETSTORE_PORTFOLIO_PETSTORE__AUTH_MODE", "enforce")],
    );
    let (writer, readers) = (&replicas[0], &replicas[1..]);
    let client = http();
    let (status, _, session) =
        send_json(client.get(writer.at("/v2/user/login?username=user1&password=XXXXXXXXXXX")))
            .await;
    assert_eq!(status, 200, "{session}");
    let session = session.as_str().unwrap().to_owned();
    let add_pet = async |replica: &ServerProcess| {
        send(
            client
                .post(replica.at("/v2/pet"))
                .bearer_auth(&session)
                .json(&serde_json::json!({"name": "Session", "photoUrls": []})),
        )
        .await
        .0
    };
    for reader in readers {
        assert_eq!(add_pet(reader).await, 200);
    }
    let (ended, _, _) = send(
        client
            .get(writer.at("/v2/user/logout"))
            .bearer_auth(&session),
    )
    .await;
    assert_eq!(ended, 200);
    seen_by_every_replica(
        readers,
        "an ended session is refused on every replica",
        async |reader| add_pet(reader).await == 401,
    )
    .await;
    stop(replicas, database).await;
}

/// A new password set on one replica ends the user's other sessions and
/// the Basic credentials every replica remembered (each had checked them,
/// and cached them), within a second; the new password works everywhere.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_password_changed_on_one_replica_is_the_only_one_all_accept() {
    const TEST: &str = "replicas::a_password_changed_on_one_replica_is_the_only_one_all_accept";
    let Some(database) = postgres(TEST).await else {
        return;
    };
    let replicas = start_replicas(
        &database,
        &[("PETSTORE_PORTFOLIO_PETSTORE__AUTH_MODE", "enforce")],
    );
    let (writer, readers) = (&replicas[0], &replicas[1..]);
    let client = http();
    let login = async || {
        let (status, _, session) =
            send_json(client.get(writer.at("/v2/user/login?username=user1&password=XXXXXXXXXXX")))
                .await;
        assert_eq!(status, 200, "{session}");
        session.as_str().unwrap().to_owned()
    };
    let (this, other) = (login().await, login().await);
    let find = async |replica: &ServerProcess, authorization: &str| {
        send(
            client
                .get(replica.at("/v2/pet/findByStatus"))
                .header("authorization", authorization),
        )
        .await
        .0
    };
    let old_basic = format!("Basic {}", base64_of("user1:XXXXXXXXXXX"));
    let other_bearer = format!("Bearer {other}");
    for reader in readers {
        assert_eq!(find(reader, &old_basic).await, 200, "remembered there now");
        assert_eq!(find(reader, &other_bearer).await, 200, "cached there now");
    }
    let (changed, _, _) = send(
        client
            .put(writer.at("/v2/user/user1"))
            .bearer_auth(&this)
            .json(&serde_json::json!({"username": "user1", "password": "a-new-password"})),
    )
    .await;
    assert_eq!(changed, 200);
    seen_by_every_replica(
        readers,
        "the old password and the other session are refused on every replica",
        async |reader| {
            find(reader, &old_basic).await == 401 && find(reader, &other_bearer).await == 401
        },
    )
    .await;
    let new_basic = format!("Basic {}", base64_of("user1:a-new-password"));
    for reader in readers {
        assert_eq!(find(reader, &new_basic).await, 200);
        assert_eq!(find(reader, &format!("Bearer {this}")).await, 200);
    }
    stop(replicas, database).await;
}

fn base64_of(text: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(text)
}

/// The sample data restored by one replica's periodic reset (the demo's
/// `petstore.demo_reset_interval_secs`) is what the others serve next.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_demo_reset_by_one_replica_is_served_by_all() {
    const TEST: &str = "replicas::a_demo_reset_by_one_replica_is_served_by_all";
    let Some(database) = postgres(TEST).await else {
        return;
    };
    // Two replicas without the reset, then one that resets every second.
    let mut replicas = start_replicas(&database, &[]);
    replicas.truncate(2);
    let resetting = ServerProcess::start(
        Path::new(BINARY),
        &database,
        &[],
        &[("PETSTORE_PORTFOLIO_PETSTORE__DEMO_RESET_INTERVAL_SECS", "1")],
    );
    let client = http();
    let name_on = async |replica: &ServerProcess| {
        let (_, _, pet) = send_json(client.get(replica.at("/v2/pet/1"))).await;
        pet["name"].as_str().map(str::to_owned)
    };
    let renamed = send(
        client
            .put(replicas[0].at("/v2/pet"))
            .json(&serde_json::json!({"id": 1, "name": "Renamed", "photoUrls": []})),
    )
    .await
    .0;
    assert_eq!(renamed, 200);
    for replica in &replicas {
        wait_until(
            Duration::from_secs(5),
            "the sample pet back on every replica",
            async || name_on(replica).await.as_deref() == Some("Cat 1"),
        )
        .await;
    }
    resetting.terminate();
    stop(replicas, database).await;
}

/// An `Idempotency-Key` holds across replicas: a retry that a load
/// balancer sends to another replica gets the first answer, replayed, and
/// the pet is created once; the same key with another body is refused on
/// every replica.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idempotency_key_used_on_one_replica_is_replayed_by_all() {
    const TEST: &str = "replicas::an_idempotency_key_used_on_one_replica_is_replayed_by_all";
    let Some(database) = postgres(TEST).await else {
        return;
    };
    let replicas = start_replicas(&database, &[]);
    let client = http();
    let pet = serde_json::json!({"name": "Once", "photoUrls": []});
    let post = |replica: &ServerProcess, body: &serde_json::Value| {
        client
            .post(replica.at("/v2/pet"))
            .header("Idempotency-Key", "replicated-1")
            .json(body)
            .send()
    };
    let first = post(&replicas[0], &pet).await.unwrap();
    assert_eq!(first.status(), 200);
    let first: serde_json::Value = first.json().await.unwrap();
    for replica in &replicas[1..] {
        let again = post(replica, &pet).await.unwrap();
        assert_eq!(again.status(), 200);
        assert_eq!(again.headers().get("idempotency-replayed").unwrap(), "true");
        assert_eq!(again.json::<serde_json::Value>().await.unwrap(), first);
        let other = serde_json::json!({"name": "Twice", "photoUrls": []});
        assert_eq!(post(replica, &other).await.unwrap().status(), 422);
    }
    let (status, _, found) =
        send_json(client.get(replicas[2].at("/v2/pet/findByStatus?status=available"))).await;
    assert_eq!(status, 200);
    let named_once = found
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["name"] == "Once")
        .count();
    assert_eq!(named_once, 1, "{found}");
    stop(replicas, database).await;
}
