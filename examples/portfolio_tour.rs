//! `PORTFOLIO_API_KEY=... cargo run -p petstore-portfolio-examples --bin portfolio-tour [SERVER_URL]`
//!
//! Reads site information and projects, subscribes to the newsletter, and
//! submits the contact form with the API key from `PORTFOLIO_API_KEY` (a key
//! with the `contact:write` scope from the server's `[[portfolio.api_keys]]`).

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let server_url = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "http://127.0.0.1:8080".to_owned());
    let api_key = std::env::var("PORTFOLIO_API_KEY").unwrap_or_default();
    let mut stdout = std::io::stdout();
    petstore_portfolio_examples::portfolio_tour(&server_url, &api_key, &mut stdout).await
}
