//! The pet store's lists a page at a time (`limit`, `cursor`, `Link`), the
//! SDK's streams of them, and the operator's cap on whole lists.

use end_to_end_tests::{Db, TestServer, http, on_every_database, send};
use futures::TryStreamExt as _;
use petstore_portfolio_client::petstore::Client;
use petstore_portfolio_client::petstore::types::PetStatus;

use crate::support::{add_pet, names, pet};

on_every_database!(
    a_list_comes_a_page_at_a_time_each_naming_the_next,
    a_page_of_tags_holds_each_pet_once,
    the_sdk_streams_every_page_in_order,
    bad_limits_and_cursors_are_400_and_say_what_to_send,
    a_whole_list_longer_than_its_chunks_comes_whole_and_in_order,
    an_operator_can_cap_whole_lists_and_the_refusal_says_how_to_page,
);

/// Adds `count` pets named `prefix0`, `prefix1`, ... with `status` and the
/// tags given.
async fn add_pets(client: &Client, prefix: &str, count: usize, status: PetStatus, tags: &[&str]) {
    for n in 0..count {
        let mut p = pet(&format!("{prefix}{n}"), tags);
        p.status = Some(status);
        add_pet(client, p).await;
    }
}

/// GETs `path_and_query` on the server: the status, the names of the pets
/// (JSON), and the `Link` header.
async fn get_page(server: &TestServer, path_and_query: &str) -> (u16, Vec<String>, Option<String>) {
    let response = http()
        .get(format!("{}{path_and_query}", server.url))
        .send()
        .await
        .expect("the page was answered");
    let status = response.status().as_u16();
    let link = response
        .headers()
        .get(reqwest::header::LINK)
        .map(|link| link.to_str().expect("an ASCII Link").to_owned());
    let body: serde_json::Value = response.json().await.expect("a JSON body");
    let names = body
        .as_array()
        .map(|pets| {
            pets.iter()
                .map(|pet| pet["name"].as_str().unwrap_or_default().to_owned())
                .collect()
        })
        .unwrap_or_default();
    (status, names, link)
}

/// The path and query a `Link: <...>; rel="next"` points to.
fn next_target(link: &str) -> String {
    assert!(link.ends_with("; rel=\"next\""), "{link}");
    let target = link
        .strip_prefix('<')
        .and_then(|rest| rest.split_once('>'))
        .map(|(target, _)| target.to_owned());
    target.unwrap_or_else(|| panic!("no target in {link}"))
}

async fn a_list_comes_a_page_at_a_time_each_naming_the_next(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    add_pets(&client, "a", 7, PetStatus::Available, &[]).await;
    add_pets(&client, "s", 2, PetStatus::Sold, &[]).await;

    let (status, first, link) =
        get_page(&server, "/v2/pet/findByStatus?status=available&limit=3").await;
    assert_eq!(status, 200);
    assert_eq!(first, ["a0", "a1", "a2"]);
    let next = next_target(&link.expect("a first page names the next"));
    assert!(
        next.starts_with("/v2/pet/findByStatus?status=available&limit=3&cursor="),
        "the next page is this request with a cursor: {next}"
    );
    let (_, second, link) = get_page(&server, &next).await;
    assert_eq!(second, ["a3", "a4", "a5"]);
    let (_, last, link) = get_page(&server, &next_target(&link.expect("a next page"))).await;
    assert_eq!(last, ["a6"]);
    assert_eq!(link, None, "the last page names no next");

    // The same list whole, as upstream sends it: no Link.
    let (_, whole, link) = get_page(&server, "/v2/pet/findByStatus?status=available").await;
    assert_eq!(whole, ["a0", "a1", "a2", "a3", "a4", "a5", "a6"]);
    assert_eq!(link, None);

    // A page that ends exactly at the list's end names no next either.
    let (_, sold, link) = get_page(&server, "/v2/pet/findByStatus?status=sold&limit=2").await;
    assert_eq!((sold.len(), link), (2, None));

    // XML pages are pages too.
    let response = http()
        .get(format!(
            "{}/v2/pet/findByStatus?status=sold&limit=1",
            server.url
        ))
        .header("Accept", "application/xml")
        .send()
        .await
        .expect("an XML page");
    assert!(response.headers().contains_key(reqwest::header::LINK));
    let xml = response.text().await.expect("a body");
    assert!(
        xml.contains("<pets><pet>") && xml.ends_with("</pet></pets>") && xml.contains(">s0<"),
        "{xml}"
    );
    server.stop().await;
}

async fn a_page_of_tags_holds_each_pet_once(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    add_pets(&client, "both", 3, PetStatus::Available, &["x", "y"]).await;
    add_pets(&client, "y", 2, PetStatus::Sold, &["y"]).await;
    add_pets(&client, "none", 1, PetStatus::Available, &["z"]).await;

    let mut seen = Vec::new();
    let mut target = "/v2/pet/findByTags?tags=x,y&limit=2".to_owned();
    loop {
        let (status, page, link) = get_page(&server, &target).await;
        assert_eq!(status, 200);
        assert!(page.len() <= 2, "{page:?}");
        seen.extend(page);
        match link {
            Some(link) => target = next_target(&link),
            None => break,
        }
    }
    assert_eq!(seen, ["both0", "both1", "both2", "y0", "y1"]);
    server.stop().await;
}

/// Every pet with the tag `t`, as the SDK streams them in pages of `limit`.
async fn stream_tagged(client: &Client, limit: u32) -> Vec<String> {
    let tagged: Vec<_> = client
        .find_pets_by_tags()
        .tags(vec!["t".to_owned()])
        .limit(limit)
        .stream()
        .try_collect()
        .await
        .expect("every page");
    names(&tagged)
}

async fn the_sdk_streams_every_page_in_order(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    add_pets(&client, "p", 5, PetStatus::Pending, &["t"]).await;
    add_pets(&client, "a", 2, PetStatus::Available, &["t"]).await;

    let pending: Vec<_> = client
        .find_pets_by_status()
        .status(vec![PetStatus::Pending])
        .limit(2_u32)
        .stream()
        .try_collect()
        .await
        .expect("every page");
    assert_eq!(names(&pending), ["p0", "p1", "p2", "p3", "p4"]);

    assert_eq!(
        stream_tagged(&client, 3).await,
        ["p0", "p1", "p2", "p3", "p4", "a0", "a1"]
    );

    // Without a limit the stream still pages (100 a page).
    let all: Vec<_> = client
        .find_pets_by_tags()
        .tags(vec!["t".to_owned()])
        .stream()
        .try_collect()
        .await
        .expect("every page");
    assert_eq!(all.len(), 7);
    server.stop().await;
}

async fn bad_limits_and_cursors_are_400_and_say_what_to_send(db: Db) {
    let server = TestServer::start(db).await;
    add_pets(&server.petstore(), "a", 2, PetStatus::Available, &["t"]).await;
    for (query, says) in [
        (
            "findByStatus?limit=0",
            "limit must be a whole number from 1 to 1000",
        ),
        (
            "findByStatus?limit=1001",
            "limit must be a whole number from 1 to 1000",
        ),
        (
            "findByStatus?limit=ten",
            "limit must be a whole number from 1 to 1000",
        ),
        (
            "findByTags?tags=t&limit=-1",
            "limit must be a whole number from 1 to 1000",
        ),
        ("findByStatus?cursor=bm90LW91cnM", "cursor is not a cursor"),
        ("findByTags?tags=t&cursor=%21%21", "cursor is not a cursor"),
        (
            "findByTags?tags=t&cursor=1234567890123456789",
            "cursor is not a cursor",
        ),
    ] {
        let (status, content_type, text) =
            send(http().get(format!("{}/v2/pet/{query}", server.url))).await;
        assert_eq!(status, 400, "{query}: {text}");
        assert!(
            content_type.starts_with("application/json"),
            "{query}: {content_type}"
        );
        let body: serde_json::Value = serde_json::from_str(&text).expect("an ApiResponse");
        assert_eq!(body["code"], 400, "{query}: {text}");
        assert!(
            body["message"].as_str().unwrap_or_default().contains(says),
            "{query}: {text}"
        );
    }
    server.stop().await;
}

/// Longer than a whole list's chunks and pieces: read a chunk at a time,
/// the list still comes whole, in order, each pet once.
async fn a_whole_list_longer_than_its_chunks_comes_whole_and_in_order(db: Db) {
    let server = TestServer::start(db).await;
    let client = server.petstore();
    let adds = (0..1_100).map(|n| {
        let client = client.clone();
        async move {
            let mut p = pet(&format!("{n:04}"), &["many", "more"]);
            p.photo_urls = vec!["https://example.com/a/rather/long/photo/url.jpg".to_owned(); 4];
            add_pet(&client, p).await
        }
    });
    futures::future::join_all(adds).await;
    for query in ["findByStatus?status=available", "findByTags?tags=many,more"] {
        let response = http()
            .get(format!("{}/v2/pet/{query}", server.url))
            .send()
            .await
            .expect("the whole list");
        assert_eq!(response.status(), 200, "{query}");
        assert!(!response.headers().contains_key(reqwest::header::LINK));
        let listed: Vec<serde_json::Value> = response.json().await.expect("a JSON list");
        let ids: Vec<i64> = listed.iter().filter_map(|pet| pet["id"].as_i64()).collect();
        assert_eq!(ids.len(), 1_100, "{query}");
        assert!(
            ids.windows(2).all(|pair| pair[0] < pair[1]),
            "{query}: each pet once, in id order"
        );
    }
    server.stop().await;
}

async fn an_operator_can_cap_whole_lists_and_the_refusal_says_how_to_page(db: Db) {
    let server = TestServer::start_with(db, |config| {
        config.petstore.max_unpaged_list = Some(3);
    })
    .await;
    let client = server.petstore();
    add_pets(&client, "a", 3, PetStatus::Available, &["t"]).await;
    let (status, three, _) = get_page(&server, "/v2/pet/findByStatus").await;
    assert_eq!(
        (status, three.len()),
        (200, 3),
        "as many as allowed come whole"
    );

    add_pets(&client, "b", 1, PetStatus::Available, &["t"]).await;
    for query in ["findByStatus", "findByTags?tags=t"] {
        let (status, _, text) = send(http().get(format!("{}/v2/pet/{query}", server.url))).await;
        assert_eq!(status, 400, "{query}: {text}");
        assert!(
            text.contains("more than 3 pets") && text.contains("limit") && text.contains("Link"),
            "{query}: the refusal says how to page: {text}"
        );
    }
    assert_eq!(
        stream_tagged(&client, 3).await.len(),
        4,
        "pages are not capped"
    );
    server.stop().await;
}
