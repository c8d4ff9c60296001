//! Deprecation on the wire: the deprecated aliases' answers say so, errors
//! included; the operations they stand for do not.

use end_to_end_tests::{Db, TestServer, Written, header, http};
use serde_json::json;

#[tokio::test]
async fn a_deprecated_alias_answers_with_deprecation_sunset_and_link() {
    let server = TestServer::start(Db::Sqlite).await;
    let answer = server
        .post_json("/newsletter", json!({"email": "old-path@example.test"}))
        .send()
        .await
        .unwrap();
    assert!(answer.status().is_success(), "{}", answer.status());
    let headers = answer.headers();
    // 2026-11-28T00:00:00Z, the alias's x-deprecated-at.
    assert_eq!(header(headers, "deprecation"), Some("@1795824000"));
    assert_eq!(
        header(headers, "sunset"),
        Some("Mon, 31 May 2027 00:00:00 GMT")
    );
    assert_eq!(
        header(headers, "link"),
        Some(r#"</docs/>; rel="deprecation"; type="text/html""#)
    );

    // An answer the edge gives before the handler (no credential) too.
    let refused = http()
        .post(server.at("/social-publish"))
        .json(&json!({"text": "hello"}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);
    assert_eq!(
        header(refused.headers(), "deprecation"),
        Some("@1795824000")
    );

    // The operation it stands for is not deprecated.
    let current = server
        .post_json("/api/newsletter", json!({"email": "new-path@example.test"}))
        .send()
        .await
        .unwrap();
    assert!(current.status().is_success());
    assert_eq!(header(current.headers(), "deprecation"), None);
    assert_eq!(header(current.headers(), "sunset"), None);
    server.stop().await;
}

/// The SDK tells its program once that the server deprecates what it calls
/// (and the method is marked `#[deprecated]`, which this test allows).
#[tokio::test]
async fn the_sdk_warns_once_when_the_server_says_deprecated() {
    use petstore_portfolio_client::portfolio::types;
    use tracing_subscriber::layer::SubscriberExt as _;

    let server = TestServer::start(Db::Sqlite).await;
    let written = Written::default();
    let writer = written.clone();
    let subscriber = tracing_subscriber::registry()
        .with(
            tracing_subscriber::filter::Targets::new()
                .with_target("petstore_portfolio_client", tracing::Level::WARN),
        )
        .with(
            tracing_subscriber::fmt::layer()
                .with_ansi(false)
                .with_writer(move || writer.clone()),
        );
    let guard = tracing::subscriber::set_default(subscriber);
    let client = server.portfolio();
    for name in ["first", "second"] {
        #[allow(deprecated)]
        client
            .subscribe_newsletter_alias()
            .body(types::SubscribeRequest {
                email: format!("{name}@example.test").parse().unwrap(),
            })
            .send()
            .await
            .unwrap();
    }
    drop(guard);
    let text = written.text();
    let warnings: Vec<&str> = text.lines().filter(|l| l.contains("deprecated")).collect();
    assert_eq!(warnings.len(), 1, "once per process:\n{text}");
    assert!(
        warnings[0].contains("operation=\"subscribe_newsletter_alias\"")
            && warnings[0].contains("deprecation=@1795824000")
            && warnings[0].contains("sunset=\"Mon, 31 May 2027 00:00:00 GMT\""),
        "{}",
        warnings[0]
    );
    server.stop().await;
}
