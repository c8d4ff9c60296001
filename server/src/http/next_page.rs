//! Where the next page of a list is: a `Link: <...>; rel="next"` header
//! (RFC 8288) naming the same request with the next page's `cursor`, as both
//! services' paged lists answer.

use axum::http::{HeaderValue, Uri, header};
use axum::response::Response;

/// Adds to `response` a `Link` to the page that begins at `cursor`: the
/// request's own path and query, its `cursor` (and `page`, which a cursor
/// replaces) swapped for the next page's. Nothing when there is no next page.
pub(crate) fn link_next(mut response: Response, uri: &Uri, cursor: Option<&str>) -> Response {
    let Some(cursor) = cursor else {
        return response;
    };
    let mut query: Vec<&str> = uri
        .query()
        .unwrap_or("")
        .split('&')
        .filter(|pair| {
            !pair.is_empty() && !pair.starts_with("cursor=") && !pair.starts_with("page=")
        })
        .collect();
    let cursor = format!("cursor={cursor}");
    query.push(&cursor);
    let link = format!("<{}?{}>; rel=\"next\"", uri.path(), query.join("&"));
    // A cursor is digits or an id the server made, and the rest of the query
    // came in a valid request line: the link is always a valid header value.
    if let Ok(link) = HeaderValue::try_from(link) {
        response.headers_mut().insert(header::LINK, link);
    }
    response
}

#[cfg(test)]
mod tests {
    use axum::http::{Uri, header};
    use axum::response::Response;

    use super::link_next;

    fn link(uri: &str, cursor: Option<&str>) -> Option<String> {
        let uri: Uri = uri.parse().ok()?;
        let response = link_next(Response::default(), &uri, cursor);
        let value = response.headers().get(header::LINK)?;
        value.to_str().ok().map(str::to_owned)
    }

    #[test]
    fn the_next_link_keeps_the_query_and_swaps_the_cursor_and_page() {
        assert_eq!(
            link(
                "/v2/pet/findByStatus?status=sold&limit=2&cursor=4",
                Some("9")
            )
            .as_deref(),
            Some("</v2/pet/findByStatus?status=sold&limit=2&cursor=9>; rel=\"next\"")
        );
        assert_eq!(
            link("/api/admin/subscribers?page=3&per_page=10", Some("30")).as_deref(),
            Some("</api/admin/subscribers?per_page=10&cursor=30>; rel=\"next\"")
        );
        assert_eq!(link("/api/projects", None), None);
    }
}
