//! Static files from the folder the operator configures
//! (`portfolio.static_dir`), one level deep.

use std::path::PathBuf;

use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use tower::ServiceExt as _;
use tower_http::services::ServeFile;
use utoipa::ToSchema;

use super::PortfolioState;
use crate::error::Error;
use crate::extract::Path;

/// A file's bytes.
#[derive(ToSchema)]
#[schema(value_type = String, format = Binary)]
pub struct FileBytes(#[allow(dead_code)] Vec<u8>);

/// A name that stays inside the folder: no separators, no `..`, no hidden files.
fn is_plain_file_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 255
        && !name.starts_with('.')
        && !name.contains(['/', '\\', '\0'])
}

/// Returns a static file.
#[utoipa::path(
    get,
    path = "/api/static/{file}",
    operation_id = "getStaticFile",
    tag = "content",
    params(("file" = String, Path, max_length = 255, description = "The file's name in the static folder.")),
    responses(
        (status = 200, description = "The file, with the media type its name suggests",
            content((inline(FileBytes) = "*/*"))),
        (status = 400, description = "Not a plain file name"),
        (status = 404, description = "No such file"),
    ),
)]
pub async fn get_static_file(
    State(state): State<PortfolioState>,
    Path(file): Path<String>,
    request: Request,
) -> Result<Response, Error> {
    if !is_plain_file_name(&file) {
        return Err(Error::bad_request(format!(
            "{file:?} is not a plain file name"
        )));
    }
    let not_found = || Error::not_found(format!("no static file {file:?}"));
    let Some(dir) = &state.config.static_dir else {
        return Err(not_found());
    };
    let path: PathBuf = dir.join(&file);
    if !tokio::fs::metadata(&path)
        .await
        .map(|m| m.is_file())
        .unwrap_or(false)
    {
        return Err(not_found());
    }
    match ServeFile::new(&path).oneshot(request).await {
        Ok(response) if response.status().is_success() || response.status().is_redirection() => {
            Ok(response.into_response())
        }
        Ok(response) if response.status() == axum::http::StatusCode::NOT_FOUND => Err(not_found()),
        Ok(response) => Ok(response.into_response()),
        Err(e) => Err(Error::internal("cannot serve a static file", e)),
    }
}

#[cfg(test)]
mod tests {
    use super::is_plain_file_name;

    #[test]
    fn only_plain_names_are_served() {
        assert!(is_plain_file_name("cv.pdf"));
        for bad in ["", "../etc/passwd", "a/b", ".env", "a\\b"] {
            assert!(!is_plain_file_name(bad), "{bad}");
        }
    }
}
