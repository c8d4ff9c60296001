//! What a write changed is what the next read sees: the server keeps pets
//! and the short lists by status in memory, and a pet written whole is kept
//! as written. Every read here is made once before each write, so that the
//! caches hold it when the write comes.

use std::collections::BTreeMap;

use end_to_end_tests::{Db, TINY_PNG, TestServer, http, on_every_database, send};
use serde_json::{Value, json};

on_every_database!(every_pet_write_shows_in_the_next_reads);

const STATUSES: [&str; 3] = ["available", "pending", "sold"];

/// What a client reads of pet `id` and of the lists: the pet in JSON (null
/// once it is gone) and in XML, and each status's list as (name, photo
/// count) pairs.
#[derive(Debug)]
struct Seen {
    json: Value,
    xml: String,
    lists: BTreeMap<&'static str, Vec<(String, usize)>>,
}

async fn seen(server: &TestServer, id: u64) -> Seen {
    let get = |path: String, accept: &'static str| {
        send(http().get(server.at(&path)).header("accept", accept))
    };
    let (code, _, body) = get(format!("/v2/pet/{id}"), "application/json").await;
    let json = match code {
        200 => serde_json::from_str(&body).expect("a pet"),
        404 => Value::Null,
        _ => panic!("getPetById: {code} {body}"),
    };
    let (_, _, xml) = get(format!("/v2/pet/{id}"), "application/xml").await;
    let mut lists = BTreeMap::new();
    for status in STATUSES {
        let (code, _, body) = get(
            format!("/v2/pet/findByStatus?status={status}"),
            "application/json",
        )
        .await;
        assert_eq!(code, 200, "{body}");
        let pets: Vec<Value> = serde_json::from_str(&body).expect("a list");
        let listed = pets
            .iter()
            .map(|pet| {
                let photos = pet["photoUrls"].as_array().map_or(0, Vec::len);
                (pet["name"].as_str().unwrap_or_default().to_owned(), photos)
            })
            .collect();
        lists.insert(status, listed);
    }
    Seen { json, xml, lists }
}

impl Seen {
    /// The one list that holds `name`, and how many photos it has there.
    fn listed(&self, name: &str) -> Option<(&'static str, usize)> {
        let found: Vec<_> = self
            .lists
            .iter()
            .filter_map(|(status, pets)| {
                pets.iter()
                    .find(|(listed, _)| listed == name)
                    .map(|(_, photos)| (*status, *photos))
            })
            .collect();
        assert!(found.len() <= 1, "{name} in several lists: {self:?}");
        found.first().copied()
    }
}

/// A rename, a replacement that empties the category and leaves the status
/// out, a form update of the status, an image, an order and a delete, each
/// after every read was made once.
async fn every_pet_write_shows_in_the_next_reads(db: Db) {
    let server = TestServer::start(db).await;
    let write = |request: reqwest::RequestBuilder| async move {
        let (code, _, body) = send(request).await;
        assert_eq!(code, 200, "{body}");
    };
    let dogs = json!({"id": 1, "name": "Dogs"});
    let (x, y) = (700_001_u64, 700_002_u64);
    for (id, name) in [(x, "X"), (y, "Y")] {
        let pet =
            json!({"id": id, "name": name, "category": dogs, "photoUrls": [], "status": "pending"});
        write(server.post_json("/v2/pet", pet)).await;
    }
    let before = seen(&server, x).await;
    assert_eq!(before.listed("X"), Some(("pending", 0)));

    let renamed =
        json!({"id": x, "name": "X2", "category": dogs, "photoUrls": [], "status": "pending"});
    write(http().put(server.at("/v2/pet")).json(&renamed)).await;
    let after = seen(&server, x).await;
    assert_eq!(after.json["name"], "X2");
    assert!(after.xml.contains("<name>X2</name>"), "{}", after.xml);
    assert_eq!(after.listed("X2"), Some(("pending", 0)));
    assert_eq!(after.listed("X"), None);

    // Replaced through addPet (its id is taken): no status means available,
    // and an empty category is none.
    let replaced = json!({"id": x, "name": "X3", "category": {}, "photoUrls": []});
    write(server.post_json("/v2/pet", replaced)).await;
    let after = seen(&server, x).await;
    assert_eq!(after.json["status"], "available", "{}", after.json);
    assert!(after.json.get("category").is_none(), "{}", after.json);
    assert!(!after.xml.contains("<category"), "{}", after.xml);
    assert_eq!(after.listed("X3"), Some(("available", 0)));

    write(
        http()
            .post(server.at(&format!("/v2/pet/{y}")))
            .form(&[("name", "Y2"), ("status", "sold")]),
    )
    .await;
    let after = seen(&server, y).await;
    assert_eq!(after.json["name"], "Y2");
    assert_eq!(after.json["status"], "sold");
    assert_eq!(after.listed("Y2"), Some(("sold", 0)));
    assert_eq!(after.listed("Y"), None);

    write(
        http()
            .post(server.at(&format!("/v2/pet/{x}/uploadImage")))
            .header("content-type", "application/octet-stream")
            .body(TINY_PNG.to_vec()),
    )
    .await;
    let after = seen(&server, x).await;
    assert_eq!(after.json["photoUrls"].as_array().map(Vec::len), Some(1));
    assert_eq!(after.listed("X3"), Some(("available", 1)));

    let order = json!({"petId": x, "quantity": 1});
    write(server.post_json("/v2/store/order", order)).await;
    let after = seen(&server, x).await;
    let status = after.json["status"].as_str().expect("a status").to_owned();
    assert_ne!(status, "available", "an ordered pet is no longer for sale");
    assert_eq!(
        after.listed("X3").map(|(listed, _)| listed),
        Some(status.as_str())
    );

    write(http().delete(server.at(&format!("/v2/pet/{x}")))).await;
    let after = seen(&server, x).await;
    assert_eq!(after.json, Value::Null);
    assert_eq!(after.listed("X3"), None);
    assert_eq!(after.listed("Y2"), Some(("sold", 0)));
    server.stop().await;
}
