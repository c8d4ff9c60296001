//! Static files from the folder the operator configures
//! (`portfolio.static_dir`), one level deep: no hidden files, and no symlink
//! that leads out of the folder or to a hidden file.

use std::path::{Path, PathBuf};

use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use tower::ServiceExt as _;
use tower_http::services::ServeFile;
use utoipa::ToSchema;

use crate::http::error::Error;
use crate::http::extract::Path as PathParam;
use crate::portfolio::state::PortfolioState;

/// A file's bytes.
#[derive(ToSchema)]
#[schema(value_type = String, format = Binary)]
pub(crate) struct FileBytes(#[allow(dead_code)] Vec<u8>);

/// A name of a file in the folder itself: no separators, not `.` or `..`.
fn is_file_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 255
        && name != "."
        && name != ".."
        && !name.contains(['/', '\\', '\0'])
}

/// Hidden files (`.env`, `.git`) are never served: they answer as missing.
fn is_hidden(name: &str) -> bool {
    name.starts_with('.')
}

/// Returns a static file.
#[utoipa::path(
    get, path = "/api/static/{file}",
    tag = "content",
    params(("file" = String, Path, max_length = 255, description = "The file's name in the static folder.")),
    responses(
        (status = 200, description = "The file, with the media type its name suggests",
            content((inline(FileBytes) = "*/*"))),
        (status = 400, description = "Not a file name (a path, or `..`)"),
    ),
)]
pub(crate) async fn get_static_file(
    State(state): State<PortfolioState>,
    PathParam(file): PathParam<String>,
    request: Request,
) -> Result<Response, Error> {
    if !is_file_name(&file) {
        return Err(Error::bad_request(format!(
            "{file:?} is not the name of a file in the static folder"
        )));
    }
    let not_found = || Error::not_found(format!("no static file {file:?}"));
    let Some(dir) = &state.config.static_dir else {
        return Err(not_found());
    };
    let Some(path) = resolve(dir, &file).await else {
        return Err(not_found());
    };
    match ServeFile::new(&path).oneshot(request).await {
        Ok(response) if response.status().is_success() || response.status().is_redirection() => {
            Ok(response.into_response())
        }
        Ok(response) if response.status() == axum::http::StatusCode::NOT_FOUND => Err(not_found()),
        Ok(response) => Ok(response.into_response()),
        Err(e) => Err(Error::internal("cannot serve a static file", e)),
    }
}

/// The file `name` in `dir` as it really is (symlinks followed): a regular,
/// not hidden file directly in the folder, or nothing. What is served is
/// this resolved path, so a link changed after the check changes nothing.
async fn resolve(dir: &Path, name: &str) -> Option<PathBuf> {
    let dir = tokio::fs::canonicalize(dir).await.ok()?;
    let path = tokio::fs::canonicalize(dir.join(name)).await.ok()?;
    let inside = path.parent() == Some(dir.as_path());
    let visible = path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| is_file_name(n) && !is_hidden(n));
    let regular = tokio::fs::metadata(&path).await.ok()?.is_file();
    (inside && visible && regular).then_some(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn links_out_of_the_folder_and_to_hidden_files_are_not_served() {
        let root = tempfile_dir("static-links");
        let dir = root.join("public");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(root.join("secret.txt"), "outside").unwrap();
        std::fs::write(dir.join(".env"), "hidden").unwrap();
        std::fs::write(dir.join("cv.pdf"), "inside").unwrap();
        std::os::unix::fs::symlink(root.join("secret.txt"), dir.join("out.txt")).unwrap();
        std::os::unix::fs::symlink(dir.join(".env"), dir.join("env.txt")).unwrap();
        std::os::unix::fs::symlink(dir.join("cv.pdf"), dir.join("resume.pdf")).unwrap();
        assert_eq!(resolve(&dir, "out.txt").await, None);
        assert_eq!(resolve(&dir, "env.txt").await, None);
        assert_eq!(resolve(&dir, "missing.txt").await, None);
        let cv = std::fs::canonicalize(dir.join("cv.pdf")).unwrap();
        assert_eq!(resolve(&dir, "cv.pdf").await, Some(cv.clone()));
        assert_eq!(
            resolve(&dir, "resume.pdf").await,
            Some(cv),
            "a link inside is fine"
        );
        std::fs::remove_dir_all(&root).unwrap();
    }

    fn tempfile_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("pps-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn only_names_of_files_in_the_folder_are_file_names() {
        assert!(is_file_name("cv.pdf"));
        assert!(is_file_name(".env"), "a name, though hidden");
        for bad in ["", ".", "..", "../etc/passwd", "a/b", "a\\b"] {
            assert!(!is_file_name(bad), "{bad}");
        }
    }
}
