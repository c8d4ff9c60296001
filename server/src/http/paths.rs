//! Where the server serves its documents and Swagger UI: the handlers
//! route them, and emails and the CLI link to them.

/// Where the pet store document is served.
pub const PETSTORE_JSON_PATH: &str = "/openapi/petstore.json";

/// Where the portfolio document is served.
pub const PORTFOLIO_JSON_PATH: &str = "/openapi/portfolio.json";

/// Where the pet store document's client profile is served.
pub const PETSTORE_CLIENT_PROFILE_PATH: &str = "/openapi/petstore.client.json";

/// Where the portfolio document's client profile is served.
pub const PORTFOLIO_CLIENT_PROFILE_PATH: &str = "/openapi/portfolio.client.json";

/// Where Swagger UI is served.
pub const SWAGGER_UI_PATH: &str = "/docs";

/// Swagger UI's address on a server whose public URL is `public_url`: the
/// link emails and the CLI give.
pub fn docs_url(public_url: &str) -> String {
    format!("{}{SWAGGER_UI_PATH}/", public_url.trim_end_matches('/'))
}
