//! Which contract the server speaks, against the one a client was generated
//! from: `client.check_contract().await`.
//!
//! A client carries the version of its document and the SHA-256 of the
//! client profile it was generated from; the server serves that profile
//! with the same digest as its `ETag`. The same digest: the same contract.
//! Otherwise the served profile is read: if it serves every operation the
//! client knows at the same method and route, the server is compatible
//! (newer, with what it added named); if not, incompatible, naming what the
//! client would call in vain. (Compatible is about operations: a changed
//! schema within one shows up as the version and digest differing.)

use std::collections::BTreeSet;

use serde_json::Value;

use crate::OperationRoute;
use crate::error::{ApiError, Error};

/// What the server speaks, against what the client was generated from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContractCheck {
    /// The very profile the client was generated from.
    Same { version: String },
    /// Another profile that serves every operation the client knows:
    /// `added`, the operations the client does not know.
    Compatible {
        client_version: String,
        server_version: String,
        added: Vec<String>,
    },
    /// The server does not serve some operations the client knows, as it
    /// knows them (`missing`: `operation (METHOD /route)`).
    Incompatible {
        client_version: String,
        server_version: String,
        missing: Vec<String>,
        added: Vec<String>,
    },
}

/// What a generated client knows of its contract.
#[derive(Debug, Clone, Copy)]
pub struct Contract {
    /// Where the server serves the profile (`/openapi/petstore.client.json`).
    pub profile_path: &'static str,
    /// The SHA-256 of the profile's text, in lower-case hex.
    pub profile_digest: &'static str,
    /// The document's `info.version`.
    pub version: &'static str,
    pub routes: &'static [OperationRoute],
}

/// Fetches the profile the server at `root` serves and compares it with
/// `contract`.
pub async fn check(
    http: &reqwest::Client,
    root: &str,
    contract: Contract,
) -> Result<ContractCheck, Error> {
    const OPERATION: &str = "check_contract";
    let url = format!("{}{}", root.trim_end_matches('/'), contract.profile_path);
    let response = http
        .get(&url)
        .send()
        .await
        .map_err(|e| Error::transport(OPERATION, e))?;
    let status = response.status();
    let headers = response.headers().clone();
    let body = response
        .bytes()
        .await
        .map_err(|e| Error::transport(OPERATION, e))?;
    if !status.is_success() {
        return Err(Error::Api(ApiError::new(status, &headers, &body)));
    }
    let profile: Value = serde_json::from_slice(&body).map_err(|e| Error::Decode {
        status,
        message: format!("the served profile {url} is not JSON: {e}"),
    })?;
    let server_version = profile
        .pointer("/info/version")
        .and_then(Value::as_str)
        .unwrap_or("?")
        .to_owned();
    let etag = headers
        .get(reqwest::header::ETAG)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.trim_start_matches("W/").trim_matches('"').to_owned());
    if etag.as_deref() == Some(contract.profile_digest) {
        return Ok(ContractCheck::Same {
            version: server_version,
        });
    }
    let served = served_routes(&profile);
    let known: BTreeSet<(String, String, String)> = contract
        .routes
        .iter()
        .map(|r| {
            (
                r.operation.to_owned(),
                r.method.to_owned(),
                r.template.to_owned(),
            )
        })
        .collect();
    let name = |(operation, method, route): &(String, String, String)| {
        format!("{operation} ({method} {route})")
    };
    let missing: Vec<String> = known.difference(&served).map(name).collect();
    let added: Vec<String> = served.difference(&known).map(name).collect();
    let client_version = contract.version.to_owned();
    Ok(if missing.is_empty() {
        ContractCheck::Compatible {
            client_version,
            server_version,
            added,
        }
    } else {
        ContractCheck::Incompatible {
            client_version,
            server_version,
            missing,
            added,
        }
    })
}

/// Each operation of a profile: its id in snake case (the client's method),
/// its method and its route under the server's root.
fn served_routes(profile: &Value) -> BTreeSet<(String, String, String)> {
    let server = profile
        .pointer("/servers/0/url")
        .and_then(Value::as_str)
        .filter(|url| url.starts_with('/'))
        .unwrap_or("")
        .trim_end_matches('/');
    let mut routes = BTreeSet::new();
    let paths = profile.get("paths").and_then(Value::as_object);
    for (path, item) in paths.into_iter().flatten() {
        let Some(item) = item.as_object() else {
            continue;
        };
        for (method, operation) in item {
            if let Some(id) = operation.get("operationId").and_then(Value::as_str) {
                routes.insert((
                    method_name(id),
                    method.to_ascii_uppercase(),
                    format!("{server}{path}"),
                ));
            }
        }
    }
    routes
}

/// The client's method for an operationId: `getPetById` →
/// `get_pet_by_id`, as progenitor names them (a name in snake case stays).
pub fn method_name(id: &str) -> String {
    let mut snake = String::with_capacity(id.len() + 4);
    for c in id.chars() {
        if c.is_ascii_uppercase() {
            if !snake.is_empty() {
                snake.push('_');
            }
            snake.push(c.to_ascii_lowercase());
        } else {
            snake.push(c);
        }
    }
    snake
}
