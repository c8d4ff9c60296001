//! `cargo run -p petstore-portfolio-examples --bin petstore-tour [SERVER_URL]`
//!
//! Walks through the pet store with the SDK against a running server
//! (default `http://127.0.0.1:8080`; start one with `cargo run --bin petstore-portfolio`).

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let server_url = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "http://127.0.0.1:8080".to_owned());
    let mut stdout = std::io::stdout();
    petstore_portfolio_examples::petstore_tour(&server_url, &mut stdout).await
}
