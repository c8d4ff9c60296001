//! What an operator sees of the real binary: Prometheus metrics on their
//! own listener (route templates as labels, bounded cardinality under a
//! scanner, the dashboard's queries all answered), W3C trace context
//! continued into the logs and exported over OTLP to a receiver the test
//! starts, and the access log (one line per request, without query strings
//! or credentials).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use end_to_end_tests::process::ServerProcess;
use end_to_end_tests::{Db, FreshDatabase, http, wait_until};
use futures::StreamExt as _;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value;
use opentelemetry_proto::tonic::trace::v1::{Span, span::SpanKind};
use prost::Message as _;

const BINARY: &str = env!("CARGO_BIN_EXE_petstore-portfolio");

/// The server with metrics on a free port, its stderr (JSON logs at INFO)
/// in `log`, `env` added; returns it and its metrics URL.
fn start(database: &FreshDatabase, log: &Path, env: &[(&str, &str)]) -> (ServerProcess, String) {
    let mut command = Command::new(BINARY);
    command
        .args(["--bind", "127.0.0.1:0", "--metrics-bind", "127.0.0.1:0"])
        .args(["--database-url", &database.url])
        .arg("--data-dir")
        .arg(database.data_dir())
        .env_remove("PETSTORE_PORTFOLIO_CONFIG")
        .env("RUST_LOG", "info")
        .env("PETSTORE_PORTFOLIO_HTTP__SHUTDOWN_DRAIN_SECS", "0")
        .env("PETSTORE_PORTFOLIO_LOG__FORMAT", "json")
        .env(
            "PETSTORE_PORTFOLIO_PORTFOLIO__API_KEYS",
            "[{name=\"ops\",key=\"s3cret-ops-key\",scopes=[\"admin\"]}]",
        )
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(log).unwrap());
    let server = ServerProcess::spawn(command);
    let line = server.line_starting("metrics:");
    let metrics = line
        .trim_start_matches(|c: char| c != 'h')
        .trim()
        .to_owned();
    (server, metrics)
}

async fn scrape(metrics: &str) -> String {
    let answer = http().get(metrics).send().await.unwrap();
    assert_eq!(answer.status(), 200);
    assert!(
        answer.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain; version=0.0.4")
    );
    answer.text().await.unwrap()
}

/// The series of a scrape: every sample line's name and labels.
fn series(scraped: &str) -> BTreeSet<String> {
    scraped
        .lines()
        .filter(|line| !line.starts_with('#') && !line.is_empty())
        .filter_map(|line| line.rsplit_once(' ').map(|(series, _)| series.to_owned()))
        .collect()
}

/// The value of one series of a scrape.
fn value(scraped: &str, series: &str) -> Option<f64> {
    scraped
        .lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_label_requests_by_route_template_and_count_our_own_events() {
    let database = FreshDatabase::create(Db::Sqlite).await;
    let log = database.data_dir().join("server.log");
    let (server, metrics) = start(&database, &log, &[]);
    let client = http();
    for path in ["/v2/pet/1", "/v2/pet/2", "/v2/pet/987654", "/api/site-info"] {
        client.get(server.at(path)).send().await.unwrap();
    }
    client
        .get(server.at("/api/llm-context"))
        .header("x-api-key", "not-a-key")
        .send()
        .await
        .unwrap();
    client
        .request(
            reqwest::Method::from_bytes(b"BREW").unwrap(),
            server.at("/v2/nowhere/42?secret=x"),
        )
        .send()
        .await
        .unwrap();
    let scraped = scrape(&metrics).await;
    let count = |labels: &str| {
        value(
            &scraped,
            &format!("http_server_request_duration_seconds_count{{{labels}}}"),
        )
    };
    // Three pets, one route; the missing one by its status.
    assert_eq!(
        count(
            "http_request_method=\"GET\",http_route=\"/v2/pet/{petId}\",http_response_status_code=\"200\",service=\"petstore\""
        ),
        Some(2.0),
        "{scraped}"
    );
    assert_eq!(
        count(
            "http_request_method=\"GET\",http_route=\"/v2/pet/{petId}\",http_response_status_code=\"404\",service=\"petstore\""
        ),
        Some(1.0)
    );
    assert_eq!(
        count(
            "http_request_method=\"_OTHER\",http_route=\"unmatched\",http_response_status_code=\"404\",service=\"petstore\""
        ),
        Some(1.0)
    );
    // Buckets, not quantiles.
    assert!(scraped.contains("http_server_request_duration_seconds_bucket{"));
    assert!(!scraped.contains("quantile="));
    assert!(scraped.contains("http_server_response_body_size_bytes_bucket{"));
    assert!(scraped.contains("http_server_request_body_size_bytes_bucket{"));
    assert!(scraped.contains("http_server_active_requests{"));
    assert_eq!(
        value(
            &scraped,
            "petstore_portfolio_authentication_failures_total{service=\"portfolio\",reason=\"unknown_api_key\"}"
        ),
        Some(1.0),
        "{scraped}"
    );
    assert!(
        value(
            &scraped,
            "petstore_portfolio_read_cache_misses_total{cache=\"pets\"}"
        )
        .unwrap()
            >= 2.0
    );
    // No id, key or query in any label (the series' names and labels: a
    // measured value such as a duration's sum may hold any digits).
    let labelled = series(&scraped);
    for secret in ["987654", "not-a-key", "nowhere", "secret"] {
        assert!(
            !labelled.iter().any(|series| series.contains(secret)),
            "{secret} in the metrics"
        );
    }
    // What the server is, and the process's own series.
    let build_info = scraped
        .lines()
        .find(|line| line.starts_with("petstore_portfolio_build_info{"))
        .unwrap_or_else(|| panic!("no build_info in {scraped}"));
    assert!(build_info.ends_with(" 1"), "{build_info}");
    let version = format!("version=\"{}\"", env!("CARGO_PKG_VERSION"));
    assert!(build_info.contains(&version), "{build_info}");
    assert!(build_info.contains("commit=\""), "{build_info}");
    assert!(!build_info.contains("commit=\"unknown\""), "{build_info}");
    for process_series in [
        "process_cpu_seconds_total",
        "process_resident_memory_bytes",
        "process_open_fds",
        "process_start_time_seconds",
    ] {
        assert!(
            scraped.contains(&format!("\n{process_series} ")),
            "{process_series} missing"
        );
    }
    // Every metric the server documents is there.
    for name in petstore_portfolio_server::telemetry::metrics::names() {
        assert!(
            scraped.contains(&format!("# TYPE {name} ")),
            "{name} missing"
        );
    }
    drop(server);
}

/// A list of pets by status whose pet is renamed is made again from the
/// pets' own cached answers, and the renamed pet's is the one the write
/// kept: nothing is read from the database again (the cache's counters say
/// so), and the list shows the new name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_whose_pet_is_renamed_reads_nothing_again() {
    let database = FreshDatabase::create(Db::Sqlite).await;
    let log = database.data_dir().join("server.log");
    let (server, metrics) = start(&database, &log, &[]);
    let client = http();
    for n in 1..=3 {
        let pet = serde_json::json!({
            "id": 5000 + n, "name": format!("sold {n}"), "photoUrls": [], "status": "sold"
        });
        let added = client
            .post(server.at("/v2/pet"))
            .json(&pet)
            .send()
            .await
            .unwrap();
        assert_eq!(added.status(), 200);
    }
    let list = || async {
        let answer = client
            .get(server.at("/v2/pet/findByStatus?status=sold"))
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 200);
        answer.json::<Vec<serde_json::Value>>().await.unwrap()
    };
    let pets = |scraped: &str| {
        let hits = value(
            scraped,
            "petstore_portfolio_read_cache_hits_total{cache=\"pets\"}",
        );
        let misses = value(
            scraped,
            "petstore_portfolio_read_cache_misses_total{cache=\"pets\"}",
        );
        (hits.unwrap_or(0.0), misses.unwrap_or(0.0))
    };
    let sold = list().await.len();
    assert!(sold >= 3, "{sold} sold pets");
    let (hits_before, misses_before) = pets(&scrape(&metrics).await);

    let renamed = serde_json::json!({
        "id": 5002, "name": "renamed", "photoUrls": [], "status": "sold"
    });
    let put = client
        .put(server.at("/v2/pet"))
        .json(&renamed)
        .send()
        .await
        .unwrap();
    assert_eq!(put.status(), 200);
    let listed = list().await;
    let (hits, misses) = pets(&scrape(&metrics).await);

    assert_eq!(listed.len(), sold);
    let names: Vec<&str> = listed
        .iter()
        .filter_map(|pet| pet["name"].as_str())
        .collect();
    assert!(
        names.contains(&"renamed") && !names.contains(&"sold 2"),
        "{names:?}"
    );
    assert_eq!(
        misses - misses_before,
        0.0,
        "the renamed pet was kept as written"
    );
    assert_eq!(
        hits - hits_before,
        sold as f64,
        "every pet comes from the cache"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scanner_of_10000_random_paths_and_methods_adds_no_series() {
    let database = FreshDatabase::create(Db::Sqlite).await;
    let log = database.data_dir().join("server.log");
    let (server, metrics) = start(&database, &log, &[]);
    let methods = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"];
    let scan = |from: usize, to: usize| {
        let client = http();
        let base = server.url.clone();
        futures::stream::iter(from..to)
            .map(move |n| {
                let client = client.clone();
                let base = base.clone();
                async move {
                    let mut rng = fastrand::Rng::with_seed(n as u64);
                    let word: String = (0..rng.usize(3..12)).map(|_| rng.alphanumeric()).collect();
                    let path = match n % 6 {
                        0 => format!("/{word}"),
                        1 => format!("/v2/{word}/{}", rng.u32(..)),
                        2 => format!("/api/{word}?token={word}"),
                        3 => format!("/v2/pet/{word}"),
                        4 => format!("/v2/user/{word}"),
                        _ => format!("/.{word}/{word}"),
                    };
                    // HTTP's methods and made-up ones alike.
                    let method = if n % 3 == 0 {
                        format!("X{}", word.to_uppercase())
                    } else {
                        methods[n % methods.len()].to_owned()
                    };
                    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
                    let answer = client
                        .request(method, format!("{base}{path}"))
                        .send()
                        .await
                        .unwrap();
                    assert_ne!(answer.status().as_u16(), 500, "{path}");
                }
            })
            .buffer_unordered(16)
            .collect::<Vec<()>>()
    };
    // Every kind of answer a scanner gets, once.
    scan(0, 200).await;
    let before = series(&scrape(&metrics).await);
    scan(200, 10_200).await;
    let after = series(&scrape(&metrics).await);
    let added: Vec<_> = after.difference(&before).collect();
    println!(
        "series before the 10,000-path scan: {}, after: {}",
        before.len(),
        after.len()
    );
    assert!(added.is_empty(), "the scan added series: {added:#?}");
    drop(server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_metric_the_dashboard_queries_is_on_metrics() {
    let database = FreshDatabase::create(Db::Sqlite).await;
    let log = database.data_dir().join("server.log");
    let (server, metrics) = start(&database, &log, &[]);
    http().get(server.at("/v2/pet/1")).send().await.unwrap();
    let scraped = scrape(&metrics).await;
    let dashboard = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/grafana-dashboard.json"),
    )
    .unwrap();
    let dashboard: serde_json::Value = serde_json::from_str(&dashboard).unwrap();
    let mut queried = BTreeSet::new();
    collect_queried_metrics(&dashboard, &mut queried);
    assert!(queried.len() >= 15, "{queried:?}");
    for name in &queried {
        let base = ["_bucket", "_count", "_sum"]
            .iter()
            .find_map(|suffix| name.strip_suffix(suffix))
            .filter(|base| scraped.contains(&format!("# TYPE {base} histogram")))
            .unwrap_or(name);
        assert!(
            scraped.contains(&format!("# TYPE {base} ")),
            "the dashboard queries {name}, which /metrics does not have"
        );
    }
    drop(server);
}

/// The metric names in every `expr` of the dashboard.
fn collect_queried_metrics(value: &serde_json::Value, into: &mut BTreeSet<String>) {
    let names = regex::Regex::new(r"\b(http_server_[a-z_]+|petstore_portfolio_[a-z_]+)").unwrap();
    let mut exprs = Vec::new();
    collect_exprs(value, &mut exprs);
    for expr in exprs {
        for name in names.captures_iter(&expr) {
            into.insert(name[1].to_owned());
        }
    }
}

/// Every `expr` string in `value`, however deep.
fn collect_exprs(value: &serde_json::Value, into: &mut Vec<String>) {
    match value {
        serde_json::Value::Object(fields) => {
            for (key, value) in fields {
                match (key.as_str(), value) {
                    ("expr", serde_json::Value::String(expr)) => into.push(expr.clone()),
                    _ => collect_exprs(value, into),
                }
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|item| collect_exprs(item, into)),
        _ => {}
    }
}

/// The JSON log lines of `log` that are access lines.
fn access_lines(log: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|line| line["target"] == "access")
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_traceparent_is_continued_into_the_logs_and_a_malformed_one_starts_a_trace() {
    let database = FreshDatabase::create(Db::Sqlite).await;
    let log = database.data_dir().join("server.log");
    // sqlx at DEBUG logs each statement: lines of the request's besides
    // its access line.
    let (server, _metrics) = start(&database, &log, &[("RUST_LOG", "info,sqlx=debug")]);
    let trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    let answer = http()
        .get(server.at("/v2/pet/987654"))
        .header("traceparent", format!("00-{trace}-00f067aa0ba902b7-01"))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 404);
    let request_id = answer.headers()["x-request-id"]
        .to_str()
        .unwrap()
        .to_owned();
    // A malformed one is no error: the request is answered, in a new trace.
    let answer = http()
        .get(server.at("/v2/pet/987655"))
        .header("traceparent", "00-NOT-A-TRACE-01")
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 404);
    let malformed_id = answer.headers()["x-request-id"]
        .to_str()
        .unwrap()
        .to_owned();
    wait_until(Duration::from_secs(10), "the access lines", async || {
        access_lines(&log).len() >= 2
    })
    .await;
    let lines = std::fs::read_to_string(&log).unwrap();
    let of_request: Vec<&str> = lines.lines().filter(|l| l.contains(&request_id)).collect();
    // The statements' lines and the access line, all with the caller's
    // trace.
    assert!(of_request.len() >= 2, "{of_request:#?}");
    assert!(
        of_request.iter().all(|line| line.contains(trace)),
        "{of_request:#?}"
    );
    let access = access_lines(&log);
    let continued = access
        .iter()
        .find(|line| line["fields"]["request_id"] == request_id.as_str())
        .unwrap();
    assert_eq!(continued["fields"]["trace_id"], trace);
    let started = access
        .iter()
        .find(|line| line["fields"]["request_id"] == malformed_id.as_str())
        .unwrap();
    let new_trace = started["fields"]["trace_id"].as_str().unwrap();
    assert_eq!(new_trace.len(), 32);
    assert_ne!(new_trace, trace);
    drop(server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_access_log_has_one_line_per_request_and_never_a_query_or_a_credential() {
    let database = FreshDatabase::create(Db::Sqlite).await;
    let log = database.data_dir().join("server.log");
    let (server, _metrics) = start(&database, &log, &[]);
    let client = http();
    let token = "link-token-that-must-not-be-logged";
    let answers = [
        client
            .get(server.at(&format!("/api/newsletter/confirm?token={token}")))
            .send()
            .await
            .unwrap(),
        client
            .get(server.at("/api/admin/subscribers"))
            .header("x-api-key", "s3cret-ops-key")
            .send()
            .await
            .unwrap(),
        client
            .get(server.at("/v2/user/someone@example.test"))
            .basic_auth("someone", Some("pa55word-not-logged"))
            .send()
            .await
            .unwrap(),
    ];
    let statuses: Vec<u16> = answers.iter().map(|a| a.status().as_u16()).collect();
    wait_until(Duration::from_secs(10), "three access lines", async || {
        access_lines(&log).len() >= 3
    })
    .await;
    let access = access_lines(&log);
    assert_eq!(access.len(), 3, "{access:#?}");
    let routes: Vec<&str> = access
        .iter()
        .map(|line| line["fields"]["route"].as_str().unwrap())
        .collect();
    assert_eq!(
        routes,
        [
            "/api/newsletter/confirm",
            "/api/admin/subscribers",
            "/v2/user/{username}"
        ]
    );
    for (line, status) in access.iter().zip(statuses) {
        let fields = &line["fields"];
        assert_eq!(line["level"], "INFO");
        assert_eq!(fields["status"], status);
        assert_eq!(fields["method"], "GET");
        assert_eq!(fields["client"], "127.0.0.1");
        assert!(fields["duration_us"].is_u64());
        assert!(fields["bytes"].as_u64().unwrap() > 0);
        assert_eq!(fields["trace_id"].as_str().unwrap().len(), 32);
        assert_eq!(fields["request_id"].as_str().unwrap().len(), 36);
    }
    let everything = std::fs::read_to_string(&log).unwrap();
    for secret in [token, "s3cret-ops-key", "pa55word", "someone@example.test"] {
        assert!(!everything.contains(secret), "{secret} reached the log");
    }
    drop(server);
}

/// The logs know each request by the server's own id, unique to it; a
/// client's id is kept beside it (and echoed) only when short and plain: a
/// reused one names two requests apart, a 30,000-character one reaches
/// neither the answer nor the log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_logs_own_request_ids_are_unique_and_a_clients_is_kept_only_when_sane() {
    let database = FreshDatabase::create(Db::Sqlite).await;
    let log = database.data_dir().join("server.log");
    let (server, _metrics) = start(&database, &log, &[]);
    let huge = "x".repeat(30_000);
    let sent = ["trace-me-42", "trace-me-42", huge.as_str(), "two words"];
    let mut answered = Vec::new();
    for id in sent {
        let answer = http()
            .get(server.at("/v2/pet/987654"))
            .header("x-request-id", id)
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 404);
        answered.push(
            answer.headers()["x-request-id"]
                .to_str()
                .unwrap()
                .to_owned(),
        );
    }
    assert_eq!(
        answered[..2],
        ["trace-me-42", "trace-me-42"],
        "kept and echoed"
    );
    for fresh in &answered[2..] {
        assert_eq!(fresh.len(), 36, "a fresh id instead: {fresh}");
    }
    wait_until(Duration::from_secs(10), "four access lines", async || {
        access_lines(&log).len() >= 4
    })
    .await;
    let access = access_lines(&log);
    let ids: BTreeSet<&str> = access
        .iter()
        .map(|line| line["fields"]["request_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 4, "one id per request: {access:#?}");
    assert!(ids.iter().all(|id| id.len() == 36), "{ids:?}");
    let kept: Vec<&serde_json::Value> = access
        .iter()
        .map(|line| &line["fields"]["client_request_id"])
        .collect();
    assert_eq!(kept[..2], [&serde_json::json!("trace-me-42"); 2]);
    assert!(kept[2..].iter().all(|id| id.is_null()), "{kept:?}");
    assert_eq!(
        &answered[2],
        access[2]["fields"]["request_id"].as_str().unwrap()
    );
    let everything = std::fs::read_to_string(&log).unwrap();
    assert!(
        !everything.contains(&huge[..200]),
        "the long id reached the log"
    );
    assert!(!everything.contains("two words"));
    drop(server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_access_log_can_be_turned_off() {
    let database = FreshDatabase::create(Db::Sqlite).await;
    let log = database.data_dir().join("server.log");
    let (server, metrics) = start(
        &database,
        &log,
        &[("PETSTORE_PORTFOLIO_LOG__ACCESS_LOG", "false")],
    );
    http().get(server.at("/v2/pet/1")).send().await.unwrap();
    // The request is counted (so it was answered in full) and not logged.
    let scraped = scrape(&metrics).await;
    assert!(scraped.contains("http_route=\"/v2/pet/{petId}\""));
    assert!(access_lines(&log).is_empty());
    drop(server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sdk_carries_its_callers_trace_into_its_token_fetch_and_its_call() {
    use petstore_portfolio_client::portfolio::ClientBuilder;
    use petstore_portfolio_server::config::Scope;

    let database = FreshDatabase::create(Db::Sqlite).await;
    let log = database.data_dir().join("server.log");
    let (server, _metrics) = start(&database, &log, &[]);
    let (id, secret) =
        petstore_portfolio_server::fixtures::register_oauth_client(&database.url, &[Scope::Admin])
            .await
            .unwrap();
    let trace = "0af7651916cd43dd8448eb211c80319c";
    let client = ClientBuilder::new(&server.url)
        .client_credentials(id, secret)
        .build()
        .unwrap()
        .with_traceparent(&format!("00-{trace}-b7ad6b7169203331-01"));
    client.list_subscribers().send().await.unwrap();
    // And without a trace of the caller's: a trace of its own, all the same.
    let untraced = ClientBuilder::new(&server.url).build().unwrap();
    untraced.get_site_info().send().await.unwrap();
    wait_until(Duration::from_secs(10), "three access lines", async || {
        access_lines(&log).len() >= 3
    })
    .await;
    let access = access_lines(&log);
    let trace_of = |route: &str| {
        access
            .iter()
            .find(|line| line["fields"]["route"] == route)
            .map(|line| line["fields"]["trace_id"].as_str().unwrap().to_owned())
            .unwrap_or_else(|| panic!("no access line for {route}: {access:#?}"))
    };
    assert_eq!(trace_of("/api/oauth/token"), trace);
    assert_eq!(trace_of("/api/admin/subscribers"), trace);
    let own = trace_of("/api/site-info");
    assert_eq!(own.len(), 32);
    assert_ne!(own, trace);
    drop(server);
}

/// An OTLP/HTTP receiver: decodes what arrives at `/v1/traces` and keeps
/// the spans.
async fn otlp_receiver() -> (String, Arc<Mutex<Vec<Span>>>) {
    let spans: Arc<Mutex<Vec<Span>>> = Arc::default();
    let kept = spans.clone();
    let app = axum::Router::new().route(
        "/v1/traces",
        axum::routing::post(move |body: axum::body::Bytes| {
            let kept = kept.clone();
            async move {
                let request = ExportTraceServiceRequest::decode(body).expect("OTLP protobuf");
                let mut kept = kept.lock().unwrap();
                for resource in request.resource_spans {
                    for scope in resource.scope_spans {
                        kept.extend(scope.spans);
                    }
                }
                axum::http::StatusCode::OK
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{address}"), spans)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn attribute(span: &Span, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref()?.value.as_ref())
        .map(|value| match value {
            any_value::Value::StringValue(s) => s.clone(),
            any_value::Value::IntValue(i) => i.to_string(),
            other => format!("{other:?}"),
        })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spans_are_exported_over_otlp_in_the_callers_trace_with_the_logged_trace_id() {
    let (collector, spans) = otlp_receiver().await;
    let database = FreshDatabase::create(Db::Sqlite).await;
    let log = database.data_dir().join("server.log");
    let (mut server, _metrics) = start(
        &database,
        &log,
        &[
            ("PETSTORE_PORTFOLIO_OTLP_ENDPOINT", collector.as_str()),
            ("PETSTORE_PORTFOLIO_HTTP__SHUTDOWN_DRAIN_SECS", "0"),
        ],
    );
    let trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    let caller = "00f067aa0ba902b7";
    let continued = http()
        .get(server.at("/v2/pet/1"))
        .header("traceparent", format!("00-{trace}-{caller}-01"))
        .send()
        .await
        .unwrap();
    assert_eq!(continued.status(), 200);
    let started = http()
        .get(server.at("/api/site-info"))
        .send()
        .await
        .unwrap();
    assert_eq!(started.status(), 200);
    // The last spans leave at the stop.
    server.send_sigterm();
    let exit = tokio::task::spawn_blocking(move || server.wait_exit(Duration::from_secs(30)))
        .await
        .unwrap();
    assert!(exit.is_some_and(|status| status.success()));
    let spans = spans.lock().unwrap().clone();
    let named = |name: &str| {
        spans
            .iter()
            .find(|span| span.name == name)
            .unwrap_or_else(|| panic!("no span {name}: {spans:#?}"))
            .clone()
    };
    let pet = named("GET /v2/pet/{petId}");
    assert_eq!(hex(&pet.trace_id), trace);
    assert_eq!(hex(&pet.parent_span_id), caller);
    assert_eq!(pet.kind, SpanKind::Server as i32);
    assert_eq!(
        attribute(&pet, "http.route").as_deref(),
        Some("/v2/pet/{petId}")
    );
    assert_eq!(
        attribute(&pet, "http.response.status_code").as_deref(),
        Some("200")
    );
    assert_eq!(
        attribute(&pet, "http.request.method").as_deref(),
        Some("GET")
    );
    // A request without a trace starts one, and the log names it.
    let site = named("GET /api/site-info");
    assert!(site.parent_span_id.is_empty());
    let logged: Vec<String> = access_lines(&log)
        .iter()
        .map(|line| line["fields"]["trace_id"].as_str().unwrap().to_owned())
        .collect();
    assert!(logged.contains(&hex(&site.trace_id)), "{logged:?}");
    assert!(logged.contains(&trace.to_owned()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_whose_client_leaves_is_logged_and_leaves_no_request_in_flight() {
    let database = FreshDatabase::create(Db::Sqlite).await;
    let log = database.data_dir().join("server.log");
    let (server, metrics) = start(&database, &log, &[]);
    let in_flight =
        "http_server_active_requests{http_request_method=\"POST\",service=\"petstore\"}";
    // HTTP/2, where a client that gives up resets its stream: half a body,
    // then nothing, then gone. (The handler, reading the body, sees the
    // reset and answers 400, which cannot be sent; a request dropped before
    // any answer is logged 499.)
    let _ = http(); // installs the TLS crypto provider reqwest needs
    let client = reqwest::Client::builder()
        .http2_prior_knowledge()
        .build()
        .unwrap();
    let (parts, body) = futures::channel::mpsc::unbounded::<Result<Vec<u8>, std::io::Error>>();
    parts
        .unbounded_send(Ok(b"{\"name\": \"half".to_vec()))
        .unwrap();
    let request = client
        .post(server.at("/v2/pet"))
        .header("content-type", "application/json")
        .body(reqwest::Body::wrap_stream(body))
        .send();
    let waiting = tokio::spawn(request);
    wait_until(
        Duration::from_secs(10),
        "the request in flight",
        async || value(&scrape(&metrics).await, in_flight) == Some(1.0),
    )
    .await;
    waiting.abort();
    wait_until(Duration::from_secs(10), "its access line", async || {
        !access_lines(&log).is_empty()
    })
    .await;
    let lines = access_lines(&log);
    let status = lines[0]["fields"]["status"].as_u64();
    assert!(matches!(status, Some(400 | 499)), "{lines:#?}");
    assert_eq!(lines[0]["fields"]["bytes"], 0, "{lines:#?}");
    assert_eq!(value(&scrape(&metrics).await, in_flight), Some(0.0));
    drop(parts);
    drop(server);
}
