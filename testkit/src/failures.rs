//! Failures on demand: the next calls of one operation answered with an
//! error of your choice, in the service's error format, before the server
//! does anything with them (nothing is written, nothing is sent).

use std::time::Duration;

use http::{Method, StatusCode};
use petstore_portfolio_client::{OperationRoute, contract, petstore, portfolio};

use crate::TestServer;

impl TestServer {
    /// The next `times` calls of `operation` fail with `status` (a 4xx or
    /// 5xx). `operation` is the client's method (`get_pet_by_id`) or the
    /// document's operationId (`getPetById`). Planned again, the new plan
    /// replaces what was left of the old.
    ///
    /// The SDK retries `429`, `502`, `503` and `504` (three attempts in
    /// all by default), so `fail_next(op, 2, 503)` is a call that succeeds
    /// on its third attempt, and `fail_next(op, 3, 503)` one that fails.
    ///
    /// # Panics
    /// For an operation neither service has, or a status that is not an
    /// error: the message lists what is allowed.
    pub fn fail_next(&self, operation: &str, times: u32, status: u16) {
        self.plan(operation, times, status, None);
    }

    /// Like [`fail_next`](Self::fail_next), each answer with
    /// `Retry-After` (whole seconds; the SDK waits that long before its
    /// next attempt).
    pub fn fail_next_with_retry_after(
        &self,
        operation: &str,
        times: u32,
        status: u16,
        retry_after: Duration,
    ) {
        self.plan(operation, times, status, Some(retry_after));
    }

    /// How many of the failures planned for `operation` are still to come.
    ///
    /// # Panics
    /// For an operation neither service has.
    pub fn failures_left(&self, operation: &str) -> u32 {
        let route = route_of(operation);
        self.failures.remaining(&method_of(route), route.template)
    }

    fn plan(&self, operation: &str, times: u32, status: u16, retry_after: Option<Duration>) {
        let route = route_of(operation);
        let planned = StatusCode::from_u16(status)
            .map_err(|e| e.to_string())
            .and_then(|status| {
                self.failures
                    .fail_next(method_of(route), route.template, times, status, retry_after)
                    .map_err(|e| e.to_string())
            });
        if let Err(e) = planned {
            panic!("cannot make {operation} fail with {status}: {e}");
        }
    }
}

/// Every operation of both services, as the SDK's generated code lists them.
fn routes() -> impl Iterator<Item = &'static OperationRoute> {
    petstore::OPERATION_ROUTES
        .iter()
        .chain(portfolio::OPERATION_ROUTES)
}

/// The route of `operation`, named in snake case or as its operationId.
///
/// # Panics
/// For an operation neither service has (see [`find_route`]).
fn route_of(operation: &str) -> &'static OperationRoute {
    find_route(operation).unwrap_or_else(|unknown| panic!("{unknown}"))
}

/// The route of `operation`, or a message that names the known ones.
fn find_route(operation: &str) -> Result<&'static OperationRoute, String> {
    let wanted = contract::method_name(operation);
    routes()
        .find(|route| route.operation == wanted)
        .ok_or_else(|| {
            let known: Vec<&str> = routes().map(|route| route.operation).collect();
            format!(
                "no operation {operation:?} in the pet store or the portfolio; \
             the operations are: {}",
                known.join(", ")
            )
        })
}

fn method_of(route: &OperationRoute) -> Method {
    Method::from_bytes(route.method.as_bytes()).unwrap_or(Method::GET)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn an_operation_is_found_by_either_name() {
        assert_eq!(route_of("getPetById").template, "/v2/pet/{petId}");
        assert_eq!(route_of("get_pet_by_id").method, "GET");
        assert_eq!(
            route_of("listOauthClients").template,
            "/api/admin/oauth-clients"
        );
    }

    #[test]
    fn an_unknown_operation_is_named_with_the_known_ones() {
        let unknown = find_route("getPetByName").unwrap_err();
        assert!(
            unknown.starts_with("no operation \"getPetByName\""),
            "{unknown}"
        );
        assert!(unknown.contains("get_pet_by_id, "), "{unknown}");
    }
}
