//! The framework's ceiling for `cargo xtask bench` (not part of the server):
//! a bare axum server that answers each path with fixed bytes, as fast as
//! axum and hyper allow on this machine. The server's own answers are
//! measured against it.
//!
//! Usage: `bench-ceiling <folder>`. For every `<name>.body` in the folder (with
//! `<name>.type`, the content type, and `<name>.status`), `GET` and `POST`
//! `/<name>` answer those bytes. Prints `listening on http://127.0.0.1:<port>`.

use std::collections::HashMap;
use std::sync::Arc;

use anyhow::Context as _;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

/// One fixed answer.
struct Answer {
    status: StatusCode,
    content_type: HeaderValue,
    body: Bytes,
}

type Answers = Arc<HashMap<String, Answer>>;

async fn answer(State(answers): State<Answers>, Path(name): Path<String>) -> Response {
    match answers.get(&name) {
        Some(answer) => (
            answer.status,
            [(header::CONTENT_TYPE, answer.content_type.clone())],
            answer.body.clone(),
        )
            .into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

fn load(folder: &std::path::Path) -> anyhow::Result<HashMap<String, Answer>> {
    let mut answers = HashMap::new();
    for entry in std::fs::read_dir(folder)? {
        let path = entry?.path();
        if path.extension().is_none_or(|e| e != "body") {
            continue;
        }
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .context("a file name")?
            .to_owned();
        let read = |extension: &str| std::fs::read_to_string(path.with_extension(extension));
        let answer = Answer {
            status: StatusCode::from_u16(read("status")?.trim().parse()?)?,
            content_type: HeaderValue::from_str(read("type")?.trim())?,
            body: Bytes::from(std::fs::read(&path)?),
        };
        answers.insert(name, answer);
    }
    Ok(answers)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let folder = std::env::args_os()
        .nth(1)
        .context("usage: bench-ceiling <folder>")?;
    let answers: Answers = Arc::new(load(std::path::Path::new(&folder))?);
    let app = Router::new()
        .route("/{name}", get(answer).post(answer).put(answer))
        .with_state(answers);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    println!("listening on http://{}", listener.local_addr()?);
    axum::serve(listener, app).await?;
    Ok(())
}
