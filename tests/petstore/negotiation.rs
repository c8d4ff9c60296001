//! Content negotiation: JSON and XML out; JSON, XML and forms in; errors in
//! the format the client asked for. Raw HTTP, since the SDK speaks JSON.

use end_to_end_tests::{Db, TestServer, header, http, on_every_database, send};

use crate::support::{assert_refused, json_error};

on_every_database!(
    a_pet_posted_in_xml_is_answered_in_xml,
    a_pet_posted_in_xml_reads_back_whole_in_json,
    find_by_status_answers_in_xml,
    orders_speak_xml,
    users_speak_xml,
    malformed_xml_pets_are_400,
    a_pet_can_be_posted_as_a_form,
    a_pet_form_may_send_arrays_in_bracket_notation,
    an_order_can_be_posted_as_a_form,
    a_user_can_be_posted_as_a_form,
    a_pet_form_without_a_name_is_400,
    a_pet_form_with_an_empty_name_is_422,
    a_list_of_users_cannot_be_a_form,
    the_accept_header_picks_the_format,
    errors_follow_the_negotiated_format,
    a_405_lists_the_allowed_methods,
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

/// A raw `POST` of an XML `body` to `path`, asking for XML back.
fn post_xml(server: &TestServer, path: &str, body: &'static str) -> reqwest::RequestBuilder {
    http()
        .post(server.at(path))
        .header("content-type", "application/xml")
        .header("accept", "application/xml")
        .body(body)
}

/// Posts [`PET_XML`] (pet 7, pending); returns the answer.
async fn post_pet_xml(server: &TestServer) -> (u16, String, String) {
    send(post_xml(server, "/v2/pet", PET_XML)).await
}

async fn a_pet_posted_in_xml_is_answered_in_xml(db: Db) {
    let server = TestServer::start(db).await;
    let (status, content_type, text) = post_pet_xml(&server).await;
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
    server.stop().await;
}

async fn a_pet_posted_in_xml_reads_back_whole_in_json(db: Db) {
    let server = TestServer::start(db).await;
    post_pet_xml(&server).await;
    let (_, _, json) = send(http().get(server.at("/v2/pet/7"))).await;
    let pet: serde_json::Value = serde_json::from_str(&json).unwrap_or_default();
    assert_eq!(pet["photoUrls"], serde_json::json!(["a.png", "b.png"]));
    assert_eq!(pet["category"]["name"], "Dogs");
    assert_eq!(pet["tags"][0]["name"], "cute");
    assert_eq!(pet["status"], "pending");
    server.stop().await;
}

async fn find_by_status_answers_in_xml(db: Db) {
    let server = TestServer::start(db).await;
    post_pet_xml(&server).await;
    let (status, content_type, text) = send(
        http()
            .get(server.at("/v2/pet/findByStatus?status=pending"))
            .header("accept", "application/xml"),
    )
    .await;
    assert_eq!((status, content_type.as_str()), (200, "application/xml"));
    assert!(text.contains("<pets><pet><id>7</id>"), "{text}");
    server.stop().await;
}

async fn orders_speak_xml(db: Db) {
    let server = TestServer::start(db).await;
    post_pet_xml(&server).await;
    let order = "<order><petId>7</petId><quantity>2</quantity></order>";
    let (status, _, text) = send(post_xml(&server, "/v2/store/order", order)).await;
    assert_eq!(status, 422, "pet 7 is pending: {text}");
    assert!(text.contains("<type>VALIDATION_FAILED</type>"), "{text}");
    server.stop().await;
}

async fn users_speak_xml(db: Db) {
    let server = TestServer::start(db).await;
    let (status, _, text) = send(
        http()
            .post(server.at("/v2/user"))
            .header("content-type", "text/xml")
            .header("accept", "application/xml")
            .body("<user><username>xml</username><password>pw-long-enough</password><userStatus>2</userStatus></user>"),
    )
    .await;
    assert_eq!(status, 200, "{text}");
    assert!(
        text.contains("<user>")
            && text.contains("<username>xml</username>")
            && !text.contains("pw"),
        "{text}"
    );
    server.stop().await;
}

async fn malformed_xml_pets_are_400(db: Db) {
    let server = TestServer::start(db).await;
    for bad in [
        "<pet><name>doggie</name>",
        "<pet><photoUrls/></pet>",
        "not xml at all",
        "<pet><id>x</id><name>a</name><photoUrls/></pet>",
    ] {
        let request = http()
            .post(server.at("/v2/pet"))
            .header("content-type", "application/xml")
            .body(bad);
        assert_refused(request, 400, "BAD_REQUEST").await;
    }
    server.stop().await;
}

/// A raw `POST` of a form `body` to `path`.
fn post_form(server: &TestServer, path: &str, body: &str) -> reqwest::RequestBuilder {
    http()
        .post(server.at(path))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body.to_owned())
}

/// Posts pet Rex as a form; returns the answer.
async fn post_pet_form(server: &TestServer) -> (u16, String, String) {
    send(post_form(
        server,
        "/v2/pet",
        "name=Rex&photoUrls=a.png&photoUrls=b.png&tags=red&tags=blue&category=Dogs&status=available",
    ))
    .await
}

async fn a_pet_can_be_posted_as_a_form(db: Db) {
    let server = TestServer::start(db).await;
    let (status, _, text) = post_pet_form(&server).await;
    assert_eq!(status, 200, "{text}");
    let pet: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    assert_eq!(pet["photoUrls"], serde_json::json!(["a.png", "b.png"]));
    assert_eq!(pet["tags"][1]["name"], "blue");
    assert_eq!(pet["category"]["name"], "Dogs");
    server.stop().await;
}

/// Some generated clients send form arrays as `photoUrls[0]=a` or
/// `photoUrls[]=a`; both read as the repeated fields, for addPet and
/// updatePet alike.
async fn a_pet_form_may_send_arrays_in_bracket_notation(db: Db) {
    let server = TestServer::start(db).await;
    let indexed = "name=Rex&photoUrls%5B0%5D=a.png&photoUrls%5B1%5D=b.png&tags%5B0%5D=red";
    let (status, _, text) = send(post_form(&server, "/v2/pet", indexed)).await;
    assert_eq!(status, 200, "{text}");
    let pet: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    assert_eq!(pet["photoUrls"], serde_json::json!(["a.png", "b.png"]));
    assert_eq!(pet["tags"][0]["name"], "red");
    let id = pet["id"].as_i64().unwrap_or_default();
    let empty = format!("id={id}&name=Rex&photoUrls[]=c.png&status=sold");
    let (status, _, text) = send(
        http()
            .put(server.at("/v2/pet"))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(empty),
    )
    .await;
    assert_eq!(status, 200, "{text}");
    let pet: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    assert_eq!(pet["photoUrls"], serde_json::json!(["c.png"]));
    assert_eq!(pet["status"], "sold");
    server.stop().await;
}

async fn an_order_can_be_posted_as_a_form(db: Db) {
    let server = TestServer::start(db).await;
    let (_, _, text) = post_pet_form(&server).await;
    let pet: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    let id = pet["id"].as_i64().unwrap_or_default();
    let order = format!("petId={id}&quantity=3&status=approved");
    let (status, _, text) = send(post_form(&server, "/v2/store/order", &order)).await;
    assert_eq!(status, 200, "{text}");
    server.stop().await;
}

async fn a_user_can_be_posted_as_a_form(db: Db) {
    let server = TestServer::start(db).await;
    let user = "username=formuser&password=pw-long-enough&userStatus=1";
    let (status, _, text) = send(post_form(&server, "/v2/user", user)).await;
    assert_eq!(status, 200, "{text}");
    server.stop().await;
}

async fn a_pet_form_without_a_name_is_400(db: Db) {
    let server = TestServer::start(db).await;
    let request = post_form(&server, "/v2/pet", "photoUrls=a.png");
    assert_refused(request, 400, "BAD_REQUEST").await;
    server.stop().await;
}

async fn a_pet_form_with_an_empty_name_is_422(db: Db) {
    let server = TestServer::start(db).await;
    let request = post_form(&server, "/v2/pet", "name=&photoUrls=a.png");
    assert_refused(request, 422, "VALIDATION_FAILED").await;
    server.stop().await;
}

async fn a_list_of_users_cannot_be_a_form(db: Db) {
    let server = TestServer::start(db).await;
    let request = post_form(&server, "/v2/user/createWithList", "username=x");
    assert_refused(request, 415, "UNSUPPORTED_MEDIA_TYPE").await;
    server.stop().await;
}

async fn the_accept_header_picks_the_format(db: Db) {
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
        let (got, content_type, text) = send(request.header("accept", "application/xml")).await;
        assert_eq!(got, status, "{text}");
        assert_eq!(content_type, "application/xml");
        assert!(
            text.starts_with("<?xml")
                && text.contains(&format!("<apiResponse><code>{status}</code>")),
            "{text}"
        );
    }
    server.stop().await;
}

async fn a_405_lists_the_allowed_methods(db: Db) {
    let server = TestServer::start(db).await;
    let response = http()
        .delete(server.at("/v2/pet"))
        .send()
        .await
        .expect("DELETE /v2/pet");
    assert_eq!(response.status().as_u16(), 405);
    assert_eq!(header(response.headers(), "allow"), Some("PUT,POST"));
    server.stop().await;
}
