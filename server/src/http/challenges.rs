//! `WWW-Authenticate` challenges (RFC 9110 section 11.6.1), written one way
//! for both services: `Bearer` (with RFC 6750's `error`, `error_description`
//! and `scope` when a token was refused), `Basic` and `ApiKey` (ours: which
//! header carries the key). A script of a web page gets no `Basic`
//! challenge: the browser would answer it with a password dialog of its own
//! and hold the request, so the page (Swagger UI's "Try it out" and
//! Authorize) would never see the error ([`crate::http::extract::sent_by_a_script`]).

use axum::http::{HeaderMap, HeaderValue, header};

use crate::http::error::Error;
use crate::http::extract::sent_by_a_script;

/// One challenge.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Challenge<'a> {
    Bearer {
        realm: &'a str,
        /// RFC 6750's `error` (`invalid_token`, `insufficient_scope`...).
        error: Option<&'a str>,
        /// RFC 6750's `error_description`.
        description: Option<&'a str>,
        /// The scope the token lacked (`insufficient_scope`).
        scope: Option<&'a str>,
    },
    Basic {
        realm: &'a str,
    },
    ApiKey {
        realm: &'a str,
        header: &'a str,
    },
}

impl Challenge<'_> {
    /// A bare `Bearer realm="..."`.
    pub(crate) fn bearer(realm: &str) -> Challenge<'_> {
        Challenge::Bearer {
            realm,
            error: None,
            description: None,
            scope: None,
        }
    }

    fn value(&self) -> Option<HeaderValue> {
        // A quoted string may not hold a quote of its own.
        let quoted = |text: &str| text.replace('"', "'");
        let text = match self {
            Challenge::Bearer {
                realm,
                error,
                description,
                scope,
            } => {
                let mut text = format!("Bearer realm=\"{realm}\"");
                if let Some(code) = error {
                    text.push_str(&format!(", error=\"{code}\""));
                }
                if let Some(description) = description {
                    text.push_str(&format!(", error_description=\"{}\"", quoted(description)));
                }
                if let Some(scope) = scope {
                    text.push_str(&format!(", scope=\"{scope}\""));
                }
                text
            }
            Challenge::Basic { realm } => format!("Basic realm=\"{realm}\""),
            Challenge::ApiKey { realm, header } => {
                format!("ApiKey realm=\"{realm}\", header=\"{header}\"")
            }
        };
        HeaderValue::from_str(&text).ok()
    }
}

/// `error` with a `WWW-Authenticate` header for each of `challenges`, but
/// `Basic` to a script of a web page (`request` is the request's headers).
pub(crate) fn challenge(
    mut error: Error,
    challenges: &[Challenge<'_>],
    request: &HeaderMap,
) -> Error {
    for value in values(challenges, request) {
        error = error.with_header(header::WWW_AUTHENTICATE, value);
    }
    error
}

/// The `WWW-Authenticate` values `challenge` would add, for answers that
/// are not an [`Error`] (the OAuth endpoints' own bodies).
pub(crate) fn values(challenges: &[Challenge<'_>], request: &HeaderMap) -> Vec<HeaderValue> {
    let script = sent_by_a_script(request);
    challenges
        .iter()
        .filter(|c| !(matches!(c, Challenge::Basic { .. }) && script))
        .filter_map(Challenge::value)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_scheme_reads_as_its_rfc_says() {
        let values = values(
            &[
                Challenge::Bearer {
                    realm: "r",
                    error: Some("invalid_token"),
                    description: Some("the \"token\" is bad"),
                    scope: None,
                },
                Challenge::Bearer {
                    realm: "r",
                    error: Some("insufficient_scope"),
                    description: None,
                    scope: Some("admin"),
                },
                Challenge::Basic { realm: "r" },
                Challenge::ApiKey {
                    realm: "r",
                    header: "X-API-Key",
                },
            ],
            &HeaderMap::new(),
        );
        assert_eq!(
            values,
            [
                "Bearer realm=\"r\", error=\"invalid_token\", error_description=\"the 'token' is bad\"",
                "Bearer realm=\"r\", error=\"insufficient_scope\", scope=\"admin\"",
                "Basic realm=\"r\"",
                "ApiKey realm=\"r\", header=\"X-API-Key\"",
            ]
        );
    }

    #[test]
    fn a_script_gets_no_basic_challenge() {
        let mut script = HeaderMap::new();
        script.insert("sec-fetch-mode", HeaderValue::from_static("cors"));
        let values = values(
            &[Challenge::Basic { realm: "r" }, Challenge::bearer("r")],
            &script,
        );
        assert_eq!(values, ["Bearer realm=\"r\""]);
    }
}
