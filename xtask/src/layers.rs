//! Keeps the server's layers apart, by reading its source as text (no
//! compiler): SQL lives only in the storage modules; the modules import one
//! another without circles and never up the layers of [`LAYERS`]; handlers
//! open no transactions; operator commands (`cli/`) call no handler module.
//! A module that breaks a rule fails `cargo xtask check` and `cargo test`,
//! naming the file and line.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

use anyhow::Context as _;

/// Where SQL may be written, relative to the workspace root: the shared
/// storage module and each service's storage (files or folders).
pub const STORAGE_MODULES: [&str; 6] = [
    "server/src/storage/",
    "server/src/access/db.rs",
    "server/src/petstore/db/",
    "server/src/portfolio/db/",
    "server/src/mail/outbox.rs",
    "server/src/idempotency/db.rs",
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
    for file in rust_files(&root.join("server/src"))? {
        let relative = file
            .strip_prefix(root)
            .unwrap_or(&file)
            .to_string_lossy()
            .replace('\\', "/");
        if STORAGE_MODULES.iter().any(|m| relative.starts_with(m)) {
            continue;
        }
        let text = std::fs::read_to_string(&file)
            .with_context(|| format!("cannot read {}", file.display()))?;
        found.extend(sql_lines(&relative, &text));
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

pub(crate) fn rust_files(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))?;
    for entry in entries {
        let path = entry?.path();
        if path.is_dir() {
            files.extend(rust_files(&path)?);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

// ---------------------------------------------------------------------------
// The layers, as data: edit this table when a module moves or is added.

/// The server's source folder, relative to the workspace root.
const SERVER_SRC: &str = "server/src";

/// One layer of the server: the files it holds, as paths below `server/src`.
/// `*` stands for any part of one file or folder name, `**` for any number
/// of folders, `{a,b}` for either; a pattern that starts with `!` takes
/// files back out of the layer.
#[derive(Debug, Clone, Copy)]
pub struct Layer {
    pub name: &'static str,
    pub files: &'static [&'static str],
}

/// The name of the handlers' layer, which [`handler_rules`] looks for.
const HTTP: &str = "HTTP";

/// The layers, top to bottom: a module may import modules of its own layer
/// or of a lower one. Every file of the server must be in exactly one.
pub const LAYERS: [Layer; 7] = [
    // Composition: builds the server from all its parts and runs it (the
    // crate root, the binary, start-up, accepting connections, the operator
    // commands, the tests' fixtures). May import anything.
    Layer {
        name: "composition",
        files: &[
            "lib.rs",
            "main.rs",
            "app.rs",
            "serve.rs",
            "tls.rs",
            "cli/**",
            "fixtures.rs",
        ],
    },
    // HTTP: the handlers and what only they use: routers and each service's
    // document (mod.rs), extractors, wire formats, errors as answers, the
    // credentials as headers carry them, rate limits' headers, the request
    // timeout, idempotency keys.
    Layer {
        name: HTTP,
        files: &[
            "petstore/mod.rs",
            "petstore/{pet,pet_image,pet_list,pet_xml,store,user,auth,authorize,rate_limit,wire}.rs",
            "portfolio/mod.rs",
            "portfolio/{analytics,auth,contact,content,health,key_requests,newsletter,notify}.rs",
            "portfolio/{oauth,social,static_files,paging,rate_limit,error}.rs",
            "portfolio/admin/*",
            "extract.rs",
            "error.rs",
            "docs.rs",
            "openapi_errors.rs",
            "document_rules.rs",
            "service_state.rs",
            "strict_json.rs",
            "limit_headers.rs",
            "deadline.rs",
            "observe.rs",
            "cors.rs",
            "compression.rs",
            "edge.rs",
            "idempotency/mod.rs",
            "access/{credentials,challenges}.rs",
        ],
    },
    // Operations: one function per use case, between the handlers (and the
    // CLI) and storage: the steps, the transaction around them, the emails.
    // No HTTP types.
    Layer {
        name: "operations",
        files: &[
            "petstore/ops/**",
            "portfolio/ops/**",
            "petstore/demo_data.rs",
            "mail/mod.rs",
            "mail/worker.rs",
        ],
    },
    // State: what the process keeps in front of storage and shares between
    // requests: the credentials' caches, the rate limits' counters, the
    // read caches.
    Layer {
        name: "state",
        files: &[
            "access/{mod,keys,tokens,sessions}.rs",
            "limits.rs",
            "read_cache.rs",
        ],
    },
    // Storage, and the other ways out of the process: every SQL string,
    // Redis counters, the SMTP transport. It reads and writes the domain's
    // types.
    Layer {
        name: "storage",
        files: &[
            "petstore/db/**",
            "portfolio/db/**",
            "access/db.rs",
            "idempotency/db.rs",
            "mail/outbox.rs",
            "mail/transport.rs",
            "portfolio/mastodon.rs",
            "storage/**",
            "!storage/error.rs",
            "shared_counters.rs",
        ],
    },
    // Domain: plain types and rules (what a pet, an order, a subscriber, a
    // key may be; what an email says), the one error the rules and the
    // operations fail with, and password hashing. No storage, no HTTP.
    Layer {
        name: "domain",
        files: &[
            "petstore/model.rs",
            "portfolio/model.rs",
            "portfolio/fields.rs",
            "access/model.rs",
            "mail/templates.rs",
            "mail/address.rs",
            "text_policy.rs",
            "password.rs",
            "failure.rs",
        ],
    },
    // Foundation: what every layer may use: configuration, logs, time,
    // secrets, the paths the server serves, storage's error kinds.
    Layer {
        name: "foundation",
        files: &[
            "config/**",
            "telemetry/**",
            "clock.rs",
            "lifecycle.rs",
            "secret.rs",
            "paths.rs",
            "storage/error.rs",
        ],
    },
];

/// What opens a transaction; the operations layer does that, not handlers.
pub const TRANSACTION_OPENERS: [&str; 3] = ["begin_write(", ".begin()", "transaction("];

// ---------------------------------------------------------------------------
// Findings

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

/// A check of the module graph; its findings come in file and line order.
pub type ModuleCheck = fn(&ModuleGraph) -> Vec<Finding>;

fn in_order(mut findings: Vec<Finding>) -> Vec<Finding> {
    findings.sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
    findings
}

/// The module-graph checks, each with what holds when it finds nothing.
pub const MODULE_CHECKS: [(&str, ModuleCheck); 3] = [
    (
        "the server's modules import one another without circles",
        import_circles,
    ),
    ("no server module imports a higher layer", upward_imports),
    (
        "no handler opens a transaction; no cli module imports a handler module",
        handler_rules,
    ),
];

// ---------------------------------------------------------------------------
// The module graph

/// One source file of the server and the modules it names.
#[derive(Debug, Clone)]
pub struct Module {
    /// `a::b` for `a/b.rs` or `a/b/mod.rs`; empty for `lib.rs`, the root.
    pub name: String,
    /// The file below `server/src`, as the layer table names it.
    pub path: String,
    /// Every other module it names, with the first line that names it.
    pub imports: BTreeMap<String, usize>,
    /// Its code: comments, literals and test modules blanked out, lines kept.
    code: String,
}

impl Module {
    fn file(&self) -> String {
        format!("{SERVER_SRC}/{}", self.path)
    }

    /// Its name as findings write it.
    fn shown(&self) -> &str {
        shown(&self.name)
    }
}

fn shown(name: &str) -> &str {
    if name.is_empty() { "crate" } else { name }
}

/// The server's modules by name.
#[derive(Debug, Clone, Default)]
pub struct ModuleGraph {
    pub modules: BTreeMap<String, Module>,
}

/// Reads every file under `server/src` into a [`ModuleGraph`].
pub fn module_graph(root: &Path) -> anyhow::Result<ModuleGraph> {
    let src = root.join(SERVER_SRC);
    let mut sources = Vec::new();
    for file in rust_files(&src)? {
        let path = file
            .strip_prefix(&src)
            .unwrap_or(&file)
            .to_string_lossy()
            .replace('\\', "/");
        let text = std::fs::read_to_string(&file)
            .with_context(|| format!("cannot read {}", file.display()))?;
        sources.push((path, text));
    }
    Ok(ModuleGraph::from_sources(&sources))
}

impl ModuleGraph {
    /// The graph of the files given as (path below `server/src`, text).
    pub fn from_sources(sources: &[(impl AsRef<str>, impl AsRef<str>)]) -> ModuleGraph {
        let names: BTreeSet<String> = sources
            .iter()
            .map(|(p, _)| module_name(p.as_ref()))
            .collect();
        let modules = sources
            .iter()
            .map(|(path, text)| {
                let name = module_name(path.as_ref());
                let code = without_test_items(&code_only(text.as_ref()));
                let imports = imports_of(&name, &code, &names);
                let module = Module {
                    name: name.clone(),
                    path: path.as_ref().to_owned(),
                    imports,
                    code,
                };
                (name, module)
            })
            .collect();
        ModuleGraph { modules }
    }
}

/// `a/b.rs` and `a/b/mod.rs` are `a::b`; `lib.rs`, the root, has no name.
fn module_name(path: &str) -> String {
    let stem = path.strip_suffix(".rs").unwrap_or(path);
    let stem = stem.strip_suffix("/mod").unwrap_or(stem);
    if stem == "lib" {
        return String::new();
    }
    stem.replace('/', "::")
}

/// The modules `code` (of module `name`) names, each with its first line.
fn imports_of(name: &str, code: &str, names: &BTreeSet<String>) -> BTreeMap<String, usize> {
    let mut imports = BTreeMap::new();
    for (line, segments) in path_mentions(code) {
        let Some(path) = absolute_path(name, &segments) else {
            continue;
        };
        if let Some(target) = longest_module(&path, names)
            && target != name
        {
            imports.entry(target).or_insert(line);
        }
    }
    imports
}

/// `segments` (which start with `crate`, `super`, `self` or the library's
/// name) as a path from the crate root, seen from module `name`.
fn absolute_path(name: &str, segments: &[String]) -> Option<Vec<String>> {
    let here: Vec<String> = name
        .split("::")
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    let (first, rest) = segments.split_first()?;
    let mut path = match first.as_str() {
        // The binary is a crate of its own: its `crate` is itself.
        "crate" if name == "main" => here,
        "crate" | "petstore_portfolio_server" => Vec::new(),
        "self" => here,
        "super" => {
            let mut parent = here;
            parent.pop()?;
            parent
        }
        _ => return None,
    };
    for segment in rest {
        match segment.as_str() {
            "super" => {
                path.pop()?;
            }
            "self" => {}
            _ => path.push(segment.clone()),
        }
    }
    Some(path)
}

/// The longest start of `path` that is a module of its own file: the rest
/// names items in it (`crate::error::Error::not_found` is in `error`).
fn longest_module(path: &[String], names: &BTreeSet<String>) -> Option<String> {
    (0..=path.len())
        .rev()
        .map(|length| path[..length].join("::"))
        .find(|candidate| names.contains(candidate))
}

/// What starts a path to another module. Not read: a bare path to a child
/// (`use transport::Transport` in `mail/mod.rs`), which is wiring anyway;
/// and `super` inside a non-test inline `mod` (the server has none) would
/// be misread as the file's parent.
const PATH_STARTS: [&str; 4] = [
    "crate::",
    "super::",
    "self::",
    "petstore_portfolio_server::",
];

/// Every path `code` names from one of [`PATH_STARTS`], in `use` or inline,
/// with groups expanded: each with the line of its last segment.
fn path_mentions(code: &str) -> Vec<(usize, Vec<String>)> {
    let bytes = code.as_bytes();
    let mut found = Vec::new();
    for start in 0..bytes.len() {
        let follows_a_name =
            start > 0 && (is_ident_byte(bytes[start - 1]) || bytes[start - 1] == b':');
        if follows_a_name
            || !PATH_STARTS
                .iter()
                .any(|p| bytes[start..].starts_with(p.as_bytes()))
        {
            continue;
        }
        let mut cursor = Cursor {
            text: bytes,
            at: start,
        };
        for (segments, at) in use_tree(&mut cursor) {
            found.push((line_at(code, at), segments));
        }
    }
    found
}

fn line_at(code: &str, at: usize) -> usize {
    code.as_bytes()[..at]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

fn is_ident_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_'
}

/// A reading position in ASCII code.
struct Cursor<'a> {
    text: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn skip_space(&mut self) {
        while self.text.get(self.at).is_some_and(u8::is_ascii_whitespace) {
            self.at += 1;
        }
    }

    /// Takes `token` if it comes next (after spaces).
    fn eat(&mut self, token: &str) -> bool {
        self.skip_space();
        let found = self.text[self.at..].starts_with(token.as_bytes());
        if found {
            self.at += token.len();
        }
        found
    }

    /// Takes the keyword `word` if it comes next, whole.
    fn eat_word(&mut self, word: &str) -> bool {
        let before = self.at;
        if self.eat(word) && !self.text.get(self.at).copied().is_some_and(is_ident_byte) {
            return true;
        }
        self.at = before;
        false
    }

    /// Takes the name that comes next, if one does.
    fn ident(&mut self) -> Option<String> {
        self.skip_space();
        let start = self.at;
        while self.text.get(self.at).copied().is_some_and(is_ident_byte) {
            self.at += 1;
        }
        let name = &self.text[start..self.at];
        (!name.is_empty() && !name[0].is_ascii_digit())
            .then(|| String::from_utf8_lossy(name).into_owned())
    }

    /// Moves past the bracket that closes the one just taken (`open`).
    fn close(&mut self, open: u8, close: u8) {
        let mut depth = 1;
        while let Some(&byte) = self.text.get(self.at) {
            self.at += 1;
            depth += usize::from(byte == open);
            depth -= usize::from(byte == close);
            if depth == 0 {
                return;
            }
        }
    }
}

/// The paths a use tree names, each with where its last segment stands:
/// `a::{b, c::{self, d as e}}` is `a::b`, `a::c`, `a::c::d`. Read from code
/// too, it stops where the path does (`crate::x::f(` is `crate::x::f`).
fn use_tree(cursor: &mut Cursor<'_>) -> Vec<(Vec<String>, usize)> {
    let mut prefix = Vec::new();
    let mut last = cursor.at;
    loop {
        if cursor.eat("{") {
            return group(cursor, &prefix);
        }
        if cursor.eat("*") {
            return vec![(prefix, last)];
        }
        cursor.skip_space();
        let at = cursor.at;
        let Some(segment) = cursor.ident() else {
            return vec![(prefix, last)];
        };
        prefix.push(segment);
        last = at;
        if !cursor.eat("::") {
            if cursor.eat_word("as") {
                cursor.ident();
            }
            return vec![(prefix, last)];
        }
    }
}

/// The items of a `{...}` group (just opened) after `prefix`; `self` in it
/// is the prefix itself.
fn group(cursor: &mut Cursor<'_>, prefix: &[String]) -> Vec<(Vec<String>, usize)> {
    let mut paths = Vec::new();
    while !cursor.eat("}") && cursor.at < cursor.text.len() {
        for (item, at) in use_tree(cursor) {
            let mut path = prefix.to_vec();
            path.extend(item.into_iter().filter(|s| s != "self"));
            paths.push((path, at));
        }
        if !cursor.eat(",") {
            cursor.close(b'{', b'}');
            break;
        }
    }
    paths
}

// ---------------------------------------------------------------------------
// Reading Rust as text

/// `text` with its comments and the insides of its string and character
/// literals blanked out, and every other non-ASCII character a space: code
/// only, in ASCII, each line where it was (line breaks are kept).
pub fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut code = String::with_capacity(text.len());
    let mut at = 0;
    while at < chars.len() {
        let (length, blank) = match comment_or_literal_len(&chars, at) {
            0 => (1, !chars[at].is_ascii()),
            length => (length, true),
        };
        for &c in &chars[at..at + length] {
            code.push(if blank && c != '\n' { ' ' } else { c });
        }
        at += length;
    }
    code
}

/// How many characters the comment or literal at `at` takes; 0 for none.
fn comment_or_literal_len(chars: &[char], at: usize) -> usize {
    let next = |k: usize| chars.get(at + k).copied().unwrap_or('\0');
    let before = |k: usize| at.checked_sub(k).and_then(|i| chars.get(i)).copied();
    let name_before = |k: usize| before(k).is_some_and(|c| c.is_alphanumeric() || c == '_');
    match (next(0), next(1)) {
        ('/', '/') => through(chars, at + 1, '\n') + 1,
        ('/', '*') => block_comment_len(chars, at),
        ('"', _) => string_len(chars, at),
        // r"..", r#".."#, and br".." (an `r` after a lone `b`).
        ('r', '"' | '#') if !name_before(1) || (before(1) == Some('b') && !name_before(2)) => {
            raw_string_len(chars, at)
        }
        // '\n', '\'', '\u{..}': the quote that closes comes after the escape.
        ('\'', '\\') => through(chars, at + 3, '\'') + 3,
        // 'x'; but 'a in `&'a str` is a lifetime.
        ('\'', _) if next(2) == '\'' => 3,
        _ => 0,
    }
}

/// How many characters from `from` up to and with the first `end`; or to
/// the end of the text.
fn through(chars: &[char], from: usize, end: char) -> usize {
    chars
        .get(from..)
        .and_then(|rest| rest.iter().position(|&c| c == end))
        .map_or(chars.len().saturating_sub(from), |i| i + 1)
}

fn block_comment_len(chars: &[char], at: usize) -> usize {
    let mut depth = 0;
    let mut i = at;
    while i + 1 < chars.len() {
        match (chars[i], chars[i + 1]) {
            ('/', '*') => {
                depth += 1;
                i += 2;
            }
            ('*', '/') => {
                depth -= 1;
                i += 2;
                if depth == 0 {
                    return i - at;
                }
            }
            _ => i += 1,
        }
    }
    chars.len() - at
}

fn string_len(chars: &[char], at: usize) -> usize {
    let mut i = at + 1;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            '"' => return i + 1 - at,
            _ => i += 1,
        }
    }
    chars.len() - at
}

/// `r` + n `#` + `"` ... `"` + n `#`; 0 when `at` starts a raw identifier
/// (`r#type`) instead.
fn raw_string_len(chars: &[char], at: usize) -> usize {
    let hashes = chars[at + 1..].iter().take_while(|&&c| c == '#').count();
    if chars.get(at + 1 + hashes) != Some(&'"') {
        return 0;
    }
    let closing: Vec<char> = std::iter::once('"')
        .chain(std::iter::repeat_n('#', hashes))
        .collect();
    (at + 2 + hashes..chars.len())
        .find(|&i| chars[i..].starts_with(&closing))
        .map_or(chars.len() - at, |i| i + closing.len() - at)
}

/// `code` without its `#[cfg(test)]` modules (`mod tests { ... }`, brace
/// matched) and imports: what only tests use is no dependency of the server.
fn without_test_items(code: &str) -> String {
    const TEST_ONLY: &str = "#[cfg(test)]";
    let mut kept = code.as_bytes().to_vec();
    let mut from = 0;
    while let Some(found) = code[from..].find(TEST_ONLY) {
        let start = from + found;
        let end = test_item_end(code.as_bytes(), start + TEST_ONLY.len());
        for byte in &mut kept[start..end] {
            if *byte != b'\n' {
                *byte = b' ';
            }
        }
        from = end;
    }
    String::from_utf8_lossy(&kept).into_owned()
}

/// Where the test-only module or import that starts at `at` (after its
/// `#[cfg(test)]`) ends; `at` itself for another kind of item.
fn test_item_end(code: &[u8], at: usize) -> usize {
    let mut cursor = Cursor { text: code, at };
    // Its other attributes (`#[allow(...)]`) and visibility come first.
    while cursor.eat("#[") {
        cursor.close(b'[', b']');
    }
    if cursor.eat_word("pub") && cursor.eat("(") {
        cursor.close(b'(', b')');
    }
    if cursor.eat_word("use") {
        return code[cursor.at..]
            .iter()
            .position(|&b| b == b';')
            .map_or(code.len(), |i| cursor.at + i + 1);
    }
    if cursor.eat_word("mod") && cursor.ident().is_some() {
        if cursor.eat(";") {
            return cursor.at;
        }
        if cursor.eat("{") {
            cursor.close(b'{', b'}');
            return cursor.at;
        }
    }
    at
}

// ---------------------------------------------------------------------------
// Check 1: no import circles

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
        file: first.map(Module::file).unwrap_or_default(),
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

// ---------------------------------------------------------------------------
// Check 2: no import up the layers

/// Every import of a module in a higher layer than the importer's, and every
/// file the table places in no layer, or in more than one.
pub fn upward_imports(graph: &ModuleGraph) -> Vec<Finding> {
    let mut findings = Vec::new();
    let mut layers = BTreeMap::new();
    for module in graph.modules.values() {
        match layers_of(&module.path)[..] {
            [layer] => {
                layers.insert(module.name.as_str(), layer);
            }
            [] => findings.push(Finding {
                file: module.file(),
                line: 1,
                why: "not placed in a layer: add it to LAYERS in xtask/src/layers.rs".to_owned(),
            }),
            [first, second, ..] => findings.push(Finding {
                file: module.file(),
                line: 1,
                why: format!(
                    "placed in two layers, {} and {}: LAYERS in xtask/src/layers.rs must say one",
                    LAYERS[first].name, LAYERS[second].name
                ),
            }),
        }
    }
    for module in graph.modules.values() {
        let Some(&own) = layers.get(module.name.as_str()) else {
            continue;
        };
        for (target, &line) in &module.imports {
            // Layers are listed top to bottom: a smaller index is higher.
            if let Some(&theirs) = layers.get(target.as_str())
                && theirs < own
            {
                findings.push(Finding {
                    file: module.file(),
                    line,
                    why: format!(
                        "{} ({}) imports {} ({}), a higher layer",
                        module.shown(),
                        LAYERS[own].name,
                        shown(target),
                        LAYERS[theirs].name
                    ),
                });
            }
        }
    }
    in_order(findings)
}

/// The indexes in [`LAYERS`] of the layers that hold `path`.
pub fn layers_of(path: &str) -> Vec<usize> {
    LAYERS
        .iter()
        .enumerate()
        .filter(|(_, layer)| layer_holds(layer, path))
        .map(|(index, _)| index)
        .collect()
}

fn layer_holds(layer: &Layer, path: &str) -> bool {
    let (taken_out, put_in): (Vec<&str>, Vec<&str>) =
        layer.files.iter().partition(|p| p.starts_with('!'));
    put_in.iter().any(|p| glob_matches(p, path))
        && !taken_out.iter().any(|p| glob_matches(&p[1..], path))
}

/// Whether `path` (`a/b.rs`) matches `pattern`: `*` within a name, `**`
/// for any number of folders, `{a,b}` for either.
pub fn glob_matches(pattern: &str, path: &str) -> bool {
    let path: Vec<&str> = path.split('/').collect();
    without_braces(pattern)
        .iter()
        .any(|p| names_match(&p.split('/').collect::<Vec<_>>(), &path))
}

/// `a/{b,c}.rs` as `a/b.rs` and `a/c.rs`.
fn without_braces(pattern: &str) -> Vec<String> {
    let Some((head, rest)) = pattern.split_once('{') else {
        return vec![pattern.to_owned()];
    };
    let Some((choices, tail)) = rest.split_once('}') else {
        return vec![pattern.to_owned()];
    };
    choices
        .split(',')
        .flat_map(|choice| without_braces(&format!("{head}{choice}{tail}")))
        .collect()
}

fn names_match(pattern: &[&str], path: &[&str]) -> bool {
    match pattern.split_first() {
        None => path.is_empty(),
        Some((&"**", rest)) => (0..=path.len()).any(|skip| names_match(rest, &path[skip..])),
        Some((name, rest)) => path
            .split_first()
            .is_some_and(|(first, others)| name_matches(name, first) && names_match(rest, others)),
    }
}

/// One file or folder name against a pattern with `*`s.
fn name_matches(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((head, tail)) => {
            name.starts_with(head)
                && (head.len()..=name.len())
                    .any(|from| name.is_char_boundary(from) && name_matches(tail, &name[from..]))
        }
    }
}

// ---------------------------------------------------------------------------
// Check 3: handlers stay thin, operator commands skip them

/// Every handler module that opens a transaction, and every `cli/` module
/// that imports a module of the HTTP layer.
pub fn handler_rules(graph: &ModuleGraph) -> Vec<Finding> {
    let mut findings = transactions_in_handlers(graph);
    findings.extend(cli_imports_of_handlers(graph));
    in_order(findings)
}

fn in_http_layer(path: &str) -> bool {
    layers_of(path)
        .iter()
        .any(|&layer| LAYERS[layer].name == HTTP)
}

/// Lines of HTTP-layer modules that open a transaction: a transaction holds
/// a request's steps together, which is the operations layer's work.
fn transactions_in_handlers(graph: &ModuleGraph) -> Vec<Finding> {
    let mut findings = Vec::new();
    for module in graph.modules.values().filter(|m| in_http_layer(&m.path)) {
        for (index, line) in module.code.lines().enumerate() {
            if let Some(opener) = TRANSACTION_OPENERS.iter().find(|o| line.contains(*o)) {
                findings.push(Finding {
                    file: module.file(),
                    line: index + 1,
                    why: format!(
                        "a handler module opens a transaction (`{opener}`): an operation should"
                    ),
                });
            }
        }
    }
    findings
}

/// Imports of HTTP-layer modules by operator commands, which should call
/// the operations the handlers call, not the handlers' modules.
fn cli_imports_of_handlers(graph: &ModuleGraph) -> Vec<Finding> {
    let mut findings = Vec::new();
    for module in graph
        .modules
        .values()
        .filter(|m| m.path.starts_with("cli/"))
    {
        for (target, &line) in &module.imports {
            let Some(imported) = graph.modules.get(target) else {
                continue;
            };
            if in_http_layer(&imported.path) {
                findings.push(Finding {
                    file: module.file(),
                    line,
                    why: format!(
                        "{} imports {}, a module of the HTTP layer: operator commands call operations",
                        module.shown(),
                        imported.shown()
                    ),
                });
            }
        }
    }
    findings
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

    // The module checks on the server as it is.

    fn assert_no_findings(check: ModuleCheck) {
        let graph =
            module_graph(&crate::codegen::workspace_root()).unwrap_or_else(|e| panic!("{e:#}"));
        let lines: Vec<String> = check(&graph).iter().map(ToString::to_string).collect();
        assert!(
            lines.is_empty(),
            "{} finding(s):\n{}",
            lines.len(),
            lines.join("\n")
        );
    }

    #[test]
    fn the_servers_modules_import_one_another_without_circles() {
        assert_no_findings(import_circles);
    }

    #[test]
    fn no_server_module_imports_a_higher_layer() {
        assert_no_findings(upward_imports);
    }

    #[test]
    fn no_handler_opens_a_transaction_and_no_cli_module_imports_a_handler() {
        assert_no_findings(handler_rules);
    }

    #[test]
    fn every_server_file_is_in_exactly_one_layer() {
        let graph =
            module_graph(&crate::codegen::workspace_root()).unwrap_or_else(|e| panic!("{e:#}"));
        let misplaced: Vec<String> = upward_imports(&graph)
            .iter()
            .filter(|f| f.why.contains("layer:") || f.why.contains("layers,"))
            .map(ToString::to_string)
            .collect();
        assert!(misplaced.is_empty(), "{}", misplaced.join("\n"));
    }

    // The module graph, on small made-up sources.

    fn graph(files: &[(&str, &str)]) -> ModuleGraph {
        ModuleGraph::from_sources(files)
    }

    /// What `module` imports, as (module, line).
    fn imports<'a>(graph: &'a ModuleGraph, module: &str) -> Vec<(&'a str, usize)> {
        graph.modules[module]
            .imports
            .iter()
            .map(|(name, &line)| (name.as_str(), line))
            .collect()
    }

    fn empty(paths: &[&'static str]) -> Vec<(&'static str, &'static str)> {
        paths.iter().map(|&path| (path, "")).collect()
    }

    #[test]
    fn grouped_uses_name_each_module_at_its_line() {
        let a = "use crate::{\n    b,\n    c::{d, self as cee},\n    e::Item,\n};\n\
                 fn f() { crate::f::g::<u8>(); }";
        let mut files = empty(&["lib.rs", "b.rs", "c/mod.rs", "c/d.rs", "e.rs", "f.rs"]);
        files.push(("a.rs", a));
        let graph = graph(&files);
        assert_eq!(
            imports(&graph, "a"),
            [("b", 2), ("c", 3), ("c::d", 3), ("e", 4), ("f", 6)]
        );
    }

    #[test]
    fn super_and_self_are_resolved_from_the_file() {
        let y = "use super::z::Thing;\nuse super::super::top;\n\
                 fn f() { self::inner::g(); super::z::h(); }";
        let mut files = empty(&["lib.rs", "top.rs", "x/mod.rs", "x/z.rs", "x/y/inner.rs"]);
        files.push(("x/y.rs", y));
        let graph = graph(&files);
        assert_eq!(
            imports(&graph, "x::y"),
            [("top", 2), ("x::y::inner", 3), ("x::z", 1)]
        );
    }

    #[test]
    fn tests_comments_and_literals_name_nothing() {
        let a = r##"use crate::b;
// use crate::c;
/* crate::d::f() /* nested: crate::d */ */
const S: &str = "crate::e \" crate::e";
const R: &str = r#"crate::e "quoted" "#;
const C: [char; 4] = ['"', '\'', '\n', '\"']; fn f<'a>(x: &'a str) { crate::f::g() }
#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use crate::c;
    fn t() { if true { crate::d::x(); } }
}
#[cfg(test)]
use crate::e;
fn after() { crate::g::h(); }
"##;
        let mut files = empty(&["lib.rs", "b.rs", "c.rs", "d.rs", "e.rs", "f.rs", "g.rs"]);
        files.push(("a.rs", a));
        let graph = graph(&files);
        assert_eq!(imports(&graph, "a"), [("b", 1), ("f", 6), ("g", 15)]);
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
        let found: Vec<String> = import_circles(&circle)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            found,
            [
                "server/src/a/mod.rs:2: import circle: a (line 2) -> c (line 1) -> a::b (line 1) -> a; \
              the circle's 3 modules: a, a::b, c"
            ]
        );
    }

    #[test]
    fn an_import_up_the_layers_and_an_unplaced_file_are_found() {
        let graph = graph(&[
            ("lib.rs", ""),
            ("error.rs", ""),
            ("clock.rs", "use crate::config::Config;"),
            ("config/mod.rs", "//! Settings.\nuse crate::error::Error;"),
            ("somewhere.rs", ""),
        ]);
        let found: Vec<String> = upward_imports(&graph)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            found,
            [
                "server/src/config/mod.rs:2: config (foundation) imports error (HTTP), a higher layer",
                "server/src/somewhere.rs:1: not placed in a layer: add it to LAYERS in xtask/src/layers.rs",
            ]
        );
    }

    #[test]
    fn the_layer_table_reads_its_patterns() {
        let layer =
            |path: &str| -> Vec<&str> { layers_of(path).iter().map(|&i| LAYERS[i].name).collect() };
        assert_eq!(layer("access/keys.rs"), ["state"]);
        assert_eq!(layer("access/credentials.rs"), ["HTTP"]);
        assert_eq!(layer("access/db.rs"), ["storage"]);
        assert_eq!(layer("storage/mod.rs"), ["storage"]);
        assert_eq!(layer("storage/error.rs"), ["foundation"]);
        assert_eq!(layer("petstore/store.rs"), ["HTTP"]);
        assert_eq!(layer("petstore/ops/pets/mod.rs"), ["operations"]);
        assert_eq!(layer("config/portfolio.rs"), ["foundation"]);
        assert_eq!(layer("portfolio/admin/outbox.rs"), ["HTTP"]);
        assert!(layer("portfolio/admin/deeper/x.rs").is_empty());
        assert!(layer("petstore/storefront.rs").is_empty());
    }

    #[test]
    fn handlers_that_open_transactions_and_cli_imports_of_handlers_are_found() {
        let graph = graph(&[
            ("lib.rs", ""),
            (
                "petstore/pet.rs",
                "fn f() {\n    db.begin_write().await;\n    // db.begin()\n}",
            ),
            ("petstore/db/pets.rs", "fn g() { db.begin_write(); }"),
            (
                "cli/keys.rs",
                "use crate::petstore::db::pets;\nuse crate::petstore::pet;",
            ),
        ]);
        let found: Vec<String> = handler_rules(&graph)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            found,
            [
                "server/src/cli/keys.rs:2: cli::keys imports petstore::pet, a module of the HTTP \
                 layer: operator commands call operations",
                "server/src/petstore/pet.rs:2: a handler module opens a transaction \
                 (`begin_write(`): an operation should",
            ]
        );
    }
}
