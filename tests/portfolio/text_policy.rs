//! One text policy for everything from outside: control characters are
//! refused at the door with 422 naming the field (tab and newlines only in
//! the fields that are prose), so none reaches the operator's terminal, an
//! email header or the database.

use end_to_end_tests::{Db, TestServer, on_every_database, send_json};
use serde_json::{Value, json};

on_every_database!(
    a_key_request_with_terminal_escapes_is_422_and_stores_nothing,
    a_contact_subject_with_escapes_is_422_and_a_multi_line_message_is_fine,
    a_property_given_twice_is_400_in_both_services,
);

fn key_request(name: &str, organisation: &str) -> Value {
    json!({
        "name": name, "organisation": organisation,
        "intended_use": "Line one\nline two\tindented",
        "expected_volume": "little", "technical_contact": "ada@example.test",
    })
}

async fn a_key_request_with_terminal_escapes_is_422_and_stores_nothing(db: Db) {
    let server = TestServer::start(db).await;
    let attacks = [
        ("name", key_request("\u{1b}[2J\u{1b}[HAda", "Acme")),
        ("name", key_request("Ada\u{7}", "Acme")),
        (
            "organisation",
            key_request("Ada", "Acme\r\nkr_fake pending"),
        ),
        ("organisation", key_request("Ada", "\u{1b}]0;owned\u{7}")),
    ];
    for (field, body) in attacks {
        let (status, _, refused) = send_json(server.post_json("/api/key-requests", body)).await;
        assert_eq!(status, 422, "{refused}");
        assert_eq!(refused["error"]["code"], "VALIDATION_FAILED");
        let problem = refused["error"]["details"]["fields"][field]
            .as_str()
            .unwrap_or_default();
        assert!(problem.contains("control character"), "{refused}");
    }
    assert_eq!(server.count("key_requests").await, 0);
    let (status, _, body) =
        send_json(server.post_json("/api/key-requests", key_request("Ada", "Acme"))).await;
    assert_eq!(status, 202, "a multi-line intended use is prose: {body}");
    server.stop().await;
}

async fn a_contact_subject_with_escapes_is_422_and_a_multi_line_message_is_fine(db: Db) {
    let server = TestServer::start(db).await;
    let contact = |subject: &str, message: &str| {
        server
            .post_json(
                "/api/contact",
                json!({"name": "Ada", "email": "ada@example.test", "subject": subject, "message": message}),
            )
            .header("x-api-key", end_to_end_tests::keys::ADMIN)
    };
    let (status, _, refused) = send_json(contact("Hello\u{1b}[31m\u{7}", "Hi")).await;
    assert_eq!(status, 422, "{refused}");
    assert!(
        refused["error"]["details"]["fields"]["subject"].is_string(),
        "{refused}"
    );
    let (status, _, refused) = send_json(contact("Two\nlines", "Hi")).await;
    assert_eq!(status, 422, "a subject is one line: {refused}");
    assert_eq!(server.count("contact_submissions").await, 0);
    let (status, _, body) = send_json(contact("Hello", "Dear Ada,\r\n\tthanks.\n")).await;
    assert_eq!(status, 201, "{body}");
    server.stop().await;
}

/// JSON with a property given twice is ambiguous (serde keeps the last, a
/// proxy in front may check the first): 400, and nothing changes.
async fn a_property_given_twice_is_400_in_both_services(db: Db) {
    let server = TestServer::start(db).await;
    let (status, _, refused) = send_json(server.post_json(
        "/api/newsletter",
        r#"{"email": "safe@example.test", "email": "victim@example.test"}"#,
    ))
    .await;
    assert_eq!(status, 400, "{refused}");
    assert_eq!(refused["error"]["code"], "BAD_REQUEST");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("given twice"),
        "{refused}"
    );
    assert_eq!(server.count("subscribers").await, 0);
    let (status, _, refused) = send_json(server.post_json(
        "/v2/pet",
        r#"{"name": "Rex", "photoUrls": [], "status": "available", "status": "sold"}"#,
    ))
    .await;
    assert_eq!(status, 400, "{refused}");
    assert_eq!(refused["type"], "BAD_REQUEST");
    assert_eq!(server.count("pets").await, 0);
    server.stop().await;
}
