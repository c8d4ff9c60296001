//! `PORTFOLIO_CLIENT_ID=... PORTFOLIO_CLIENT_SECRET=... cargo run -p petstore-portfolio-examples --bin server-to-server [SERVER_URL] [CALLS]`
//!
//! A server-to-server caller of the portfolio: OAuth client credentials
//! (from `petstore-portfolio clients create --name backend --scope subscribers:read`),
//! bearer tokens fetched and refreshed by the SDK, and a 429 waited out as
//! `Retry-After` says.

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let server_url = args
        .next()
        .unwrap_or_else(|| "http://127.0.0.1:8080".to_owned());
    let calls = args.next().map_or(Ok(5), |n| n.parse())?;
    let client_id = std::env::var("PORTFOLIO_CLIENT_ID").unwrap_or_default();
    let client_secret = std::env::var("PORTFOLIO_CLIENT_SECRET").unwrap_or_default();
    let mut stdout = std::io::stdout();
    petstore_portfolio_examples::server_to_server(
        &server_url,
        &client_id,
        &client_secret,
        calls,
        &mut stdout,
    )
    .await
}
