//! Reading the credentials a request presents, the same way for both
//! services: the `Authorization` header's Bearer and Basic schemes, and the
//! query parameters that would carry a secret into logs and browser
//! histories (refused wherever a credential is checked).

use axum::http::{HeaderMap, Uri, header};
use base64::Engine as _;

/// Query parameters that look like a credential, in lower case.
pub const REFUSED_IN_QUERY: [&str; 6] = [
    "api_key",
    "apikey",
    "x-api-key",
    "key",
    "access_token",
    "token",
];

/// The name of the first query parameter of `uri` that looks like a
/// credential (compared without case), if any.
pub fn secret_in_query(uri: &Uri) -> Option<String> {
    let query = uri.query()?;
    form_urlencoded::parse(query.as_bytes())
        .map(|(name, _)| name.to_ascii_lowercase())
        .find(|name| REFUSED_IN_QUERY.contains(&name.as_str()))
}

/// What an `Authorization` header holds.
#[derive(PartialEq, Eq)]
pub enum Authorization<'h> {
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
pub fn authorization(headers: &HeaderMap) -> Option<Authorization<'_>> {
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
pub fn header_text<'h>(headers: &'h HeaderMap, name: &str) -> Option<Option<&'h str>> {
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
    fn debug_shows_no_secret() {
        let shown = format!("{:?}", read("Basic dXNlcjE6c2VjcmV0").unwrap());
        assert!(!shown.contains("secret"), "{shown}");
    }
}
