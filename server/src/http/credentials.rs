//! Reading the credentials a request presents, the same way for both
//! services: the `Authorization` header's Bearer and Basic schemes, and the
//! query parameters that would carry a secret into logs and browser
//! histories (refused wherever a credential is checked).

use axum::http::{HeaderMap, HeaderName, HeaderValue, Uri, header};
use axum::response::Response;
use base64::Engine as _;

/// Query parameters that look like a credential, in lower case.
pub(crate) const REFUSED_IN_QUERY: [&str; 6] = [
    "api_key",
    "apikey",
    "x-api-key",
    "key",
    "access_token",
    "token",
];

/// The headers that carry a credential, in either service.
/// Names, not text: a lookup by text parses the name each time.
static CREDENTIAL_HEADERS: [HeaderName; 3] = [
    header::AUTHORIZATION,
    HeaderName::from_static("x-api-key"),
    HeaderName::from_static("api_key"),
];

/// Whether a request carries a credential (any of them, valid or not).
pub(crate) fn carries_credential(headers: &HeaderMap) -> bool {
    CREDENTIAL_HEADERS
        .iter()
        .any(|name| headers.contains_key(name))
}

/// Makes an answer to a request that carried a credential the caller's
/// alone: `Cache-Control: private` (its other directives kept, `public`
/// dropped), so that no shared cache in front (a CDN) hands it to anyone
/// else. `no-store` answers stay as they are.
pub(crate) fn keep_private(response: &mut Response) {
    let headers = response.headers_mut();
    let directives = headers
        .get(header::CACHE_CONTROL)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let lower = directives.to_ascii_lowercase();
    if lower.contains("no-store") || lower.split(',').any(|d| d.trim() == "private") {
        return;
    }
    let kept: Vec<&str> = directives
        .split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty() && !d.eq_ignore_ascii_case("public"))
        .collect();
    let value = std::iter::once("private")
        .chain(kept)
        .collect::<Vec<_>>()
        .join(", ");
    if let Ok(value) = HeaderValue::from_str(&value) {
        headers.insert(header::CACHE_CONTROL, value);
    }
}

/// The name of the first query parameter of `uri` that looks like a
/// credential (compared without case), if any.
pub(crate) fn secret_in_query(uri: &Uri) -> Option<String> {
    let query = uri.query()?;
    form_urlencoded::parse(query.as_bytes())
        .map(|(name, _)| name.to_ascii_lowercase())
        .find(|name| REFUSED_IN_QUERY.contains(&name.as_str()))
}

/// What an `Authorization` header holds.
#[derive(PartialEq, Eq)]
pub(crate) enum Authorization<'h> {
    /// `Bearer <token>` (the scheme in any case).
    Bearer(&'h str),
    /// `Basic <base64 of name:password>`, decoded.
    Basic { username: String, password: String },
    /// A Basic header that does not decode to `name:password` in UTF-8.
    MalformedBasic,
    /// Another scheme, an empty one, or bytes that are not text.
    Other,
}

impl std::fmt::Debug for Authorization<'_> {
    // Never the secrets.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Authorization::Bearer(_) => f.write_str("Bearer(***)"),
            Authorization::Basic { username, .. } => write!(f, "Basic({username:?}, ***)"),
            Authorization::MalformedBasic => f.write_str("MalformedBasic"),
            Authorization::Other => f.write_str("Other"),
        }
    }
}

/// The `Authorization` header of `headers`, read; none when absent.
pub(crate) fn authorization(headers: &HeaderMap) -> Option<Authorization<'_>> {
    let value = headers.get(header::AUTHORIZATION)?;
    let Ok(text) = value.to_str() else {
        return Some(Authorization::Other);
    };
    let Some((scheme, credentials)) = text.trim().split_once(' ') else {
        return Some(Authorization::Other);
    };
    let credentials = credentials.trim();
    if scheme.eq_ignore_ascii_case("bearer") && !credentials.is_empty() {
        return Some(Authorization::Bearer(credentials));
    }
    if scheme.eq_ignore_ascii_case("basic") {
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(credentials)
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok());
        return Some(match decoded.as_deref().and_then(|d| d.split_once(':')) {
            Some((username, password)) => Authorization::Basic {
                username: username.to_owned(),
                password: password.to_owned(),
            },
            None => Authorization::MalformedBasic,
        });
    }
    Some(Authorization::Other)
}

/// A header's value, trimmed, if present and not empty: `Some(None)` when
/// it is not visible ASCII (a credential that matches nothing, not a
/// missing one).
pub(crate) fn header_text<'h>(headers: &'h HeaderMap, name: &str) -> Option<Option<&'h str>> {
    let value = headers.get(name)?;
    match value.to_str() {
        Ok(text) => {
            let text = text.trim();
            (!text.is_empty()).then_some(Some(text))
        }
        Err(_) => Some(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn read(value: &str) -> Option<Authorization<'static>> {
        let mut headers = HeaderMap::new();
        headers.insert(header::AUTHORIZATION, HeaderValue::from_str(value).unwrap());
        let headers = Box::leak(Box::new(headers));
        authorization(headers)
    }

    #[test]
    fn both_schemes_are_read_in_any_case() {
        assert_eq!(read("bearer abc"), Some(Authorization::Bearer("abc")));
        assert_eq!(
            read("BASIC dXNlcjE6cDpx"),
            Some(Authorization::Basic {
                username: "user1".into(),
                password: "p:q".into()
            })
        );
        assert_eq!(read("Basic !!"), Some(Authorization::MalformedBasic));
        assert_eq!(read("Digest x"), Some(Authorization::Other));
        assert_eq!(read("Bearer "), Some(Authorization::Other));
    }

    #[test]
    fn secrets_in_the_query_are_found_by_name_in_any_case() {
        let uri: Uri = "/v2/pet/1?Access_Token=x&a=b".parse().unwrap();
        assert_eq!(secret_in_query(&uri).as_deref(), Some("access_token"));
        let uri: Uri = "/v2/user/login?username=a&password=b".parse().unwrap();
        assert_eq!(secret_in_query(&uri), None);
    }

    #[test]
    fn an_answer_kept_private_keeps_its_other_directives() {
        let mut response = Response::new(axum::body::Body::empty());
        response.headers_mut().insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static("public, max-age=31536000, immutable"),
        );
        keep_private(&mut response);
        assert_eq!(
            response.headers()[header::CACHE_CONTROL],
            "private, max-age=31536000, immutable"
        );
        let mut bare = Response::new(axum::body::Body::empty());
        keep_private(&mut bare);
        assert_eq!(bare.headers()[header::CACHE_CONTROL], "private");
        let mut no_store = Response::new(axum::body::Body::empty());
        no_store
            .headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        keep_private(&mut no_store);
        assert_eq!(no_store.headers()[header::CACHE_CONTROL], "no-store");
    }

    #[test]
    fn debug_shows_no_secret() {
        let shown = format!("{:?}", read("Basic dXNlcjE6c2VjcmV0").unwrap());
        assert!(!shown.contains("secret"), "{shown}");
    }
}
