//! The extractors both services read requests with. Their rejections are
//! [`Error`]s, so each service's error middleware answers them in its own
//! format: never axum's plain text.
//!
//! - [`Path`]: path parameters (400 on a value that does not parse).
//! - [`Query`]: the query string, repeated keys read as lists
//!   (`?status=a&status=b`), by serde_html_form. An empty value (`?name=`)
//!   reads as absent for an `Option`; a field where it must be read as a
//!   value (an empty name, or a date that is not one) takes
//!   `#[serde(default, deserialize_with = "keep_empty")]`.
//! - [`JsonBody`]: an `application/json` body read as strictly as the
//!   documents are written ([`crate::http::strict_json`]).
//!
//! The pet store's bodies, which may also be XML or forms, have their own
//! extractor (`petstore::wire::Body`).

use std::net::{IpAddr, SocketAddr};

use axum::body::Bytes;
use axum::extract::{ConnectInfo, FromRequest, FromRequestParts, Request};
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use ipnet::IpNet;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};

use crate::http::credentials;
use crate::http::error::Error;

/// Path parameters.
#[derive(Debug, FromRequestParts)]
#[from_request(via(axum::extract::Path), rejection(Error))]
pub(crate) struct Path<T>(pub(crate) T);

/// The query string.
#[derive(Debug, FromRequestParts)]
#[from_request(via(axum_extra::extract::Query), rejection(Error))]
pub(crate) struct Query<T>(pub(crate) T);

/// The client's address (the TCP peer), when the server knows it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ClientAddress(pub(crate) Option<std::net::IpAddr>);

impl<S: Send + Sync> FromRequestParts<S> for ClientAddress {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _state: &S,
    ) -> Result<Self, Self::Rejection> {
        Ok(ClientAddress(client_address(&parts.extensions)))
    }
}

/// The client's address: the one a trusted proxy forwarded
/// ([`ForwardedClient`]), or else the TCP peer's, both left in the request's
/// extensions by the server.
pub(crate) fn client_address(extensions: &axum::http::Extensions) -> Option<IpAddr> {
    if let Some(ForwardedClient(address)) = extensions.get() {
        return Some(*address);
    }
    extensions
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(address)| address.ip())
}

/// The client's address as the trusted proxies in front of the server
/// forwarded it (`http.trusted_proxies`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ForwardedClient(pub(crate) IpAddr);

/// Leaves in `request` the client a trusted proxy forwarded, if it comes
/// from one that names it ([`forwarded_client`]); [`client_address`] reads
/// it from there.
pub(crate) fn note_forwarded_client(mut request: Request, trusted: &[IpNet]) -> Request {
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(peer)| peer.ip());
    if let Some(client) = peer.and_then(|peer| forwarded_client(peer, request.headers(), trusted)) {
        request.extensions_mut().insert(ForwardedClient(client));
    }
    request
}

/// The client behind `peer`, if `peer` is a trusted proxy that says who it
/// is: walking `X-Forwarded-For` from its end (the hop nearest to us), the
/// first address that is not a trusted proxy. A client can write anything at
/// the start of the header, but not past the proxies it went through. If
/// every hop is trusted, the first; if a hop cannot be read, the one after
/// it (the last that could be believed).
pub(crate) fn forwarded_client(
    peer: IpAddr,
    headers: &HeaderMap,
    trusted: &[IpNet],
) -> Option<IpAddr> {
    let is_trusted = |address: &IpAddr| trusted.iter().any(|net| net.contains(address));
    if !is_trusted(&peer) {
        return None;
    }
    let hops: Vec<&str> = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(str::trim)
        .collect();
    let mut client = None;
    for hop in hops.iter().rev() {
        let Ok(address) = hop.parse::<IpAddr>() else {
            break;
        };
        client = Some(address);
        if !is_trusted(&address) {
            break;
        }
    }
    client
}

/// `http.trusted_proxies`, read: each an address or a CIDR range.
pub(crate) fn parse_trusted_proxies(proxies: &[String]) -> anyhow::Result<Vec<IpNet>> {
    proxies
        .iter()
        .map(|proxy| {
            proxy
                .parse::<IpNet>()
                .or_else(|_| proxy.parse::<IpAddr>().map(IpNet::from))
                .map_err(|_| {
                    anyhow::anyhow!(
                        "http.trusted_proxies: {proxy:?} is neither an address nor a CIDR range"
                    )
                })
        })
        .collect()
}

/// For an optional query or form field where `name=` is a value (an empty
/// text, or a date that does not parse), not an absent field:
/// `#[serde(default, deserialize_with = "keep_empty")]`.
pub(crate) fn keep_empty<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}

/// A JSON request body: 415 unless the body is `application/json`, 413 over
/// the size limit, 400 when it cannot be read as `T`.
#[derive(Debug)]
pub(crate) struct JsonBody<T>(pub(crate) T);

impl<S: Send + Sync, T: DeserializeOwned + Serialize> FromRequest<S> for JsonBody<T> {
    type Rejection = Error;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        if !has_media_type(req.headers(), "application/json") {
            return Err(Error::unsupported_media_type(
                "the request body must be application/json",
            ));
        }
        let bytes = Bytes::from_request(req, state).await?;
        crate::http::strict_json::parse(&bytes).map(JsonBody)
    }
}

/// Why a request names its host wrongly, if it does: two `Host` headers, a
/// `Host` that disagrees with the request's authority (HTTP/2's
/// `:authority`, or an absolute URI), or (HTTP/1.1 and later) no host at
/// all. Such a request is ambiguous about which site it is for, so it is
/// refused (RFC 9112 section 3.2: 400) rather than read one way here and
/// another by a proxy.
pub(crate) fn host_problem(request: &Request) -> Option<&'static str> {
    let mut hosts = request.headers().get_all(axum::http::header::HOST).iter();
    let host = hosts.next();
    if hosts.next().is_some() {
        return Some("the request has more than one Host header");
    }
    match (host, request.uri().authority()) {
        (Some(host), Some(authority))
            if !host
                .as_bytes()
                .eq_ignore_ascii_case(authority.as_str().as_bytes()) =>
        {
            Some("the Host header and the request's authority name different hosts")
        }
        // HTTP/1.0 has no Host requirement, and load balancers' health
        // checks send none (HAProxy's `option httpchk`): refusing them
        // would take every replica out of service.
        (None, None) if request.version() != axum::http::Version::HTTP_10 => {
            Some("the request names no host: send a Host header")
        }
        _ => None,
    }
}

/// What every request of a service passes before its route: a request that
/// names its host wrongly ([`host_problem`]) or has a NUL byte in its URI is
/// a 400 ([`screen`]); others go on to `next`. The answer to a request with a
/// credential is kept from shared caches ([`credentials::keep_private`]).
pub(crate) async fn refuse_malformed<Answer: Future<Output = Response>>(
    request: Request,
    next: impl FnOnce(Request) -> Answer,
) -> Response {
    let mut screened = screen(&request);
    let response = match screened.refused.take() {
        Some(refused) => refused.into_response(),
        None => next(request).await,
    };
    screened.finish(response)
}

/// What [`screen`] found in a request before its route.
pub(crate) struct Screened {
    /// A 400 for a malformed request.
    pub(crate) refused: Option<Error>,
    /// Whether the request carries a credential, whose answer is kept from
    /// shared caches.
    private: bool,
}

impl Screened {
    /// The answer to the screened request, kept private if it must be.
    pub(crate) fn finish(&self, mut response: Response) -> Response {
        if self.private {
            credentials::keep_private(&mut response);
        }
        response
    }
}

/// Screens a request before its route ([`refuse_malformed`]): a wrong host
/// ([`host_problem`]) is refused before anything else is read; a path or
/// query with a NUL byte (`%00`) is refused before any handler reads it
/// (neither database can store the byte in text).
pub(crate) fn screen(request: &Request) -> Screened {
    if let Some(problem) = host_problem(request) {
        return Screened {
            refused: Some(Error::bad_request(problem)),
            private: false,
        };
    }
    let uri = request.uri();
    let has_nul = |text: &str| {
        text.as_bytes()
            .windows(3)
            .any(|w| w[0] == b'%' && w[1] == b'0' && w[2] == b'0')
    };
    let nul = has_nul(uri.path()) || uri.query().is_some_and(has_nul);
    Screened {
        refused: nul.then(|| Error::bad_request(crate::http::strict_json::NUL_MESSAGE)),
        private: credentials::carries_credential(request.headers()),
    }
}

/// Whether a script of a web page sent the request: browsers mark fetch and
/// XHR requests with a `Sec-Fetch-Mode` other than `navigate`, and libraries
/// add `X-Requested-With: XMLHttpRequest`. A `Basic` challenge in a 401 to
/// such a request makes the browser ask for a password in a dialog of its
/// own, over the page, and hold the request until it is answered (Swagger
/// UI's "Try it out" and Authorize would hang there); answers to them leave
/// that challenge out.
pub(crate) fn sent_by_a_script(headers: &HeaderMap) -> bool {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    header("sec-fetch-mode").is_some_and(|mode| !mode.eq_ignore_ascii_case("navigate"))
        || header("x-requested-with").is_some_and(|v| v.eq_ignore_ascii_case("xmlhttprequest"))
}

/// The media type of the request body (`Content-Type` without parameters),
/// if it is a readable one.
pub(crate) fn media_type(headers: &HeaderMap) -> Option<mime::Mime> {
    headers
        .get(header::CONTENT_TYPE)?
        .to_str()
        .ok()?
        .parse()
        .ok()
}

/// Whether the request body is of this media type (`type/subtype`).
pub(crate) fn has_media_type(headers: &HeaderMap, essence: &str) -> bool {
    media_type(headers).is_some_and(|m| m.essence_str() == essence)
}

/// The fields of a form (`application/x-www-form-urlencoded`) or query
/// whose names are `known`, each at most once (OAuth's rules, RFC 6749
/// section 3.1: a parameter is not repeated, an unknown one is ignored):
/// the name of a repeated one is the error.
pub(crate) fn single_fields(
    encoded: &[u8],
    known: &[&str],
) -> Result<Vec<(String, String)>, String> {
    let fields: Vec<(String, String)> = form_urlencoded::parse(encoded)
        .filter(|(name, _)| known.contains(&name.as_ref()))
        .map(|(name, value)| (name.into_owned(), value.into_owned()))
        .collect();
    for (i, (name, _)) in fields.iter().enumerate() {
        if fields[..i].iter().any(|(earlier, _)| earlier == name) {
            return Err(name.clone());
        }
    }
    Ok(fields)
}

/// A field of [`single_fields`], if given and not empty (OAuth counts an
/// empty one as absent).
pub(crate) fn field<'f>(fields: &'f [(String, String)], name: &str) -> Option<&'f str> {
    fields
        .iter()
        .find(|(field, _)| field == name)
        .map(|(_, value)| value.as_str())
        .filter(|value| !value.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Sample {
        #[serde(default)]
        status: Vec<String>,
        #[serde(default, deserialize_with = "keep_empty")]
        name: Option<String>,
        other: Option<String>,
        #[serde(default, deserialize_with = "keep_empty")]
        day: Option<chrono::NaiveDate>,
        #[serde(default, deserialize_with = "keep_empty")]
        tags: Option<Vec<String>>,
    }

    fn read(query: &str) -> Result<Sample, serde_html_form::de::Error> {
        serde_html_form::from_str(query)
    }

    #[test]
    fn repeated_keys_are_lists_and_empty_values_are_kept_where_asked() {
        let sample = read("status=a&status=b&name=&other=").ok();
        assert_eq!(
            sample,
            Some(Sample {
                status: vec!["a".into(), "b".into()],
                name: Some(String::new()),
                other: None,
                day: None,
                tags: None,
            })
        );
        assert!(read("day=").is_err(), "an empty date is not a date");
        assert_eq!(
            read("tags=").ok().and_then(|s| s.tags),
            Some(vec![String::new()]),
            "an empty value of a list is there"
        );
        assert_eq!(
            read("status=").ok().map(|s| s.status),
            Some(vec![String::new()])
        );
        assert_eq!(
            read("").ok(),
            Some(Sample {
                status: vec![],
                name: None,
                other: None,
                day: None,
                tags: None,
            })
        );
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod forwarded_tests {
    use super::*;

    fn headers(forwarded: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in forwarded {
            headers.append("x-forwarded-for", value.parse().unwrap());
        }
        headers
    }

    #[test]
    fn the_client_is_the_last_hop_that_is_not_a_trusted_proxy() {
        let trusted =
            parse_trusted_proxies(&["10.0.0.0/8".to_owned(), "127.0.0.1".to_owned()]).unwrap();
        let proxy: IpAddr = "127.0.0.1".parse().unwrap();
        let ip = |text: &str| Some(text.parse::<IpAddr>().unwrap());
        // A client's own claim at the start does not count.
        assert_eq!(
            forwarded_client(
                proxy,
                &headers(&["1.1.1.1, 203.0.113.7, 10.1.2.3"]),
                &trusted
            ),
            ip("203.0.113.7")
        );
        // Several headers are one list.
        assert_eq!(
            forwarded_client(proxy, &headers(&["1.1.1.1", "203.0.113.7"]), &trusted),
            ip("203.0.113.7")
        );
        assert_eq!(
            forwarded_client(proxy, &headers(&["10.9.9.9"]), &trusted),
            ip("10.9.9.9")
        );
        assert_eq!(
            forwarded_client(proxy, &headers(&["garbage"]), &trusted),
            None
        );
        assert_eq!(forwarded_client(proxy, &HeaderMap::new(), &trusted), None);
        // Not from a trusted proxy: the header is the client's own word.
        let stranger: IpAddr = "198.51.100.1".parse().unwrap();
        assert_eq!(
            forwarded_client(stranger, &headers(&["203.0.113.7"]), &trusted),
            None
        );
        assert!(parse_trusted_proxies(&["10.0.0.0/33".to_owned()]).is_err());
    }
}
