//! Content negotiation: JSON and XML out; JSON, XML and forms in; errors in
//! the format the client asked for. Raw HTTP, since the SDK speaks JSON.

use end_to_end_tests::{Db, TestServer, on_every_database};

use crate::support::{http, json_error, send};

on_every_database!(
    xml_pets_in_and_out,
    form_bodies_are_accepted,
    accept_header_picks_the_format,
    errors_follow_the_negotiated_format,
    error_bodies_snapshot,
);

const PET_XML: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<pet>
  <id>7</id>
  <name>doggie</name>
  <category><id>1</id><name>Dogs</name></category>
  <photoUrls><photoUrl>a.png</photoUrl><photoUrl>b.png</photoUrl></photoUrls>
  <tags><tag><id>3</id><name>cute</name></tag></tags>
  <status>pending</status>
</pet>"#;

async fn xml_pets_in_and_out(db: Db) {
    let server = TestServer::start(db).await;
    let (status, content_type, text) = send(
        http()
            .post(server.at("/v2/pet"))
            .header("content-type", "application/xml")
            .header("accept", "application/xml")
            .body(PET_XML),
    )
    .await;
    assert_eq!(status, 200, "{text}");
    assert_eq!(content_type, "application/xml");
    assert!(
        text.contains(
            "<photoUrls><photoUrl>a.png</photoUrl><photoUrl>b.png</photoUrl></photoUrls>"
        ),
        "{text}"
    );
    assert!(
        text.contains("<tags><tag><id>3</id><name>cute</name></tag></tags>"),
        "{text}"
    );

    // What went in as XML comes out as JSON, whole.
    let (_, _, json) = send(http().get(server.at("/v2/pet/7"))).await;
    let pet: serde_json::Value = serde_json::from_str(&json).unwrap_or_default();
    assert_eq!(pet["photoUrls"], serde_json::json!(["a.png", "b.png"]));
    assert_eq!(pet["category"]["name"], "Dogs");
    assert_eq!(pet["tags"][0]["name"], "cute");
    assert_eq!(pet["status"], "pending");

    let (status, content_type, text) = send(
        http()
            .get(server.at("/v2/pet/findByStatus?status=pending"))
            .header("accept", "application/xml"),
    )
    .await;
    assert_eq!((status, content_type.as_str()), (200, "application/xml"));
    assert!(text.contains("<pets><pet><id>7</id>"), "{text}");

    // Orders and users speak XML too.
    let (status, _, text) = send(
        http()
            .post(server.at("/v2/store/order"))
            .header("content-type", "application/xml")
            .header("accept", "application/xml")
            .body("<order><petId>7</petId><quantity>2</quantity></order>"),
    )
    .await;
    assert_eq!(status, 422, "pet 7 is pending: {text}");
    assert!(text.contains("<type>VALIDATION_FAILED</type>"), "{text}");
    let (status, _, text) = send(
        http()
            .post(server.at("/v2/user"))
            .header("content-type", "text/xml")
            .header("accept", "application/xml")
            .body("<user><username>xml</username><password>pw</password><userStatus>2</userStatus></user>"),
    )
    .await;
    assert_eq!(status, 200, "{text}");
    assert!(
        text.contains("<user>")
            && text.contains("<username>xml</username>")
            && !text.contains("pw"),
        "{text}"
    );

    for bad in [
        "<pet><name>doggie</name>",
        "<pet><photoUrls/></pet>",
        "not xml at all",
        "<pet><id>x</id><name>a</name><photoUrls/></pet>",
    ] {
        let (status, content_type, text) = send(
            http()
                .post(server.at("/v2/pet"))
                .header("content-type", "application/xml")
                .body(bad),
        )
        .await;
        assert_eq!(status, 400, "{bad}: {text}");
        json_error(status, &content_type, &text, "BAD_REQUEST");
    }
    server.stop().await;
}

async fn form_bodies_are_accepted(db: Db) {
    let server = TestServer::start(db).await;
    let form = |path: &str, body: &str| {
        http()
            .post(server.at(path))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body.to_owned())
    };
    let (status, _, text) =
        send(form("/v2/pet", "name=Rex&photoUrls=a.png&photoUrls=b.png&tags=red&tags=blue&category=Dogs&status=available")).await;
    assert_eq!(status, 200, "{text}");
    let pet: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    assert_eq!(pet["photoUrls"], serde_json::json!(["a.png", "b.png"]));
    assert_eq!(pet["tags"][1]["name"], "blue");
    assert_eq!(pet["category"]["name"], "Dogs");
    let id = pet["id"].as_i64().unwrap_or_default();

    let (status, _, text) = send(form(
        "/v2/store/order",
        &format!("petId={id}&quantity=3&status=approved"),
    ))
    .await;
    assert_eq!(status, 200, "{text}");
    let (status, _, text) = send(form(
        "/v2/user",
        "username=formuser&password=pw&userStatus=1",
    ))
    .await;
    assert_eq!(status, 200, "{text}");

    let (status, content_type, text) = send(form("/v2/pet", "photoUrls=a.png")).await;
    json_error(status, &content_type, &text, "BAD_REQUEST");
    let (status, content_type, text) = send(form("/v2/pet", "name=&photoUrls=a.png")).await;
    json_error(status, &content_type, &text, "VALIDATION_FAILED");
    let (status, content_type, text) = send(form("/v2/user/createWithList", "username=x")).await;
    json_error(status, &content_type, &text, "UNSUPPORTED_MEDIA_TYPE");
    server.stop().await;
}

async fn accept_header_picks_the_format(db: Db) {
    let server = TestServer::start_with(db, |c| c.petstore.demo_data = true).await;
    let cases = [
        ("application/json", 200, "application/json"),
        ("application/xml", 200, "application/xml"),
        ("text/xml", 200, "application/xml"),
        ("*/*", 200, "application/json"),
        (
            "application/json;q=0.2, application/xml;q=0.8",
            200,
            "application/xml",
        ),
        (
            "application/xml;q=0.5, application/json",
            200,
            "application/json",
        ),
        ("text/html, application/*;q=0.1", 200, "application/json"),
        ("text/html", 406, "application/json"),
        ("image/png", 406, "application/json"),
    ];
    for (accept, expected_status, expected_type) in cases {
        let (status, content_type, text) =
            send(http().get(server.at("/v2/pet/1")).header("accept", accept)).await;
        assert_eq!(
            (status, content_type.as_str()),
            (expected_status, expected_type),
            "Accept: {accept}: {text}"
        );
        if status == 406 {
            json_error(status, &content_type, &text, "NOT_ACCEPTABLE");
        }
    }
    server.stop().await;
}

async fn errors_follow_the_negotiated_format(db: Db) {
    let server = TestServer::start(db).await;
    for (request, status) in [
        (http().get(server.at("/v2/pet/999")), 404),
        (http().get(server.at("/v2/pet/abc")), 400),
        (http().get(server.at("/v2/no/such/route")), 404),
        (http().put(server.at("/v2/store/inventory")), 405),
        (
            http()
                .post(server.at("/v2/pet"))
                .header("content-type", "application/xml")
                .body("<pet>"),
            400,
        ),
    ] {
        let response = request
            .header("accept", "application/xml")
            .send()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(response.status().as_u16(), status);
        let content_type = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        assert_eq!(content_type.as_deref(), Some("application/xml"));
        let text = response.text().await.unwrap_or_default();
        assert!(
            text.starts_with("<?xml")
                && text.contains(&format!("<apiResponse><code>{status}</code>")),
            "{text}"
        );
    }
    // A 405 says which methods the path has.
    let response = http()
        .delete(server.at("/v2/pet"))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(response.status().as_u16(), 405);
    assert_eq!(
        response
            .headers()
            .get("allow")
            .and_then(|v| v.to_str().ok()),
        Some("PUT,POST")
    );
    server.stop().await;
}

async fn error_bodies_snapshot(db: Db) {
    let server = TestServer::start(db).await;
    let mut bodies = Vec::new();
    for (name, request) in [
        ("not_found", http().get(server.at("/v2/pet/404"))),
        ("bad_id", http().get(server.at("/v2/pet/abc"))),
        (
            "unknown_status",
            http().get(server.at("/v2/pet/findByStatus?status=lost")),
        ),
        (
            "empty_name",
            http()
                .post(server.at("/v2/pet"))
                .header("content-type", "application/json")
                .body(r#"{"name":"","photoUrls":[]}"#),
        ),
        (
            "unsupported_media_type",
            http()
                .post(server.at("/v2/pet"))
                .header("content-type", "text/plain")
                .body("x"),
        ),
        (
            "not_acceptable",
            http()
                .get(server.at("/v2/store/inventory"))
                .header("accept", "text/html"),
        ),
        ("method_not_allowed", http().patch(server.at("/v2/pet"))),
        ("unknown_route", http().get(server.at("/v2/nowhere"))),
        (
            "bad_login",
            http().get(server.at("/v2/user/login?username=nobody&password=x")),
        ),
        (
            "order_for_missing_pet",
            http()
                .post(server.at("/v2/store/order"))
                .header("content-type", "application/json")
                .body(r#"{"petId":5}"#),
        ),
    ] {
        let (_, _, text) = send(request).await;
        let body: serde_json::Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}: {text}"));
        bodies.push(serde_json::json!({"case": name, "body": body}));
    }
    // One snapshot for both databases: the answers must not differ.
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| insta::assert_json_snapshot!("petstore_error_bodies", bodies));
    server.stop().await;
}
