//! How the pet store speaks HTTP: content negotiation (JSON or XML out; JSON,
//! XML or form in), its error body (`ApiResponse`, in the negotiated format),
//! and the extractor of its request bodies.

pub(crate) mod pet_xml;

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header, request::Parts};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde::de::DeserializeOwned;
use utoipa::ToSchema;

use crate::http::error::{Error, ErrorCode, ErrorFormat};

/// The answer to every request that did not succeed, and some that did
/// (uploadFile). In errors, `code` is the HTTP status and `type` the
/// upper-case error code.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, ToSchema)]
#[schema(xml(name = "apiResponse"))]
#[serde(rename = "apiResponse")]
pub(crate) struct ApiResponse {
    pub(crate) code: Option<i32>,
    #[serde(rename = "type")]
    pub(crate) kind: Option<String>,
    pub(crate) message: Option<String>,
}

/// The pet store's errors: an `ApiResponse` in the negotiated format, with
/// the HTTP status as `code` and the error code as `type`.
#[derive(Debug)]
pub(crate) struct PetstoreErrors;

impl ErrorFormat for PetstoreErrors {
    type Negotiated = Format;

    fn negotiate(request_headers: &HeaderMap) -> Format {
        Format::negotiate(request_headers).unwrap_or(Format::Json)
    }

    fn render(error: &Error, status: StatusCode, format: &Format) -> (&'static str, String) {
        let body = ApiResponse {
            code: Some(i32::from(status.as_u16())),
            kind: Some(error.code().as_str().to_owned()),
            message: Some(error.message().to_owned()),
        };
        let json = || serde_json::to_string(&body).unwrap_or_else(|_| String::from("{}"));
        match format {
            Format::Xml => match body.to_xml() {
                Ok(xml) => ("application/xml", xml),
                Err(_) => ("application/json", json()),
            },
            Format::Json => ("application/json", json()),
        }
    }
}

/// The response formats the pet store speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Format {
    Json,
    Xml,
}

impl Format {
    /// The `Content-Type` of an answer in this format.
    pub(crate) fn media_type(self) -> &'static str {
        match self {
            Format::Json => "application/json",
            Format::Xml => "application/xml",
        }
    }

    /// The `Content-Type` header of an answer in this format (a static
    /// value: no copy for each answer).
    pub(crate) fn content_type(self) -> HeaderValue {
        HeaderValue::from_static(self.media_type())
    }

    /// Picks the format from an `Accept` header: the acceptable media type with
    /// the highest q-value (JSON wins ties and `*/*`); `None` when the client
    /// accepts neither.
    pub(crate) fn negotiate(headers: &HeaderMap) -> Option<Format> {
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
    // What nearly every client sends, told without parsing the general
    // way below, which every request would otherwise pay for.
    match accept {
        "application/json" | "*/*" => return (1.0, 0.0),
        "application/xml" => return (0.0, 1.0),
        _ => {}
    }
    let mut json_q = 0.0_f32;
    let mut xml_q = 0.0_f32;
    for (media, q) in crate::http::accept::media_ranges(accept) {
        // Compared without case, without a lower-cased copy: every request
        // reads this header twice (its answer's format, its error's).
        let is = |name: &str| media.eq_ignore_ascii_case(name);
        if is("application/json") || is("*/*") || is("application/*") {
            json_q = json_q.max(q);
        } else if is("application/xml") || is("text/xml") || is("text/*") {
            xml_q = xml_q.max(q);
        }
    }
    (json_q, xml_q)
}

/// For operations that answer only in JSON: rejects with 406 when the
/// client does not accept JSON.
#[derive(Debug, Clone, Copy)]
pub(crate) struct JsonOnly;

impl<S: Send + Sync> FromRequestParts<S> for JsonOnly {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        if accept_weights(&parts.headers).0 > 0.0 {
            Ok(JsonOnly)
        } else {
            Err(not_acceptable(&parts.headers, "application/json"))
        }
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Format {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        Format::negotiate(&parts.headers)
            .ok_or_else(|| not_acceptable(&parts.headers, "application/json or application/xml"))
    }
}

/// 406, saying what the request's `Accept` asked for and what the
/// operation can answer in.
fn not_acceptable(headers: &HeaderMap, offered: &str) -> Error {
    let asked: String = headers
        .get(header::ACCEPT)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .unwrap_or_default()
        .chars()
        .filter(|c| !c.is_control())
        .take(100)
        .collect();
    Error::new(
        ErrorCode::NotAcceptable,
        format!("Accept: {asked} allows none of the formats this operation answers in ({offered})"),
    )
}

/// Types the pet store can write as XML. By default a type's serde shape is
/// its XML shape; a type with wrapped lists or singular item names (a pet)
/// writes its own XML struct instead.
pub(crate) trait ToXml: Serialize {
    fn to_xml(&self) -> Result<String, quick_xml::SeError> {
        xml_document(self)
    }
}

/// Serialises a value whose serde shape already is the XML shape.
pub(crate) fn xml_document<T: Serialize + ?Sized>(value: &T) -> Result<String, quick_xml::SeError> {
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>");
    let mut serializer = quick_xml::se::Serializer::new(&mut xml);
    serializer.expand_empty_elements(false);
    value.serialize(serializer)?;
    Ok(xml)
}

impl ToXml for ApiResponse {}

/// A successful answer in the negotiated format.
#[derive(Debug)]
pub(crate) struct Reply<T> {
    pub(crate) format: Format,
    pub(crate) body: T,
    pub(crate) headers: HeaderMap,
}

impl<T> Reply<T> {
    pub(crate) fn new(format: Format, body: T) -> Self {
        Self {
            format,
            body,
            headers: HeaderMap::new(),
        }
    }

    pub(crate) fn with_header(mut self, name: header::HeaderName, value: HeaderValue) -> Self {
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
                Err(err) => Error::internal("cannot write XML", err).into_response(),
            },
        };
        response.headers_mut().extend(self.headers);
        response
    }
}

/// `value` written in `format`, as [`Reply`] would send it.
pub(crate) fn to_bytes<T: Serialize + ToXml>(format: Format, value: &T) -> Result<Bytes, Error> {
    match format {
        Format::Json => serde_json::to_vec(value)
            .map(Bytes::from)
            .map_err(|err| Error::internal("cannot write JSON", err)),
        Format::Xml => value
            .to_xml()
            .map(Bytes::from)
            .map_err(|err| Error::internal("cannot write XML", err)),
    }
}

/// An answer of bytes already written in `format` ([`to_bytes`]).
pub(crate) fn bytes_response(format: Format, body: Bytes) -> Response {
    ([(header::CONTENT_TYPE, format.content_type())], body).into_response()
}

/// The request body media types the pet store reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BodyFormat {
    Json,
    Xml,
    Form,
}

impl BodyFormat {
    fn of(headers: &HeaderMap) -> Option<BodyFormat> {
        let mime = crate::http::extract::media_type(headers)?;
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
/// rules it must keep once read. By default the type's serde shape is its
/// shape in every format; a type with another XML or form shape reads that
/// shape and converts it.
pub(crate) trait WireBody: Sized + DeserializeOwned + Serialize {
    /// The media types this body may come in, in the order the document
    /// lists them; only their readers are called.
    const FORMATS: &'static [BodyFormat];

    fn from_json(bytes: &[u8]) -> Result<Self, Error> {
        crate::http::strict_json::parse(bytes)
    }

    fn from_xml(text: &str) -> Result<Self, Error> {
        parse_xml::<Self, Self>(text)
    }

    fn from_form(bytes: &[u8]) -> Result<Self, Error> {
        parse_form::<Self, Self>(bytes)
    }

    /// Rules beyond the types (lengths, minimums): a 422 names the first broken one.
    fn validate(&self) -> Result<(), Error> {
        Ok(())
    }
}

fn unsupported_body(formats: &[BodyFormat]) -> Error {
    let accepted: Vec<&str> = formats.iter().map(|f| f.media_type()).collect();
    Error::new(
        ErrorCode::UnsupportedMediaType,
        format!("the request body must be one of: {}", accepted.join(", ")),
    )
}

/// Reads XML into `X` (the XML shape of the type), then converts it.
pub(crate) fn parse_xml<X: DeserializeOwned + Into<T>, T>(text: &str) -> Result<T, Error> {
    let shape: X = quick_xml::de::from_str(text)
        .map_err(|e| Error::bad_request(format!("invalid XML body: {e}")))?;
    Ok(shape.into())
}

/// Reads a form (repeated keys make lists), then converts it.
pub(crate) fn parse_form<F: DeserializeOwned + Into<T>, T>(bytes: &[u8]) -> Result<T, Error> {
    let bytes = without_array_brackets(bytes);
    let form: F = serde_html_form::from_bytes(&bytes)
        .map_err(|e| Error::bad_request(format!("invalid form body: {e}")))?;
    Ok(form.into())
}

/// Form arrays as some generated clients send them, in bracket notation
/// (`photoUrls[0]=a&photoUrls[1]=b`, or `photoUrls[]=a`), as the documented
/// repeated fields (`photoUrls=a&photoUrls=b`), in the order given. Other
/// brackets (`category[name]`) are left as they are.
fn without_array_brackets(bytes: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    let has_bracket = bytes
        .windows(3)
        .any(|w| w[0] == b'[' || w.eq_ignore_ascii_case(b"%5b"))
        || bytes.last() == Some(&b'[');
    if !has_bracket {
        return std::borrow::Cow::Borrowed(bytes);
    }
    let mut out = form_urlencoded::Serializer::new(String::new());
    for (name, value) in form_urlencoded::parse(bytes) {
        let base = name
            .strip_suffix(']')
            .and_then(|n| n.rsplit_once('['))
            .filter(|(base, index)| {
                !base.is_empty() && !base.contains('[') && index.bytes().all(|b| b.is_ascii_digit())
            })
            .map(|(base, _)| base);
        out.append_pair(base.unwrap_or(&name), &value);
    }
    std::borrow::Cow::Owned(out.finish().into_bytes())
}

/// A request body in any of the media types its type accepts, read and validated.
#[derive(Debug)]
pub(crate) struct Body<T>(pub(crate) T);

impl<S: Send + Sync, T: WireBody> FromRequest<S> for Body<T> {
    type Rejection = Error;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let format = body_format::<T>(req.headers())?;
        let bytes = Bytes::from_request(req, state).await?;
        if bytes.is_empty() {
            return Err(Error::bad_request("the request body is empty"));
        }
        read_body(format, &bytes).map(Body)
    }
}

/// A request body that may be left out (`None` when it is empty), read and
/// validated like [`Body`] when it is there.
#[derive(Debug)]
pub(crate) struct OptionalBody<T>(pub(crate) Option<T>);

impl<S: Send + Sync, T: WireBody> FromRequest<S> for OptionalBody<T> {
    type Rejection = Error;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        // The media type matters only once there is a body.
        let format = body_format::<T>(req.headers());
        let bytes = Bytes::from_request(req, state).await?;
        if bytes.is_empty() {
            return Ok(OptionalBody(None));
        }
        read_body(format?, &bytes).map(|value| OptionalBody(Some(value)))
    }
}

/// The body's media type, if `T` accepts it; 415 otherwise.
fn body_format<T: WireBody>(headers: &HeaderMap) -> Result<BodyFormat, Error> {
    BodyFormat::of(headers)
        .filter(|f| T::FORMATS.contains(f))
        .ok_or_else(|| unsupported_body(T::FORMATS))
}

fn read_body<T: WireBody>(format: BodyFormat, bytes: &[u8]) -> Result<T, Error> {
    let value = match format {
        BodyFormat::Json => T::from_json(bytes)?,
        BodyFormat::Xml => {
            let text = std::str::from_utf8(bytes)
                .map_err(|_| Error::bad_request("the XML body is not UTF-8"))?;
            T::from_xml(text)?
        }
        BodyFormat::Form => T::from_form(bytes)?,
    };
    // JSON was checked as it was read; XML and forms are checked here.
    if format != BodyFormat::Json {
        crate::http::strict_json::check_text(&value)?;
    }
    value.validate()?;
    Ok(value)
}

/// Every format the pet store reads.
pub(crate) const ALL_FORMATS: &[BodyFormat] =
    &[BodyFormat::Json, BodyFormat::Xml, BodyFormat::Form];

/// Checks that an id taken from a path is a positive number.
pub(crate) fn positive_id(what: &str, id: i64) -> Result<i64, Error> {
    if id > 0 {
        Ok(id)
    } else {
        Err(Error::bad_request(format!(
            "{what} must be a positive integer, not {id}"
        )))
    }
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
            .layer(axum::middleware::from_fn(
                crate::http::error::render_errors::<PetstoreErrors>,
            ));
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

#[cfg(test)]
mod form_tests {
    use super::without_array_brackets;

    fn normalised(form: &str) -> String {
        String::from_utf8(without_array_brackets(form.as_bytes()).into_owned()).unwrap()
    }

    #[test]
    fn bracketed_form_arrays_read_as_repeated_fields() {
        assert_eq!(
            normalised("name=Rex&photoUrls%5B0%5D=a&photoUrls%5B1%5D=b"),
            "name=Rex&photoUrls=a&photoUrls=b"
        );
        assert_eq!(normalised("photoUrls[]=a&tags[]=x"), "photoUrls=a&tags=x");
        // Plain forms pass untouched; other brackets are left alone.
        assert_eq!(normalised("name=Rex&photoUrls=a"), "name=Rex&photoUrls=a");
        assert_eq!(normalised("category[name]=Dogs"), "category%5Bname%5D=Dogs");
        assert_eq!(normalised("[]=a"), "%5B%5D=a");
    }
}
