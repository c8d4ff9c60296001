//! Pages for people (the subscriber pages, the OAuth sign-in): HTML answers
//! that keep to themselves, and whether a request asked for one.

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::accept::named_weight;
use super::error::mark_rendered;

/// Whether the request asks for a page: its `Accept` names `text/html` at
/// least as high as `application/json` (a browser's does; `*/*`, no
/// `Accept`, or a JSON client's do not).
pub(crate) fn wants_page(headers: &HeaderMap) -> bool {
    let Some(accept) = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let html = named_weight(accept, "text/html");
    html > 0.0 && html >= named_weight(accept, "application/json")
}

/// Whether the request asks for JSON by name, above HTML (the SDK's and
/// any JSON client's `Accept: application/json`); `*/*` does not.
pub(crate) fn asks_for_json(headers: &HeaderMap) -> bool {
    let Some(accept) = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let json = named_weight(accept, "application/json");
    json > 0.0 && json > named_weight(accept, "text/html")
}

/// An HTML answer that keeps to itself: not cached, not framed, no
/// scripts, no referrer; a 4xx keeps its page (the service's error
/// renderer leaves it alone).
pub(crate) fn page(status: StatusCode, html: String) -> Response {
    let mut response = (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        )],
        html,
    )
        .into_response();
    harden(&mut response);
    response
}

/// The headers of [`page`], for a redirect from one.
pub(crate) fn harden(response: &mut Response) {
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
        ),
    );
    mark_rendered(response);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accept(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::ACCEPT,
            HeaderValue::from_str(value).unwrap_or(HeaderValue::from_static("")),
        );
        headers
    }

    #[test]
    fn a_browser_wants_a_page_and_a_json_client_json() {
        let browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
        assert!(wants_page(&accept(browser)));
        assert!(!asks_for_json(&accept(browser)));
        assert!(asks_for_json(&accept("application/json")));
        assert!(!wants_page(&accept("application/json")));
        assert!(asks_for_json(&accept("application/json, text/html;q=0.5")));
    }

    #[test]
    fn a_wildcard_or_no_accept_asks_for_neither_by_name() {
        for headers in [accept("*/*"), HeaderMap::new()] {
            assert!(!wants_page(&headers));
            assert!(!asks_for_json(&headers));
        }
    }
}
