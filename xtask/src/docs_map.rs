//! Keeps the docs true to the tree: `docs/architecture.md`'s map of the
//! folders names every folder of `server/src`, every file at its top and
//! every part of a service, and nothing that is not there; and every source
//! file the docs name in backticks (`petstore/db/pets.rs`) is there.
//!
//! The map is the first fenced block under the page's `## Folders`. An
//! entry is a line's first word, when it starts before [`DESCRIPTIONS`]
//! (the column where descriptions go on) and ends in `/` (a folder) or
//! `.rs` (a file); it lies in the folder of the nearest entry above it that
//! is indented less. Words further right are prose.

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::Context as _;

/// The page whose map is checked, from the workspace root.
pub const ARCHITECTURE: &str = "docs/architecture.md";

/// The pages whose named source files must be there, from the workspace
/// root: these and every page of `docs/`.
const PAGES: [&str; 2] = ["README.md", "BENCHMARKS.md"];

/// The column where an entry's description starts: a word that starts
/// there or further right is prose.
const DESCRIPTIONS: usize = 25;

/// The services' folders, whose every part the map names.
const SERVICES: [&str; 2] = ["server/src/petstore/", "server/src/portfolio/"];

/// What is wrong with the map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MapDrift {
    /// A folder or file the map must name and does not.
    Missing(String),
    /// An entry (with its line in the page) for which there is nothing.
    Absent { entry: String, line: usize },
    /// A source file a page names (at a line) that no file's path ends with.
    Unknown {
        page: String,
        line: usize,
        file: String,
    },
}

impl std::fmt::Display for MapDrift {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MapDrift::Missing(path) => {
                write!(f, "{ARCHITECTURE}: the map of the folders misses {path}")
            }
            MapDrift::Absent { entry, line } => {
                write!(
                    f,
                    "{ARCHITECTURE}:{line}: the map names {entry}, which is not there"
                )
            }
            MapDrift::Unknown { page, line, file } => {
                write!(f, "{page}:{line}: names {file}, which is not there")
            }
        }
    }
}

/// The drift between the map in `docs/architecture.md` and the tree.
pub fn map_drift(root: &Path) -> anyhow::Result<Vec<MapDrift>> {
    let page = std::fs::read_to_string(root.join(ARCHITECTURE))
        .with_context(|| format!("cannot read {ARCHITECTURE}"))?;
    let entries = map_entries(&page)?;
    let named: BTreeSet<&str> = entries.iter().map(|(entry, _)| entry.as_str()).collect();
    let mut drift: Vec<MapDrift> = required(root)?
        .into_iter()
        .filter(|path| !named.contains(path.as_str()))
        .map(MapDrift::Missing)
        .collect();
    drift.extend(
        entries
            .into_iter()
            .filter(|(entry, _)| !root.join(entry).exists())
            .map(|(entry, line)| MapDrift::Absent { entry, line }),
    );
    Ok(drift)
}

/// Every source file (`*.rs` in backticks) that a page of [`PAGES`] or of
/// `docs/` names and that no file of the workspace is: a name with a
/// folder must end a file's path, a bare name must be a file's name.
pub fn unknown_files(root: &Path) -> anyhow::Result<Vec<MapDrift>> {
    let mut files = BTreeSet::new();
    workspace_files(root, "", &mut files)?;
    let mut pages: Vec<String> = PAGES.iter().map(|page| (*page).to_owned()).collect();
    pages.extend(
        list(root, "docs/")?
            .into_iter()
            .filter(|page| page.ends_with(".md")),
    );
    let mut unknown = Vec::new();
    for page in pages {
        let text = std::fs::read_to_string(root.join(&page))
            .with_context(|| format!("cannot read {page}"))?;
        for (index, line) in text.lines().enumerate() {
            for file in named_source_files(line) {
                let there = files
                    .iter()
                    .any(|path| path == file || path.ends_with(&format!("/{file}")));
                if !there {
                    unknown.push(MapDrift::Unknown {
                        page: page.clone(),
                        line: index + 1,
                        file: file.to_owned(),
                    });
                }
            }
        }
    }
    Ok(unknown)
}

/// The source files a line names in backticks: `a/b.rs`, `b.rs`.
fn named_source_files(line: &str) -> impl Iterator<Item = &str> {
    line.split('`').skip(1).step_by(2).filter(|quoted| {
        quoted.ends_with(".rs")
            && quoted
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-./".contains(c))
    })
}

/// Every file below `folder` (a path from `root`, empty for the root or
/// ending in `/`), leaving out hidden folders, build output and installed
/// packages.
fn workspace_files(root: &Path, folder: &str, found: &mut BTreeSet<String>) -> anyhow::Result<()> {
    for entry in list(root, folder)? {
        let name = entry
            .trim_end_matches('/')
            .rsplit('/')
            .next()
            .unwrap_or_default();
        if name.starts_with('.') || name == "target" || name == "node_modules" {
            continue;
        }
        if entry.ends_with('/') {
            workspace_files(root, &entry, found)?;
        } else {
            found.insert(entry);
        }
    }
    Ok(())
}

/// The entries of the map, as paths from the workspace root (folders end
/// in `/`), each with its line in the page.
pub fn map_entries(page: &str) -> anyhow::Result<Vec<(String, usize)>> {
    let mut lines = page.lines().enumerate();
    lines
        .by_ref()
        .find(|(_, line)| line.trim_end() == "## Folders")
        .context("no \"## Folders\" section")?;
    lines
        .by_ref()
        .find(|(_, line)| line.starts_with("```"))
        .context("no map under \"## Folders\"")?;
    // The folders open above the current line: (indentation, path).
    let mut open: Vec<(usize, String)> = Vec::new();
    let mut entries = Vec::new();
    for (index, line) in lines {
        if line.starts_with("```") {
            return Ok(entries);
        }
        let indent = line.len() - line.trim_start().len();
        let Some(word) = line.split_whitespace().next() else {
            continue;
        };
        if indent >= DESCRIPTIONS - 1 || !(word.ends_with('/') || word.ends_with(".rs")) {
            continue;
        }
        while open.last().is_some_and(|(depth, _)| *depth >= indent) {
            open.pop();
        }
        let path = match open.last() {
            Some((_, folder)) => format!("{folder}{word}"),
            None => word.to_owned(),
        };
        if word.ends_with('/') {
            open.push((indent, path.clone()));
        }
        entries.push((path, index + 1));
    }
    anyhow::bail!("the map under \"## Folders\" does not end")
}

/// What the map must name: every folder below `server/src`, the files at
/// its top and at the top of each service's folder.
fn required(root: &Path) -> anyhow::Result<BTreeSet<String>> {
    let mut paths = BTreeSet::new();
    folders_below(root, "server/src/", &mut paths)?;
    for top in ["server/src/"].into_iter().chain(SERVICES) {
        for entry in list(root, top)? {
            if entry.ends_with(".rs") {
                paths.insert(entry);
            }
        }
    }
    Ok(paths)
}

/// Every folder below `folder` (a path from `root` ending in `/`), at any
/// depth.
fn folders_below(root: &Path, folder: &str, found: &mut BTreeSet<String>) -> anyhow::Result<()> {
    for entry in list(root, folder)? {
        if entry.ends_with('/') {
            folders_below(root, &entry, found)?;
            found.insert(entry);
        }
    }
    Ok(())
}

/// The entries of `folder`, as paths from `root` (folders end in `/`).
fn list(root: &Path, folder: &str) -> anyhow::Result<Vec<String>> {
    let dir = root.join(folder);
    let mut entries = Vec::new();
    for entry in std::fs::read_dir(&dir).with_context(|| format!("cannot list {folder}"))? {
        let entry = entry.with_context(|| format!("cannot list {folder}"))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.path().is_dir() {
            entries.push(format!("{folder}{name}/"));
        } else {
            entries.push(format!("{folder}{name}"));
        }
    }
    entries.sort();
    Ok(entries)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_architecture_page_maps_every_folder_of_the_server() {
        let drift =
            map_drift(&crate::codegen::workspace_root()).unwrap_or_else(|e| panic!("{e:#}"));
        assert!(
            drift.is_empty(),
            "{}",
            drift
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n")
        );
    }

    #[test]
    fn the_docs_name_only_source_files_that_are_there() {
        let unknown =
            unknown_files(&crate::codegen::workspace_root()).unwrap_or_else(|e| panic!("{e:#}"));
        assert!(
            unknown.is_empty(),
            "{}",
            unknown
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n")
        );
    }

    #[test]
    fn source_files_are_read_from_backticks_only() {
        let line = "see `petstore/db/pets.rs` and `lib.rs`, not `cargo test` nor pets.rs";
        assert_eq!(
            named_source_files(line).collect::<Vec<_>>(),
            ["petstore/db/pets.rs", "lib.rs"]
        );
    }

    #[test]
    fn entries_nest_by_indentation_and_prose_is_left_out() {
        let page = "# A\n\n## Folders\n\n```\n\
            top/                     a folder; mod.rs is prose here\n\
            server/src/\n\
            \x20 lib.rs                 the root\n\
            \x20 http/                  serving:\n\
            \x20                        serve.rs (prose too)\n\
            \x20   idempotency/         keys\n\
            \x20 core/                  below\n\
            ```\n\
            \n```\nlater.rs   not the map\n```\n";
        let entries: Vec<String> = map_entries(page)
            .unwrap()
            .into_iter()
            .map(|(entry, _)| entry)
            .collect();
        assert_eq!(
            entries,
            [
                "top/",
                "server/src/",
                "server/src/lib.rs",
                "server/src/http/",
                "server/src/http/idempotency/",
                "server/src/core/",
            ]
        );
    }

    #[test]
    fn a_folder_left_out_and_an_entry_for_nothing_are_found() {
        let root = std::env::temp_dir().join(format!("docs-map-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for dir in [
            "server/src/http",
            "server/src/petstore/api",
            "server/src/portfolio",
            "docs",
        ] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        for file in [
            "server/src/lib.rs",
            "server/src/petstore/mod.rs",
            "server/src/portfolio/mod.rs",
        ] {
            std::fs::write(root.join(file), "").unwrap();
        }
        std::fs::write(
            root.join(ARCHITECTURE),
            "## Folders\n```\nserver/src/\n  lib.rs\n  http/\n  gone.rs\n  petstore/\n    mod.rs\n  portfolio/\n    mod.rs\n```\n",
        )
        .unwrap();
        let drift = map_drift(&root).unwrap();
        std::fs::remove_dir_all(&root).unwrap();
        assert_eq!(
            drift,
            [
                MapDrift::Missing("server/src/petstore/api/".to_owned()),
                MapDrift::Absent {
                    entry: "server/src/gone.rs".to_owned(),
                    line: 6
                },
            ]
        );
    }
}
