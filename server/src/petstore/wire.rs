//! How the pet store speaks HTTP: content negotiation (JSON or XML out; JSON,
//! XML or form in), its error type rendered as `ApiResponse`, and extractors
//! whose rejections are `ApiResponse`s instead of axum's plain text.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header, request::Parts};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde::de::DeserializeOwned;
use utoipa::ToSchema;

use crate::error::ErrorCode;

/// The answer to every request that did not succeed, and some that did
/// (uploadFile). In errors, `code` is the HTTP status and `type` the
/// upper-case error code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, ToSchema)]
#[schema(xml(name = "apiResponse"))]
#[serde(rename = "apiResponse")]
pub struct ApiResponse {
    #[schema(nullable = false)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<i32>,
    #[schema(nullable = false)]
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[schema(nullable = false)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// A pet store error: an error code and a message for the client.
#[derive(Debug)]
pub struct ApiError {
    code: ErrorCode,
    message: String,
}

impl ApiError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::BadRequest, message)
    }

    pub fn validation(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::ValidationFailed, message)
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::NotFound, message)
    }

    pub fn conflict(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Conflict, message)
    }

    /// Logs the cause (inside the request's span, so with its request id) and
    /// tells the client only that something went wrong.
    pub fn internal(context: &str, cause: impl std::fmt::Display) -> Self {
        tracing::error!(error = %cause, "{context}");
        Self::new(
            ErrorCode::InternalError,
            "internal error; the server log has the details",
        )
    }

    pub fn code(&self) -> ErrorCode {
        self.code
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    fn body(&self) -> ApiResponse {
        ApiResponse {
            code: Some(i32::from(self.code.status().as_u16())),
            kind: Some(self.code.as_str().to_owned()),
            message: Some(self.message.clone()),
        }
    }
}

/// For bodies whose wire shape is the type itself.
impl From<std::convert::Infallible> for ApiError {
    fn from(never: std::convert::Infallible) -> Self {
        match never {}
    }
}

impl From<sqlx::Error> for ApiError {
    fn from(err: sqlx::Error) -> Self {
        ApiError::internal("database error", err)
    }
}

impl IntoResponse for ApiError {
    /// Renders JSON and leaves the `ApiResponse` in the response's extensions,
    /// so that [`render_errors`] can re-render it as XML when the client asked.
    fn into_response(self) -> Response {
        let body = self.body();
        let mut response = (self.code.status(), axum::Json(&body)).into_response();
        response.extensions_mut().insert(body);
        response
    }
}

/// The response formats the pet store speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    Xml,
}

impl Format {
    /// Picks the format from an `Accept` header: the acceptable media type with
    /// the highest q-value (JSON wins ties and `*/*`); `None` when the client
    /// accepts neither.
    pub fn negotiate(headers: &HeaderMap) -> Option<Format> {
        let (json_q, xml_q) = accept_weights(headers);
        if json_q <= 0.0 && xml_q <= 0.0 {
            None
        } else if xml_q > json_q {
            Some(Format::Xml)
        } else {
            Some(Format::Json)
        }
    }
}

/// The q-values an `Accept` header gives JSON and XML. No header (or an
/// unreadable one) accepts anything, which means JSON.
fn accept_weights(headers: &HeaderMap) -> (f32, f32) {
    let accept = match headers.get(header::ACCEPT).map(|v| v.to_str()) {
        Some(Ok(accept)) if !accept.trim().is_empty() => accept,
        _ => return (1.0, 0.0),
    };
    let mut json_q = 0.0_f32;
    let mut xml_q = 0.0_f32;
    for range in accept.split(',') {
        let mut parts = range.split(';');
        let media = parts.next().unwrap_or("").trim().to_ascii_lowercase();
        let q = parts
            .filter_map(|p| p.trim().strip_prefix("q="))
            .find_map(|q| q.trim().parse::<f32>().ok())
            .unwrap_or(1.0)
            .clamp(0.0, 1.0);
        match media.as_str() {
            "application/json" => json_q = json_q.max(q),
            "application/xml" | "text/xml" => xml_q = xml_q.max(q),
            "*/*" | "application/*" => json_q = json_q.max(q),
            "text/*" => xml_q = xml_q.max(q),
            _ => {}
        }
    }
    (json_q, xml_q)
}

/// For operations that answer only in JSON: rejects with 406 when the
/// client does not accept JSON.
#[derive(Debug, Clone, Copy)]
pub struct JsonOnly;

impl<S: Send + Sync> FromRequestParts<S> for JsonOnly {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        if accept_weights(&parts.headers).0 > 0.0 {
            Ok(JsonOnly)
        } else {
            Err(ApiError::new(
                ErrorCode::NotAcceptable,
                "this operation answers in application/json",
            ))
        }
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Format {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        Format::negotiate(&parts.headers).ok_or_else(not_acceptable)
    }
}

fn not_acceptable() -> ApiError {
    ApiError::new(
        ErrorCode::NotAcceptable,
        "this operation answers in application/json or application/xml",
    )
}

/// Types the pet store can write as XML. Each has its own XML shape (wrapped
/// lists, singular item names) and so its own XML struct.
pub trait ToXml {
    fn to_xml(&self) -> Result<String, quick_xml::SeError>;
}

/// Serialises a value whose serde shape already is the XML shape.
pub fn xml_document<T: Serialize>(value: &T) -> Result<String, quick_xml::SeError> {
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>");
    let mut serializer = quick_xml::se::Serializer::new(&mut xml);
    serializer.expand_empty_elements(false);
    value.serialize(serializer)?;
    Ok(xml)
}

impl ToXml for ApiResponse {
    fn to_xml(&self) -> Result<String, quick_xml::SeError> {
        xml_document(self)
    }
}

/// A successful answer in the negotiated format.
#[derive(Debug)]
pub struct Reply<T> {
    pub format: Format,
    pub body: T,
    pub headers: HeaderMap,
}

impl<T> Reply<T> {
    pub fn new(format: Format, body: T) -> Self {
        Self {
            format,
            body,
            headers: HeaderMap::new(),
        }
    }

    pub fn with_header(mut self, name: header::HeaderName, value: HeaderValue) -> Self {
        self.headers.insert(name, value);
        self
    }
}

impl<T: Serialize + ToXml> IntoResponse for Reply<T> {
    fn into_response(self) -> Response {
        let mut response = match self.format {
            Format::Json => axum::Json(&self.body).into_response(),
            Format::Xml => match self.body.to_xml() {
                Ok(xml) => ([(header::CONTENT_TYPE, "application/xml")], xml).into_response(),
                Err(err) => ApiError::internal("cannot write XML", err).into_response(),
            },
        };
        response.headers_mut().extend(self.headers);
        response
    }
}

/// The request body media types the pet store reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyFormat {
    Json,
    Xml,
    Form,
}

impl BodyFormat {
    fn of(headers: &HeaderMap) -> Option<BodyFormat> {
        let content_type = headers.get(header::CONTENT_TYPE)?.to_str().ok()?;
        let mime: mime::Mime = content_type.parse().ok()?;
        match (mime.type_(), mime.subtype().as_str()) {
            (mime::APPLICATION, "json") => Some(BodyFormat::Json),
            (mime::APPLICATION, "xml") | (mime::TEXT, "xml") => Some(BodyFormat::Xml),
            (mime::APPLICATION, "x-www-form-urlencoded") => Some(BodyFormat::Form),
            _ => None,
        }
    }

    fn media_type(self) -> &'static str {
        match self {
            BodyFormat::Json => "application/json",
            BodyFormat::Xml => "application/xml",
            BodyFormat::Form => "application/x-www-form-urlencoded",
        }
    }
}

/// A request body type: how it is read in each media type it accepts, and the
/// rules it must keep once read.
pub trait WireBody: Sized {
    /// The media types this body may come in, in the order the document lists them.
    const FORMATS: &'static [BodyFormat];

    fn from_json(bytes: &[u8]) -> Result<Self, ApiError>;

    fn from_xml(_text: &str) -> Result<Self, ApiError> {
        Err(unsupported_body(Self::FORMATS))
    }

    fn from_form(_bytes: &[u8]) -> Result<Self, ApiError> {
        Err(unsupported_body(Self::FORMATS))
    }

    /// Rules beyond the types (lengths, minimums): a 422 names the first broken one.
    fn validate(&self) -> Result<(), ApiError> {
        Ok(())
    }
}

fn unsupported_body(formats: &[BodyFormat]) -> ApiError {
    let accepted: Vec<&str> = formats.iter().map(|f| f.media_type()).collect();
    ApiError::new(
        ErrorCode::UnsupportedMediaType,
        format!("the request body must be one of: {}", accepted.join(", ")),
    )
}

/// Reads JSON as strictly as the schemas are written (see [`crate::strict_json`]).
pub fn parse_json<T: DeserializeOwned + Serialize>(bytes: &[u8]) -> Result<T, ApiError> {
    crate::strict_json::parse(bytes)
        .map_err(|e| ApiError::bad_request(format!("invalid JSON body: {e}")))
}

/// Reads XML into `X` (the XML shape of the type), then converts it.
pub fn parse_xml<X: DeserializeOwned, T: TryFrom<X, Error: Into<ApiError>>>(
    text: &str,
) -> Result<T, ApiError> {
    let shape: X = quick_xml::de::from_str(text)
        .map_err(|e| ApiError::bad_request(format!("invalid XML body: {e}")))?;
    T::try_from(shape).map_err(Into::into)
}

/// Reads a form (repeated keys make lists), then converts it.
pub fn parse_form<F: DeserializeOwned, T: TryFrom<F, Error: Into<ApiError>>>(
    bytes: &[u8],
) -> Result<T, ApiError> {
    let form: F = serde_html_form::from_bytes(bytes)
        .map_err(|e| ApiError::bad_request(format!("invalid form body: {e}")))?;
    T::try_from(form).map_err(Into::into)
}

/// A request body in any of the media types its type accepts, read and validated.
#[derive(Debug)]
pub struct Body<T>(pub T);

impl<S: Send + Sync, T: WireBody> FromRequest<S> for Body<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let format = BodyFormat::of(req.headers())
            .filter(|f| T::FORMATS.contains(f))
            .ok_or_else(|| unsupported_body(T::FORMATS))?;
        let bytes = Bytes::from_request(req, state)
            .await
            .map_err(body_rejection)?;
        if bytes.is_empty() {
            return Err(ApiError::bad_request("the request body is empty"));
        }
        let value = match format {
            BodyFormat::Json => T::from_json(&bytes)?,
            BodyFormat::Xml => {
                let text = std::str::from_utf8(&bytes)
                    .map_err(|_| ApiError::bad_request("the XML body is not UTF-8"))?;
                T::from_xml(text)?
            }
            BodyFormat::Form => T::from_form(&bytes)?,
        };
        value.validate()?;
        Ok(Body(value))
    }
}

/// Maps a failure to read the body: over the limit is 413, anything else 400.
pub fn body_rejection(rejection: BytesRejection) -> ApiError {
    if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
        ApiError::new(ErrorCode::PayloadTooLarge, "the request body is too large")
    } else {
        ApiError::bad_request(format!(
            "cannot read the request body: {}",
            rejection.body_text()
        ))
    }
}

/// Path parameters, with the pet store's error on a bad value.
#[derive(Debug)]
pub struct PathParams<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for PathParams<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Path(value)| PathParams(value))
            .map_err(|rejection| ApiError::bad_request(rejection.body_text()))
    }
}

/// Query parameters read with repeated keys as lists (`?status=a&status=b`).
#[derive(Debug)]
pub struct QueryParams<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for QueryParams<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let query = parts.uri.query().unwrap_or("");
        serde_html_form::from_str(query)
            .map(QueryParams)
            .map_err(|e| ApiError::bad_request(format!("invalid query string: {e}")))
    }
}

/// The largest id a client may choose: the largest integer JavaScript
/// represents exactly, so that no client loses precision, and far enough
/// from `i64::MAX` that the server's own id sequence never runs out.
pub const MAX_CLIENT_ID: i64 = 9_007_199_254_740_991;

/// Checks an id a client put in a body: absent or 0 (the server chooses),
/// or positive up to [`MAX_CLIENT_ID`].
pub fn check_client_id(id: Option<i64>) -> Result<(), ApiError> {
    match id {
        Some(id) if id < 0 => Err(ApiError::validation(
            "id must be positive (or 0 or absent to let the server choose one)",
        )),
        Some(id) if id > MAX_CLIENT_ID => Err(ApiError::validation(format!(
            "id must be at most {MAX_CLIENT_ID}"
        ))),
        _ => Ok(()),
    }
}

/// All values of a query parameter, repeated (`?k=a&k=b`) or not; `None`
/// when the parameter is absent. Empty values are kept: `?k=` is `[""]`.
pub fn query_values(query: Option<&str>, key: &str) -> Option<Vec<String>> {
    let values: Vec<String> = form_urlencoded::parse(query.unwrap_or("").as_bytes())
        .filter(|(k, _)| k == key)
        .map(|(_, v)| v.into_owned())
        .collect();
    (!values.is_empty()).then_some(values)
}

/// Checks that an id taken from a path is a positive number.
pub fn positive_id(what: &str, id: i64) -> Result<i64, ApiError> {
    if id > 0 {
        Ok(id)
    } else {
        Err(ApiError::bad_request(format!(
            "{what} must be a positive integer, not {id}"
        )))
    }
}

/// Middleware over the whole pet store: every error leaves as an
/// `ApiResponse` in the negotiated format, including the ones axum produces by
/// itself (unknown route, wrong method, body limits).
pub async fn render_errors(request: Request, next: Next) -> Response {
    let format = Format::negotiate(request.headers()).unwrap_or(Format::Json);
    let response = next.run(request).await;
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    // Left in the extensions: an outer layer that renders errors too must see it.
    let api_response = match parts.extensions.get::<ApiResponse>().cloned() {
        // Already rendered as JSON by ApiError.
        Some(_) if format == Format::Json => return Response::from_parts(parts, body),
        Some(api_response) => api_response,
        None => {
            let (code, message) = ErrorCode::for_status(status);
            ApiResponse {
                code: Some(i32::from(status.as_u16())),
                kind: Some(code.as_str().to_owned()),
                message: Some(message.to_owned()),
            }
        }
    };
    let (content_type, text) = match format {
        Format::Xml => match api_response.to_xml() {
            Ok(xml) => ("application/xml", xml),
            Err(_) => ("application/json", json_text(&api_response)),
        },
        Format::Json => ("application/json", json_text(&api_response)),
    };
    parts.extensions.insert(api_response);
    parts.headers.remove(header::CONTENT_LENGTH);
    parts
        .headers
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    Response::from_parts(parts, axum::body::Body::from(text))
}

fn json_text(value: &ApiResponse) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| String::from("{}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accept(value: &str) -> Option<Format> {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::ACCEPT,
            HeaderValue::from_str(value).unwrap_or(HeaderValue::from_static("")),
        );
        Format::negotiate(&headers)
    }

    /// Errors produced outside the handlers (here a bare 503, as the timeout
    /// layer answers) leave as ApiResponses in the negotiated format.
    #[tokio::test]
    async fn bare_error_statuses_become_api_responses() {
        use tower::ServiceExt as _;
        let app = axum::Router::new()
            .route(
                "/slow",
                axum::routing::get(|| async { StatusCode::SERVICE_UNAVAILABLE }),
            )
            .layer(axum::middleware::from_fn(render_errors));
        for (accept, content_type, needle) in [
            (
                "application/json",
                "application/json",
                "\"type\":\"SERVICE_UNAVAILABLE\"",
            ),
            (
                "application/xml",
                "application/xml",
                "<type>SERVICE_UNAVAILABLE</type>",
            ),
        ] {
            let request = Request::builder()
                .uri("/slow")
                .header(header::ACCEPT, accept)
                .body(axum::body::Body::empty())
                .unwrap_or_default();
            let response = app
                .clone()
                .oneshot(request)
                .await
                .unwrap_or_else(|e| match e {});
            assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
            assert_eq!(
                response
                    .headers()
                    .get(header::CONTENT_TYPE)
                    .and_then(|v| v.to_str().ok()),
                Some(content_type)
            );
            let body = axum::body::to_bytes(response.into_body(), 1 << 16)
                .await
                .unwrap_or_default();
            let text = String::from_utf8_lossy(&body);
            assert!(text.contains(needle), "{text}");
        }
    }

    #[test]
    fn negotiation_honours_q_values() {
        assert_eq!(Format::negotiate(&HeaderMap::new()), Some(Format::Json));
        assert_eq!(accept("application/xml"), Some(Format::Xml));
        assert_eq!(
            accept("application/json;q=0.5, application/xml"),
            Some(Format::Xml)
        );
        assert_eq!(
            accept("application/xml;q=0.4, */*;q=0.5"),
            Some(Format::Json)
        );
        assert_eq!(
            accept("text/html, application/xml;q=0.9"),
            Some(Format::Xml)
        );
        assert_eq!(accept("*/*"), Some(Format::Json));
        assert_eq!(accept("text/html"), None);
        assert_eq!(accept("application/json;q=0"), None);
    }
}
