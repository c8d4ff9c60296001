//! CORS for every answer: tower-http's `CorsLayer`, which answers
//! preflights and says which origins may read an answer, set from
//! `http.cors_allowed_origins`.

use tower_http::cors::{AllowOrigin, Any, CorsLayer};

/// CORS allowing any method and header, from `origins` (`*` for all; an
/// origin that is not a valid header value is left out).
pub(crate) fn layer(origins: &[String]) -> CorsLayer {
    let cors = CorsLayer::new().allow_methods(Any).allow_headers(Any);
    if origins.iter().any(|origin| origin == "*") {
        return cors.allow_origin(Any);
    }
    let origins = origins
        .iter()
        .filter_map(|origin| origin.parse().ok())
        .collect::<Vec<_>>();
    cors.allow_origin(AllowOrigin::list(origins))
}

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use axum::http::{HeaderMap, Method, Request, Response, header};
    use tower::{Layer as _, ServiceExt as _};

    use super::*;

    async fn answer_headers(origins: &[&str], method: Method, origin: &str) -> HeaderMap {
        let origins: Vec<String> = origins.iter().map(|o| (*o).to_owned()).collect();
        let service = layer(&origins).layer(tower::service_fn(|_: Request<Body>| async {
            Ok::<_, std::convert::Infallible>(Response::new(Body::empty()))
        }));
        let mut request = Request::builder()
            .method(method)
            .header(header::ORIGIN, origin);
        if request.method_ref() == Some(&Method::OPTIONS) {
            request = request.header(header::ACCESS_CONTROL_REQUEST_METHOD, "POST");
        }
        let response = service
            .oneshot(request.body(Body::empty()).unwrap())
            .await
            .unwrap();
        response.headers().clone()
    }

    #[tokio::test]
    async fn any_origin_or_the_listed_ones_may_read_answers() {
        let any = answer_headers(&["*"], Method::GET, "https://elsewhere.example").await;
        assert_eq!(any[header::ACCESS_CONTROL_ALLOW_ORIGIN], "*");
        let listed = ["https://site.example"];
        let allowed = answer_headers(&listed, Method::GET, "https://site.example").await;
        assert_eq!(
            allowed[header::ACCESS_CONTROL_ALLOW_ORIGIN],
            "https://site.example"
        );
        let other = answer_headers(&listed, Method::GET, "https://elsewhere.example").await;
        assert!(!other.contains_key(header::ACCESS_CONTROL_ALLOW_ORIGIN));
        let preflight = answer_headers(&listed, Method::OPTIONS, "https://site.example").await;
        assert!(preflight.contains_key(header::ACCESS_CONTROL_ALLOW_METHODS));
    }
}
