//! Keeps the server's layers apart, by reading its source as text (no
//! compiler). The layers are folders, and the rules are about folders:
//!
//! - SQL lives only in the storage modules;
//! - no module imports a folder above its own ([`SERVER_LAYERS`]; inside a
//!   service, [`SERVICE_PARTS`]), so `http/` and `storage/` never import a
//!   service;
//! - the two services never import each other;
//! - handlers (`<service>/api/`) call reads and operations, never storage,
//!   and open no transaction;
//! - operations (`<service>/ops/`) never see HTTP;
//! - operator commands (`cli/`) call operations, never handlers, reads or
//!   storage;
//! - the modules of the server, the SDK and the benchmarks import one
//!   another without circles.
//!
//! A module that breaks a rule fails `cargo xtask check` and `cargo test`,
//! naming the file and line.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::Path;

use crate::rust_text::{
    BENCH, CLIENT, CrateSource, Module, ModuleGraph, RUNTIME, SERVER, module_graph, shown,
};

/// Where SQL may be written, relative to the workspace root: the shared
/// storage module and each service's storage (files or folders).
pub const STORAGE_MODULES: [&str; 6] = [
    "server/src/storage/",
    "server/src/access/db.rs",
    "server/src/petstore/db/",
    "server/src/portfolio/db/",
    "server/src/mail/outbox.rs",
    "server/src/http/idempotency/db.rs",
];

/// Words that start a SQL statement in a string literal.
const SQL_STARTS: [&str; 10] = [
    "SELECT ", "INSERT ", "UPDATE ", "DELETE ", "CREATE ", "ALTER ", "DROP ", "PRAGMA ", "BEGIN",
    "WITH ",
];

/// One place where SQL stands outside the storage modules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Misplaced {
    pub file: String,
    pub line: usize,
    pub text: String,
}

impl std::fmt::Display for Misplaced {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}: SQL outside the storage modules: {}",
            self.file, self.line, self.text
        )
    }
}

/// Every line of the server's code, outside the storage modules, that
/// calls sqlx's query functions or holds a string that starts a SQL
/// statement.
pub fn sql_outside_storage(root: &Path) -> anyhow::Result<Vec<Misplaced>> {
    let mut found = Vec::new();
    for (file, text) in crate::rust_text::read_rust_files(root, "server/src")? {
        if !STORAGE_MODULES.iter().any(|m| file.starts_with(m)) {
            found.extend(sql_lines(&file, &text));
        }
    }
    Ok(found)
}

/// The lines of `text` that hold SQL.
pub fn sql_lines(file: &str, text: &str) -> Vec<Misplaced> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| holds_sql(line))
        .map(|(index, line)| Misplaced {
            file: file.to_owned(),
            line: index + 1,
            text: line.trim().to_owned(),
        })
        .collect()
}

fn holds_sql(line: &str) -> bool {
    let code = line.trim_start();
    if code.starts_with("//") {
        return false;
    }
    if code.contains("sqlx::query") || code.contains("sqlx::raw_sql") {
        return true;
    }
    code.split('"')
        .skip(1)
        .step_by(2)
        .any(|literal| SQL_STARTS.iter().any(|start| literal.starts_with(start)))
}

// ---------------------------------------------------------------------------
// The layers, as folders

/// The server's layers, top to bottom, each a few folders (a name ending in
/// `/`) or root files of `server/src`: a module may import its own layer's
/// modules and lower layers'.
pub const SERVER_LAYERS: [(&str, &[&str]); 8] = [
    ("composition", &["lib.rs", "main.rs", "app/", "cli/"]),
    ("services", &["petstore/", "portfolio/"]),
    ("HTTP", &["http/"]),
    ("access, mail and limits", &["access/", "mail/", "limits/"]),
    ("storage", &["storage/"]),
    ("core", &["core/"]),
    ("telemetry", &["telemetry/"]),
    ("configuration", &["config/"]),
];

/// The services' folders.
pub const SERVICES: [&str; 2] = ["petstore", "portfolio"];

/// Inside a service's folder, its parts, top to bottom, as for
/// [`SERVER_LAYERS`].
pub const SERVICE_PARTS: [(&str, &[&str]); 7] = [
    (
        "the service's router, document and edge",
        &["mod.rs", "edge.rs", "document.rs"],
    ),
    ("handlers", &["api/"]),
    ("the service's state", &["state.rs"]),
    ("reads and operations", &["reads/", "ops/"]),
    ("storage", &["db/"]),
    ("wire format", &["wire.rs", "wire/"]),
    ("domain", &["model.rs", "model/"]),
];

/// What opens a transaction; the operations layer does that, not handlers.
pub const TRANSACTION_OPENERS: [&str; 3] = ["begin_write(", ".begin()", "transaction("];

/// The crates that speak HTTP, which operations never use.
const HTTP_CRATES: [&str; 5] = ["axum", "hyper", "tower", "tower_http", "http"];

/// Which of `layers` holds `path` (below the folder the layers divide).
fn layer_of(layers: &[(&str, &[&str])], path: &str) -> Option<usize> {
    layers.iter().position(|(_, places)| {
        places.iter().any(|place| match place.strip_suffix('/') {
            Some(folder) => path.starts_with(&format!("{folder}/")),
            None => path == *place,
        })
    })
}

/// The service a module of the server belongs to, and its path inside the
/// service's folder.
fn in_service(path: &str) -> Option<(&'static str, &str)> {
    SERVICES
        .iter()
        .find_map(|service| Some((*service, path.strip_prefix(&format!("{service}/"))?)))
}

/// One rule broken at one place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// Relative to the workspace root.
    pub file: String,
    pub line: usize,
    pub why: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.why)
    }
}

fn finding(module: &Module, line: usize, why: String) -> Finding {
    Finding {
        file: module.file.clone(),
        line,
        why,
    }
}

/// A check of the server's module graph; its findings come in file and
/// line order.
pub type ModuleCheck = fn(&ModuleGraph) -> Vec<Finding>;

fn in_order(mut findings: Vec<Finding>) -> Vec<Finding> {
    findings.sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
    findings
}

/// The checks of the server's module graph, each with what holds when it
/// finds nothing.
pub const MODULE_CHECKS: [(&str, ModuleCheck); 5] = [
    (
        "no server module imports a folder above its own",
        upward_imports,
    ),
    ("the two services never import each other", services_apart),
    (
        "handlers call reads and operations, never storage, and open no transaction",
        handlers_stay_thin,
    ),
    ("operations never see HTTP", operations_see_no_http),
    (
        "operator commands call reads and operations, never handlers or storage",
        commands_call_operations,
    ),
];

/// The crates whose modules must import one another without circles.
pub const CRATES: [CrateSource; 4] = [SERVER, RUNTIME, CLIENT, BENCH];

/// The circles of every crate of [`CRATES`].
pub fn circles_in_crates(root: &Path) -> anyhow::Result<Vec<Finding>> {
    let mut findings = Vec::new();
    for krate in CRATES {
        findings.extend(import_circles(&module_graph(root, krate)?));
    }
    Ok(findings)
}

/// The server's module graph.
pub fn server_graph(root: &Path) -> anyhow::Result<ModuleGraph> {
    module_graph(root, SERVER)
}

// ---------------------------------------------------------------------------
// No import up the folders

/// Every import of a module in a higher layer than the importer's (between
/// the server's folders, or between a service's parts), and every file that
/// no layer holds.
pub fn upward_imports(graph: &ModuleGraph) -> Vec<Finding> {
    let mut findings = Vec::new();
    for module in graph.modules.values() {
        let Some(own) = layer_of(&SERVER_LAYERS, &module.path) else {
            findings.push(finding(
                module,
                1,
                "in no layer: put it in one of the folders of SERVER_LAYERS \
                 (xtask/src/layers.rs)"
                    .to_owned(),
            ));
            continue;
        };
        let own_part = in_service(&module.path)
            .map(|(service, inside)| (service, layer_of(&SERVICE_PARTS, inside)));
        if let Some((service, None)) = own_part {
            findings.push(finding(
                module,
                1,
                format!("in no part of {service}/: put it in one of SERVICE_PARTS' places"),
            ));
        }
        for (target, &line) in &module.imports {
            let Some(imported) = graph.modules.get(target) else {
                continue;
            };
            // Layers are listed top to bottom: a smaller index is higher.
            if let Some(theirs) = layer_of(&SERVER_LAYERS, &imported.path)
                && theirs < own
            {
                findings.push(finding(
                    module,
                    line,
                    format!(
                        "{} ({}) imports {} ({}), a higher layer",
                        module.shown(),
                        SERVER_LAYERS[own].0,
                        imported.shown(),
                        SERVER_LAYERS[theirs].0
                    ),
                ));
            }
            if let Some((service, Some(mine))) = own_part
                && let Some((their_service, inside)) = in_service(&imported.path)
                && their_service == service
                && let Some(theirs) = layer_of(&SERVICE_PARTS, inside)
                && theirs < mine
            {
                findings.push(finding(
                    module,
                    line,
                    format!(
                        "{} ({}) imports {} ({}), a higher part of {service}/",
                        module.shown(),
                        SERVICE_PARTS[mine].0,
                        imported.shown(),
                        SERVICE_PARTS[theirs].0
                    ),
                ));
            }
        }
    }
    in_order(findings)
}

/// Every import of one service by the other.
pub fn services_apart(graph: &ModuleGraph) -> Vec<Finding> {
    imports_where(graph, |module, imported| {
        let (mine, _) = in_service(&module.path)?;
        let (theirs, _) = in_service(&imported.path)?;
        (mine != theirs).then(|| "the services never import each other".to_owned())
    })
}

/// Every import of storage ([`is_storage`]) by a handler module, and every
/// transaction a handler module opens.
pub fn handlers_stay_thin(graph: &ModuleGraph) -> Vec<Finding> {
    let mut findings = imports_where(graph, |module, imported| {
        let (_, inside) = in_service(&module.path)?;
        if !inside.starts_with("api/") {
            return None;
        }
        is_storage(&imported.path)
            .then(|| "handlers call reads and operations, never storage".to_owned())
    });
    for module in graph.modules.values() {
        if !in_service(&module.path).is_some_and(|(_, inside)| inside.starts_with("api/")) {
            continue;
        }
        for (index, line) in module.code.lines().enumerate() {
            if let Some(opener) = TRANSACTION_OPENERS.iter().find(|o| line.contains(*o)) {
                findings.push(finding(
                    module,
                    index + 1,
                    format!(
                        "a handler module opens a transaction (`{opener}`): an operation should"
                    ),
                ));
            }
        }
    }
    in_order(findings)
}

/// Every HTTP an operation module names: the server's `http/`, its
/// service's handlers, edge or wire format, or a crate that speaks HTTP.
pub fn operations_see_no_http(graph: &ModuleGraph) -> Vec<Finding> {
    let mut findings = imports_where(graph, |module, imported| {
        let (service, inside) = in_service(&module.path)?;
        if !inside.starts_with("ops/") {
            return None;
        }
        let http = imported.path.starts_with("http/")
            || in_service(&imported.path).is_some_and(|(theirs, place)| {
                theirs == service
                    && (place.starts_with("api/")
                        || place.starts_with("wire")
                        || place == "edge.rs")
            });
        http.then(|| "operations never see HTTP".to_owned())
    });
    for module in graph.modules.values() {
        if !in_service(&module.path).is_some_and(|(_, inside)| inside.starts_with("ops/")) {
            continue;
        }
        for (index, line) in module.code.lines().enumerate() {
            let words: Vec<&str> = line
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
                .collect();
            if let Some(krate) = HTTP_CRATES.iter().find(|krate| {
                words.iter().any(|word| {
                    word.strip_prefix(**krate)
                        .is_some_and(|rest| rest.starts_with("::"))
                })
            }) {
                findings.push(finding(
                    module,
                    index + 1,
                    format!("operations never see HTTP: `{krate}::` is named"),
                ));
            }
        }
    }
    in_order(findings)
}

/// Every import, by an operator command, of a service's handlers, edge or
/// wire format, or of a storage module.
pub fn commands_call_operations(graph: &ModuleGraph) -> Vec<Finding> {
    imports_where(graph, |module, imported| {
        if !module.path.starts_with("cli/") {
            return None;
        }
        let beside_operations = in_service(&imported.path).is_some_and(|(_, place)| {
            ["api/", "wire", "edge.rs"]
                .iter()
                .any(|part| place.starts_with(part))
        }) || (is_storage(&imported.path)
            && !DATABASE_OPERATIONS.contains(&imported.path.as_str()));
        beside_operations.then(|| {
            "operator commands call reads and operations, never handlers or storage".to_owned()
        })
    })
}

/// Storage modules that are operations of their own, on the database
/// itself rather than on a service's data: backup and restore, and the
/// migrations' state.
const DATABASE_OPERATIONS: [&str; 2] = ["storage/backup.rs", "storage/migrations.rs"];

/// Whether the module at `path` is storage: `storage/`, and every `db`
/// module (a service's, the credentials', the idempotency keys') and the
/// outbox's.
fn is_storage(path: &str) -> bool {
    path.starts_with("storage/")
        || path.ends_with("/db.rs")
        || path.contains("/db/")
        || path == "mail/outbox.rs"
}

/// A finding for each import for which `breaks` says why it breaks a rule.
fn imports_where(
    graph: &ModuleGraph,
    breaks: impl Fn(&Module, &Module) -> Option<String>,
) -> Vec<Finding> {
    let mut findings = Vec::new();
    for module in graph.modules.values() {
        for (target, &line) in &module.imports {
            let Some(imported) = graph.modules.get(target) else {
                continue;
            };
            if let Some(rule) = breaks(module, imported) {
                findings.push(finding(
                    module,
                    line,
                    format!("{} imports {}: {rule}", module.shown(), imported.shown()),
                ));
            }
        }
    }
    in_order(findings)
}

// ---------------------------------------------------------------------------
// No circles

/// Every circle of imports: each set of two or more modules that reach one
/// another, with its shortest circle spelled out. A module naming its own
/// descendants is wiring (a `mod.rs` declares and routes its children), not
/// a dependency, and is left out; a child naming its parent counts.
pub fn import_circles(graph: &ModuleGraph) -> Vec<Finding> {
    let edges = dependency_edges(graph);
    let mut reversed: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (&from, targets) in &edges {
        for &to in targets {
            reversed.entry(to).or_default().push(from);
        }
    }
    let mut seen = BTreeSet::new();
    let mut findings = Vec::new();
    for name in graph.modules.keys() {
        if seen.contains(name.as_str()) {
            continue;
        }
        let forward = reachable(name, &edges);
        let circle: BTreeSet<&str> = reachable(name, &reversed)
            .intersection(&forward)
            .copied()
            .collect();
        seen.extend(circle.iter().copied());
        if circle.len() > 1 {
            findings.push(describe_circle(graph, name, &circle, &edges));
        }
    }
    findings
}

/// Each module's imports that are not of its own descendants.
fn dependency_edges(graph: &ModuleGraph) -> BTreeMap<&str, Vec<&str>> {
    graph
        .modules
        .values()
        .map(|module| {
            let targets = module
                .imports
                .keys()
                .filter(|target| !is_descendant(target, &module.name))
                .map(String::as_str)
                .collect();
            (module.name.as_str(), targets)
        })
        .collect()
}

fn is_descendant(name: &str, ancestor: &str) -> bool {
    if ancestor.is_empty() {
        return !name.is_empty();
    }
    name.strip_prefix(ancestor)
        .is_some_and(|rest| rest.starts_with("::"))
}

/// `start` and every module it reaches through `edges`.
fn reachable<'a>(start: &'a str, edges: &BTreeMap<&'a str, Vec<&'a str>>) -> BTreeSet<&'a str> {
    let mut seen = BTreeSet::from([start]);
    let mut to_visit = vec![start];
    while let Some(name) = to_visit.pop() {
        for &next in edges.get(name).into_iter().flatten() {
            if seen.insert(next) {
                to_visit.push(next);
            }
        }
    }
    seen
}

/// One line for a circle: its shortest round trip from `start` (each step
/// with the line that names the next module), and all its modules.
fn describe_circle(
    graph: &ModuleGraph,
    start: &str,
    circle: &BTreeSet<&str>,
    edges: &BTreeMap<&str, Vec<&str>>,
) -> Finding {
    let route = shortest_round_trip(start, circle, edges);
    let line_naming = |from: &str, to: &str| {
        graph
            .modules
            .get(from)
            .and_then(|m| m.imports.get(to))
            .copied()
            .unwrap_or(1)
    };
    let steps: Vec<String> = route
        .windows(2)
        .map(|pair| {
            format!(
                "{} (line {})",
                shown(pair[0]),
                line_naming(pair[0], pair[1])
            )
        })
        .chain(std::iter::once(shown(start).to_owned()))
        .collect();
    let all: Vec<&str> = circle.iter().map(|name| shown(name)).collect();
    let first = graph.modules.get(start);
    Finding {
        file: first.map(|m| m.file.clone()).unwrap_or_default(),
        line: route.get(1).map_or(1, |next| line_naming(start, next)),
        why: format!(
            "import circle: {}; the circle's {} modules: {}",
            steps.join(" -> "),
            all.len(),
            all.join(", ")
        ),
    }
}

/// The shortest path `start`, ..., `start` within `circle` (breadth first).
fn shortest_round_trip<'a>(
    start: &'a str,
    circle: &BTreeSet<&'a str>,
    edges: &BTreeMap<&'a str, Vec<&'a str>>,
) -> Vec<&'a str> {
    let mut came_from: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = VecDeque::from([start]);
    while let Some(name) = queue.pop_front() {
        for &next in edges.get(name).into_iter().flatten() {
            if !circle.contains(next) {
                continue;
            }
            if next == start {
                // Back from `name` to `start`, then turned round.
                let mut route = vec![start, name];
                let mut at = name;
                while let Some(&before) = came_from.get(at) {
                    route.push(before);
                    at = before;
                }
                route.reverse();
                return route;
            }
            if !came_from.contains_key(next) && next != start {
                came_from.insert(next, name);
                queue.push_back(next);
            }
        }
    }
    vec![start, start]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_writes_sql_only_in_its_storage_modules() {
        let misplaced = sql_outside_storage(&crate::codegen::workspace_root())
            .unwrap_or_else(|e| panic!("{e:#}"));
        let lines: Vec<String> = misplaced.iter().map(ToString::to_string).collect();
        assert!(lines.is_empty(), "{}", lines.join("\n"));
    }

    #[test]
    fn queries_and_sql_strings_are_found_and_prose_is_not() {
        let handler = r#"
            // A comment may say SELECT things.
            let note = "Selecting pets";
            let rows = sqlx::query_as::<_, Row>(&sql);
            let sql = "SELECT id FROM pets";
            let update = format!("UPDATE {table} SET x = 1");
        "#;
        let lines: Vec<usize> = sql_lines("h.rs", handler).iter().map(|m| m.line).collect();
        assert_eq!(lines, vec![4, 5, 6]);
    }

    // The rules on the tree as it is.

    fn lines(findings: &[Finding]) -> Vec<String> {
        findings.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn the_server_keeps_every_folder_rule() {
        let graph =
            server_graph(&crate::codegen::workspace_root()).unwrap_or_else(|e| panic!("{e:#}"));
        for (promise, check) in MODULE_CHECKS {
            let found = lines(&check(&graph));
            assert!(found.is_empty(), "{promise}:\n{}", found.join("\n"));
        }
    }

    #[test]
    fn the_server_the_sdk_and_the_benchmarks_have_no_import_circles() {
        let found = circles_in_crates(&crate::codegen::workspace_root())
            .unwrap_or_else(|e| panic!("{e:#}"));
        assert!(found.is_empty(), "{}", lines(&found).join("\n"));
    }

    // Each rule on a small made-up server.

    fn graph(files: &[(&str, &str)]) -> ModuleGraph {
        ModuleGraph::from_sources(SERVER, files)
    }

    #[test]
    fn a_circle_is_found_and_a_parent_naming_its_child_is_none() {
        let wiring = graph(&[
            ("lib.rs", ""),
            ("a/mod.rs", "use self::b::B;"),
            ("a/b.rs", "use super::A;"),
        ]);
        assert_eq!(import_circles(&wiring), []);

        let circle = graph(&[
            ("lib.rs", ""),
            ("a/mod.rs", "use self::b::B;\nuse crate::c;"),
            ("a/b.rs", "use super::A;"),
            ("c.rs", "use crate::a::b::B;"),
        ]);
        assert_eq!(
            lines(&import_circles(&circle)),
            [
                "server/src/a/mod.rs:2: import circle: a (line 2) -> c (line 1) -> a::b (line 1) -> a; \
              the circle's 3 modules: a, a::b, c"
            ]
        );
    }

    #[test]
    fn an_import_up_the_folders_and_a_file_in_no_layer_are_found() {
        let graph = graph(&[
            ("lib.rs", ""),
            ("http/error.rs", ""),
            ("storage/mod.rs", "use crate::petstore::model::Pet;"),
            (
                "config/mod.rs",
                "//! Settings.\nuse crate::http::error::Error;",
            ),
            ("petstore/model.rs", ""),
            ("petstore/db/pets.rs", "use crate::petstore::api::pet;"),
            ("petstore/api/pet.rs", ""),
            ("petstore/stray.rs", ""),
            ("somewhere.rs", ""),
        ]);
        assert_eq!(
            lines(&upward_imports(&graph)),
            [
                "server/src/config/mod.rs:2: config (configuration) imports http::error (HTTP), a higher layer",
                "server/src/petstore/db/pets.rs:1: petstore::db::pets (storage) imports \
                 petstore::api::pet (handlers), a higher part of petstore/",
                "server/src/petstore/stray.rs:1: in no part of petstore/: put it in one of \
                 SERVICE_PARTS' places",
                "server/src/somewhere.rs:1: in no layer: put it in one of the folders of \
                 SERVER_LAYERS (xtask/src/layers.rs)",
                "server/src/storage/mod.rs:1: storage (storage) imports petstore::model (services), a higher layer",
            ]
        );
    }

    #[test]
    fn services_that_import_each_other_are_found() {
        let graph = graph(&[
            ("lib.rs", ""),
            ("petstore/ops/mod.rs", "use crate::portfolio::model::Post;"),
            ("portfolio/model.rs", ""),
        ]);
        assert_eq!(
            lines(&services_apart(&graph)),
            [
                "server/src/petstore/ops/mod.rs:1: petstore::ops imports portfolio::model: \
              the services never import each other"
            ]
        );
    }

    #[test]
    fn a_handler_on_storage_or_in_a_transaction_is_found() {
        let graph = graph(&[
            ("lib.rs", ""),
            ("storage/mod.rs", ""),
            ("petstore/db/pets.rs", "fn g() { db.begin_write(); }"),
            ("petstore/reads/pets.rs", ""),
            (
                "petstore/api/pet.rs",
                "use crate::petstore::reads::pets;\nuse crate::petstore::db::pets as rows;\n\
                 fn f() {\n    crate::storage::x();\n    db.begin_write().await;\n}",
            ),
        ]);
        assert_eq!(
            lines(&handlers_stay_thin(&graph)),
            [
                "server/src/petstore/api/pet.rs:2: petstore::api::pet imports petstore::db::pets: \
                 handlers call reads and operations, never storage",
                "server/src/petstore/api/pet.rs:4: petstore::api::pet imports storage: \
                 handlers call reads and operations, never storage",
                "server/src/petstore/api/pet.rs:5: a handler module opens a transaction \
                 (`begin_write(`): an operation should",
            ]
        );
    }

    #[test]
    fn an_operation_that_sees_http_is_found() {
        let graph = graph(&[
            ("lib.rs", ""),
            ("http/error.rs", ""),
            ("portfolio/wire.rs", ""),
            ("portfolio/db/mod.rs", ""),
            (
                "portfolio/ops/contact.rs",
                "use axum::http::StatusCode;\nuse crate::portfolio::db;\n\
                 use crate::portfolio::wire::Errors;\nfn f() -> crate::http::error::Error { todo() }",
            ),
        ]);
        assert_eq!(
            lines(&operations_see_no_http(&graph)),
            [
                "server/src/portfolio/ops/contact.rs:1: operations never see HTTP: `axum::` is named",
                "server/src/portfolio/ops/contact.rs:3: portfolio::ops::contact imports \
                 portfolio::wire: operations never see HTTP",
                "server/src/portfolio/ops/contact.rs:4: portfolio::ops::contact imports \
                 http::error: operations never see HTTP",
            ]
        );
    }

    #[test]
    fn a_command_beside_the_operations_is_found() {
        let graph = graph(&[
            ("lib.rs", ""),
            ("portfolio/ops/mod.rs", ""),
            ("portfolio/api/admin.rs", ""),
            ("access/db.rs", ""),
            (
                "cli/keys.rs",
                "use crate::portfolio::ops;\nuse crate::portfolio::api::admin;\nuse crate::access::db;",
            ),
        ]);
        assert_eq!(
            lines(&commands_call_operations(&graph)),
            [
                "server/src/cli/keys.rs:2: cli::keys imports portfolio::api::admin: operator \
                 commands call reads and operations, never handlers or storage",
                "server/src/cli/keys.rs:3: cli::keys imports access::db: operator commands call \
                 reads and operations, never handlers or storage",
            ]
        );
    }
}
