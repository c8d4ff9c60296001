//! Connections as a hostile or sluggish client uses them: headers sent a
//! byte at a time, connections held open without a request, bodies that
//! stop halfway. Raw TCP, to control every byte.

use std::time::{Duration, Instant};

use end_to_end_tests::{Db, TestServer, http, send};
use petstore_portfolio_server::Config;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

/// How long a test waits for the server to act, at most.
const WAIT: Duration = Duration::from_secs(10);

async fn connect(server: &TestServer) -> TcpStream {
    let address = server.url.trim_start_matches("http://");
    TcpStream::connect(address).await.expect("connect")
}

/// Reads until the server closes the connection (or `WAIT` passes);
/// returns what it sent, and whether it closed.
async fn read_until_closed(stream: &mut TcpStream) -> (String, bool) {
    let mut received = Vec::new();
    let mut buffer = [0_u8; 4096];
    let deadline = Instant::now() + WAIT;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, stream.read(&mut buffer)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return (String::from_utf8_lossy(&received).into(), true),
            Ok(Ok(n)) => received.extend_from_slice(&buffer[..n]),
            Err(_) => return (String::from_utf8_lossy(&received).into(), false),
        }
    }
}

async fn start_with(adjust: impl FnOnce(&mut Config)) -> TestServer {
    TestServer::start_with(Db::Sqlite, adjust).await
}

#[tokio::test]
async fn headers_that_never_finish_are_cut_off() {
    let server = start_with(|c| c.http.header_read_timeout_secs = 1).await;
    let mut stream = connect(&server).await;
    stream
        .write_all(b"GET /v2/pet/1 HTTP/1.1\r\nHost: pets\r\nX-Slow: ")
        .await
        .unwrap();
    let started = Instant::now();
    let (_, closed) = read_until_closed(&mut stream).await;
    assert!(closed, "the server closed the connection");
    assert!(started.elapsed() < Duration::from_secs(5));
    server.stop().await;
}

#[tokio::test]
async fn an_idle_connection_is_closed_after_the_keep_alive_timeout() {
    let server = start_with(|c| c.http.keep_alive_timeout_secs = 1).await;
    let mut stream = connect(&server).await;
    stream
        .write_all(b"GET /api/health HTTP/1.1\r\nHost: api\r\n\r\n")
        .await
        .unwrap();
    let (answer, closed) = read_until_closed(&mut stream).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(closed, "closed once idle for a second");
    server.stop().await;
}

/// With every place taken by clients that drip their headers, a real
/// request still gets in: the connection idle the longest makes room. (Had
/// it to wait for the header-read timeout, 30 s here, it would time out.)
#[tokio::test]
async fn with_every_connection_held_by_slow_clients_a_real_request_is_answered() {
    let server = start_with(|c| {
        c.http.max_connections = Some(8);
        c.http.header_read_timeout_secs = 30;
        c.http.keep_alive_timeout_secs = 30;
    })
    .await;
    let mut slow = Vec::new();
    for _ in 0..20 {
        let mut stream = connect(&server).await;
        stream
            .write_all(b"GET /v2/pet/1 HTTP/1.1\r\nHost: pets\r\nX-Slow: a")
            .await
            .unwrap();
        slow.push(stream);
    }
    let started = Instant::now();
    let (status, _, text) = send(
        http()
            .get(server.at("/v2/store/inventory"))
            .timeout(Duration::from_secs(5)),
    )
    .await;
    assert_eq!(status, 200, "{text}");
    assert!(started.elapsed() < Duration::from_secs(5));
    drop(slow);
    server.stop().await;
}

/// A request whose body stops coming is answered 408 in the service's own
/// error format, and the connection is not kept waiting.
async fn body_that_stalls(server: &TestServer, path: &str, content_type: &str) -> String {
    let mut stream = connect(server).await;
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: svc\r\nContent-Type: {content_type}\r\n\
         Accept: application/json\r\nContent-Length: 100\r\n\r\n{{\"name\": "
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let (answer, _) = read_until_closed(&mut stream).await;
    answer
}

#[tokio::test]
async fn a_body_that_stalls_is_408_in_each_services_format() {
    let server = start_with(|c| c.http.body_read_timeout_secs = 1).await;
    let pets = body_that_stalls(&server, "/v2/pet", "application/json").await;
    assert!(pets.starts_with("HTTP/1.1 408"), "{pets}");
    assert!(pets.contains(r#""type":"REQUEST_TIMEOUT""#), "{pets}");
    assert!(pets.contains(r#""code":408"#), "{pets}");
    let portfolio = body_that_stalls(&server, "/api/newsletter", "application/json").await;
    assert!(portfolio.starts_with("HTTP/1.1 408"), "{portfolio}");
    assert!(
        portfolio.contains(r#""code":"REQUEST_TIMEOUT""#),
        "{portfolio}"
    );
    assert_eq!(server.count("pets").await, 0);
    server.stop().await;
}

/// A body dripped a byte at a time, each in time for the body-read timeout,
/// until the request timeout: the client was slow, so 408 in the service's
/// format, not 503 "the service could not answer in time" (which blamed the
/// server). The drip is bounded: it stops when the server answers.
async fn body_that_drips(server: &TestServer, path: &str) -> String {
    let mut stream = connect(server).await;
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: svc\r\nContent-Type: application/json\r\n\
         Accept: application/json\r\nContent-Length: 100\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let (mut reader, mut writer) = stream.into_split();
    let drip = tokio::spawn(async move {
        for _ in 0..100 {
            if writer.write_all(b" ").await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    });
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(WAIT, reader.read_to_end(&mut answer)).await;
    drip.abort();
    String::from_utf8_lossy(&answer).into_owned()
}

end_to_end_tests::on_every_database!(a_body_still_dripping_at_the_request_timeout_is_408_not_503);

async fn a_body_still_dripping_at_the_request_timeout_is_408_not_503(db: end_to_end_tests::Db) {
    let server = TestServer::start_with(db, |c| {
        c.http.request_timeout_secs = 2;
        c.http.body_read_timeout_secs = 5;
    })
    .await;
    let started = Instant::now();
    let pets = body_that_drips(&server, "/v2/pet").await;
    assert!(pets.starts_with("HTTP/1.1 408"), "{pets}");
    assert!(pets.contains(r#""type":"REQUEST_TIMEOUT""#), "{pets}");
    assert!(started.elapsed() < Duration::from_secs(5));
    let portfolio = body_that_drips(&server, "/api/newsletter").await;
    assert!(portfolio.starts_with("HTTP/1.1 408"), "{portfolio}");
    assert!(
        portfolio.contains(r#""code":"REQUEST_TIMEOUT""#),
        "{portfolio}"
    );
    assert_eq!(server.count("pets").await, 0);
    server.stop().await;
}

/// Bigger than the kernel will buffer for a socket (4 MiB here), so that
/// some of it stays with the server until the client takes more.
const BIG_IMAGE: usize = 12 * 1024 * 1024;

/// A server whose uploads may be as big as [`BIG_IMAGE`].
async fn start_for_big_images(adjust: impl FnOnce(&mut Config)) -> TestServer {
    start_with(|c| {
        c.petstore.max_upload_bytes = 2 * BIG_IMAGE;
        adjust(c);
    })
    .await
}

/// A pet with an image of [`BIG_IMAGE`] bytes; the image's path.
async fn pet_with_a_big_image(server: &TestServer) -> String {
    let body = serde_json::json!({"id": 1, "name": "Big", "photoUrls": []}).to_string();
    let (status, _, text) = send(server.post_json("/v2/pet", body)).await;
    assert_eq!(status, 200, "{text}");
    let mut image = end_to_end_tests::TINY_PNG.to_vec();
    image.resize(BIG_IMAGE, 0);
    let response = http()
        .post(server.at("/v2/pet/1/uploadImage"))
        .header("content-type", "application/octet-stream")
        .body(image)
        .send()
        .await
        .expect("uploadFile");
    let location = response.headers()["location"].to_str().unwrap().to_owned();
    location
        .split_once("/v2/")
        .map(|(_, p)| format!("/v2/{p}"))
        .unwrap()
}

/// Connects with a receive buffer of `bytes`, so that an answer not read
/// soon fills it and the server's writes wait.
async fn connect_with_buffer(server: &TestServer, bytes: u32) -> TcpStream {
    let address = server.url.trim_start_matches("http://").parse().unwrap();
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(bytes).unwrap();
    socket.connect(address).await.unwrap()
}

/// Reads the rest of the stream (until the server closes it, or `within`).
async fn read_all(stream: &mut TcpStream, within: Duration) -> usize {
    let mut total = 0;
    let mut buffer = vec![0_u8; 64 * 1024];
    let deadline = Instant::now() + within;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, stream.read(&mut buffer)).await {
            Ok(Ok(0)) | Ok(Err(_)) | Err(_) => return total,
            Ok(Ok(n)) => total += n,
        }
    }
}

#[tokio::test]
async fn a_client_that_stops_taking_its_answer_is_cut_off_after_the_send_timeout() {
    let server = start_for_big_images(|c| {
        c.http.send_timeout_secs = 1;
        c.http.keep_alive_timeout_secs = 60;
    })
    .await;
    let image = pet_with_a_big_image(&server).await;
    let mut stream = connect_with_buffer(&server, 4096).await;
    let request = format!("GET {image} HTTP/1.1\r\nHost: pets\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    // Take nothing for three times the send timeout: the server gives up.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let received = read_all(&mut stream, WAIT).await;
    assert!(
        received < BIG_IMAGE,
        "the connection was closed before the whole image ({received} bytes)"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_slow_download_is_not_cut_by_the_keep_alive_timeout() {
    let server = start_for_big_images(|c| c.http.keep_alive_timeout_secs = 1).await;
    let image = pet_with_a_big_image(&server).await;
    let mut stream = connect_with_buffer(&server, 64 * 1024).await;
    let request = format!("GET {image} HTTP/1.1\r\nHost: pets\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    // At most 64 KiB every 10 ms: about two seconds for the image, twice
    // the keep-alive timeout, with no pause long enough to stall a write.
    let mut received = 0;
    let mut buffer = vec![0_u8; 64 * 1024];
    let deadline = Instant::now() + 2 * WAIT;
    while Instant::now() < deadline {
        match stream.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(n) => received += n,
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        received > BIG_IMAGE,
        "the whole image arrived ({received} bytes)"
    );
    server.stop().await;
}
