//! `outbox list | requeue`.

use end_to_end_tests::smtp::SmtpServer;
use end_to_end_tests::{Db, TestServer, http, on_every_database, send_json, wait_until};
use serde_json::{Value, json};

use super::{WAIT, cli};

async fn readiness(server: &TestServer) -> (u16, Value) {
    let (status, _, body) = send_json(http().get(server.at("/api/health/ready"))).await;
    (status, body)
}

on_every_database!(
    an_email_past_its_lifetime_fails_visibly_and_a_requeue_delivers_it,
    requeueing_an_email_that_did_not_fail_leaves_it_alone,
);

async fn an_email_past_its_lifetime_fails_visibly_and_a_requeue_delivers_it(db: Db) {
    let Some((server, port)) = TestServer::start_with_smtp_down(db, |c| {
        c.mail.lifetime_secs = 1;
        c.mail.max_retry_delay_ms = 100;
    })
    .await
    else {
        return;
    };
    let contact = server
        .post_json(
            "/api/contact",
            json!({"name": "Ada", "email": "ada@example.test", "message": "Hello"}),
        )
        .header("x-api-key", end_to_end_tests::keys::ADMIN);
    let (status, _, _) = send_json(contact).await;
    assert_eq!(status, 201);
    wait_until(WAIT, "the email outlives its lifetime", async || {
        server.count_where("outbox", "status = 'failed'").await == 1
    })
    .await;

    let failed = cli(&server, &["outbox", "list", "--failed"]);
    let failed = failed.as_array().expect("a list");
    assert_eq!(failed.len(), 1, "{failed:?}");
    let error = failed[0]["last_error"].as_str().unwrap_or_default();
    assert!(error.contains("lifetime"), "the reason is kept: {error}");

    let smtp = SmtpServer::start_on(port);
    wait_until(WAIT, "readiness says degraded", async || {
        let (status, body) = readiness(&server).await;
        status == 200 && body["status"] == "degraded"
    })
    .await;
    let (_, body) = readiness(&server).await;
    assert_eq!(body["checks"]["outbox"]["failed"], 1);

    let id = failed[0]["id"].as_i64().expect("an id");
    let requeued = cli(&server, &["outbox", "requeue"]);
    assert_eq!(requeued["requeued"], json!([id]));
    let messages = smtp.wait_for(1, WAIT).await;
    assert_eq!(messages[0].rcpt_tos, ["owner@localhost"]);
    wait_until(WAIT, "readiness is ready again", async || {
        readiness(&server).await.1["status"] == "ready"
    })
    .await;
    assert_eq!(cli(&server, &["outbox", "list", "--failed"]), json!([]));
    assert_eq!(smtp.messages().len(), 1, "delivered once");
    server.stop().await;
}

async fn requeueing_an_email_that_did_not_fail_leaves_it_alone(db: Db) {
    let server = TestServer::start(db).await;
    let requeued = cli(&server, &["outbox", "requeue", "999"]);
    assert_eq!(requeued, json!({"requeued": [], "not_failed": [999]}));
    server.stop().await;
}
