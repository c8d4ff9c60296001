//! Deprecation on the wire: every answer of an operation that its document
//! marks `deprecated: true` carries `Deprecation` (RFC 9745: since when, from
//! the operation's `x-deprecated-at` date), `Sunset` (RFC 8594: from when it
//! may be gone, from `x-sunset`, where the document sets one) and
//! `Link: </docs/>; rel="deprecation"`, so that a client that never reads the
//! document still learns it. Errors answered before the handler (401, 429)
//! carry them too: the layer is outside the service's edge.

use std::sync::Arc;

use anyhow::Context as _;
use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderName, HeaderValue, Method};
use axum::middleware::Next;
use axum::response::Response;
use chrono::NaiveDate;
use serde_json::Value;

/// The deprecated operations of one service, with the headers their
/// answers carry.
#[derive(Debug, Clone, Default)]
pub(crate) struct Deprecations(Arc<[Deprecated]>);

#[derive(Debug)]
struct Deprecated {
    method: Method,
    /// The route as the router matches it (`/newsletter`, `/v2/pet/{petId}`).
    route: String,
    headers: Vec<(HeaderName, HeaderValue)>,
}

/// Where a deprecation's `Link` points: the documents, where the operation
/// says what to use instead.
const DOCS_LINK: &str = r#"</docs/>; rel="deprecation"; type="text/html""#;

impl Deprecations {
    /// The deprecated operations of `document` (JSON), whose paths the
    /// router serves under `base` (`/v2`, or nothing). A deprecated
    /// operation without a valid `x-deprecated-at` date is an error: the
    /// header must say since when.
    pub(crate) fn of_document(document: &Value, base: &str) -> anyhow::Result<Self> {
        let mut found = Vec::new();
        let paths = document.get("paths").and_then(Value::as_object);
        for (path, item) in paths.into_iter().flatten() {
            let Some(item) = item.as_object() else {
                continue;
            };
            for (method, operation) in item {
                if operation.get("deprecated").and_then(Value::as_bool) != Some(true) {
                    continue;
                }
                let id = operation
                    .get("operationId")
                    .and_then(Value::as_str)
                    .unwrap_or(path);
                let since = date(operation, "x-deprecated-at")
                    .with_context(|| format!("{id} is deprecated"))?
                    .with_context(|| format!("{id} is deprecated without x-deprecated-at"))?;
                let mut headers = vec![
                    (
                        HeaderName::from_static("deprecation"),
                        HeaderValue::try_from(format!("@{}", midnight(since).timestamp()))?,
                    ),
                    (
                        axum::http::header::LINK,
                        HeaderValue::from_static(DOCS_LINK),
                    ),
                ];
                if let Some(sunset) = date(operation, "x-sunset").with_context(|| id.to_owned())? {
                    headers.push((
                        HeaderName::from_static("sunset"),
                        HeaderValue::try_from(
                            midnight(sunset)
                                .format("%a, %d %b %Y %H:%M:%S GMT")
                                .to_string(),
                        )?,
                    ));
                }
                found.push(Deprecated {
                    method: Method::from_bytes(method.to_ascii_uppercase().as_bytes())
                        .with_context(|| format!("{id}: the method {method}"))?,
                    route: format!("{base}{path}"),
                    headers,
                });
            }
        }
        Ok(Deprecations(found.into()))
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `router` with the deprecation headers on the answers of its
    /// deprecated operations; as it was when it has none (no cost).
    pub(crate) fn mark<S: Clone + Send + Sync + 'static>(
        self,
        router: axum::Router<S>,
    ) -> axum::Router<S> {
        if self.is_empty() {
            return router;
        }
        router.layer(axum::middleware::from_fn_with_state(self, mark_deprecated))
    }
}

/// The date in `operation[key]` (`YYYY-MM-DD`), if set.
fn date(operation: &Value, key: &str) -> anyhow::Result<Option<NaiveDate>> {
    operation
        .get(key)
        .and_then(Value::as_str)
        .map(|text| {
            NaiveDate::parse_from_str(text, "%Y-%m-%d")
                .with_context(|| format!("{key} {text:?} is not a YYYY-MM-DD date"))
        })
        .transpose()
}

fn midnight(date: NaiveDate) -> chrono::DateTime<chrono::Utc> {
    date.and_time(chrono::NaiveTime::MIN).and_utc()
}

/// Adds the headers of the deprecated operation the request is for, if it
/// is for one.
async fn mark_deprecated(
    State(deprecations): State<Deprecations>,
    route: Option<MatchedPath>,
    request: Request,
    next: Next,
) -> Response {
    let deprecated = route.and_then(|route| {
        deprecations
            .0
            .iter()
            .position(|d| d.method == request.method() && d.route == route.as_str())
    });
    let mut response = next.run(request).await;
    if let Some(i) = deprecated {
        for (name, value) in &deprecations.0[i].headers {
            response.headers_mut().append(name.clone(), value.clone());
        }
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deprecated_operation_gets_its_headers_from_the_document() {
        let document = serde_json::json!({"paths": {"/old": {"post": {
            "operationId": "old", "deprecated": true,
            "x-deprecated-at": "2026-11-28", "x-sunset": "2027-05-31"
        }}, "/new": {"post": {"operationId": "new"}}}});
        let found = Deprecations::of_document(&document, "/api").unwrap();
        assert_eq!(found.0.len(), 1);
        let old = &found.0[0];
        assert_eq!(
            (old.method.as_str(), old.route.as_str()),
            ("POST", "/api/old")
        );
        let header = |name: &str| {
            old.headers
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.to_str().unwrap().to_owned())
        };
        assert_eq!(header("deprecation").as_deref(), Some("@1795824000"));
        assert_eq!(
            header("sunset").as_deref(),
            Some("Mon, 31 May 2027 00:00:00 GMT")
        );
        assert_eq!(header("link").as_deref(), Some(DOCS_LINK));
    }

    #[test]
    fn a_deprecation_must_say_since_when() {
        let document = serde_json::json!({"paths": {"/old": {"post": {
            "operationId": "old", "deprecated": true
        }}}});
        let error = Deprecations::of_document(&document, "").unwrap_err();
        assert!(
            format!("{error:#}").contains("x-deprecated-at"),
            "{error:#}"
        );
    }
}
