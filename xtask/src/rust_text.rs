//! Rust source read as text (no compiler): its code apart from comments,
//! literals and test modules, and each crate's module graph, which module
//! names which, for the checks of `layers`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::Context as _;

/// Every `.rs` file under `dir`, sorted.
pub fn rust_files(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
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

/// Every `.rs` file under `folder` (relative to `root`), sorted, as its
/// path from `root` (with `/`) and its text: what each check reads.
pub fn read_rust_files(root: &Path, folder: &str) -> anyhow::Result<Vec<(String, String)>> {
    rust_files(&root.join(folder))?
        .into_iter()
        .map(|file| {
            let relative = file
                .strip_prefix(root)
                .unwrap_or(&file)
                .to_string_lossy()
                .replace('\\', "/");
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("cannot read {}", file.display()))?;
            Ok((relative, text))
        })
        .collect()
}

/// A crate whose source the checks read.
#[derive(Debug, Clone, Copy)]
pub struct CrateSource {
    /// Its source folder, relative to the workspace root.
    pub src: &'static str,
    /// The file that is the crate's root (`lib.rs`, or `main.rs` for a
    /// binary alone).
    pub root: &'static str,
    /// The name other crates of its package use for it (`main.rs` beside a
    /// library names the library so).
    pub name: &'static str,
}

/// The server, its SDK and its benchmarks.
pub const SERVER: CrateSource = CrateSource {
    src: "server/src",
    root: "lib.rs",
    name: "petstore_portfolio_server",
};
pub const RUNTIME: CrateSource = CrateSource {
    src: "runtime/src",
    root: "lib.rs",
    name: "petstore_portfolio_runtime",
};
pub const CLIENT: CrateSource = CrateSource {
    src: "client/src",
    root: "lib.rs",
    name: "petstore_portfolio_client",
};
pub const BENCH: CrateSource = CrateSource {
    src: "bench/src",
    root: "main.rs",
    name: "petstore_portfolio_bench",
};

/// One source file and the modules it names.
#[derive(Debug, Clone)]
pub struct Module {
    /// `a::b` for `a/b.rs` or `a/b/mod.rs`; empty for the crate's root.
    pub name: String,
    /// The file below the crate's source folder.
    pub path: String,
    /// The file as findings name it, from the workspace root.
    pub file: String,
    /// Every other module it names, with the first line that names it.
    pub imports: BTreeMap<String, usize>,
    /// Its code: comments, literals and test modules blanked out, lines kept.
    pub code: String,
}

impl Module {
    /// Its name as findings write it.
    pub fn shown(&self) -> &str {
        shown(&self.name)
    }
}

pub fn shown(name: &str) -> &str {
    if name.is_empty() { "crate" } else { name }
}

/// A crate's modules by name.
#[derive(Debug, Clone, Default)]
pub struct ModuleGraph {
    pub modules: BTreeMap<String, Module>,
}

/// Reads every file of `krate` into a [`ModuleGraph`].
pub fn module_graph(root: &Path, krate: CrateSource) -> anyhow::Result<ModuleGraph> {
    let src = root.join(krate.src);
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
    Ok(ModuleGraph::from_sources(krate, &sources))
}

impl ModuleGraph {
    /// The graph of `krate`'s files given as (path below its source
    /// folder, text).
    pub fn from_sources(
        krate: CrateSource,
        sources: &[(impl AsRef<str>, impl AsRef<str>)],
    ) -> ModuleGraph {
        let names: BTreeSet<String> = sources
            .iter()
            .map(|(p, _)| module_name(krate, p.as_ref()))
            .collect();
        let modules = sources
            .iter()
            .map(|(path, text)| {
                let name = module_name(krate, path.as_ref());
                let code = shipped_code(text.as_ref());
                let imports = imports_of(krate, &name, &code, &names);
                let module = Module {
                    name: name.clone(),
                    path: path.as_ref().to_owned(),
                    file: format!("{}/{}", krate.src, path.as_ref()),
                    imports,
                    code,
                };
                (name, module)
            })
            .collect();
        ModuleGraph { modules }
    }
}

/// `a/b.rs` and `a/b/mod.rs` are `a::b`; the crate's root has no name.
fn module_name(krate: CrateSource, path: &str) -> String {
    if path == krate.root {
        return String::new();
    }
    let stem = path.strip_suffix(".rs").unwrap_or(path);
    let stem = stem.strip_suffix("/mod").unwrap_or(stem);
    stem.replace('/', "::")
}

/// The modules `code` (of module `name`) names, each with its first line.
fn imports_of(
    krate: CrateSource,
    name: &str,
    code: &str,
    names: &BTreeSet<String>,
) -> BTreeMap<String, usize> {
    let mut imports = BTreeMap::new();
    for (line, segments) in path_mentions(krate, code) {
        let Some(path) = absolute_path(krate, name, &segments) else {
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

/// `segments` (which start with `crate`, `super`, `self` or the crate's
/// name) as a path from the crate root, seen from module `name`.
fn absolute_path(krate: CrateSource, name: &str, segments: &[String]) -> Option<Vec<String>> {
    let here: Vec<String> = name
        .split("::")
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    let (first, rest) = segments.split_first()?;
    let mut path = match first.as_str() {
        // A binary beside a library is a crate of its own: its `crate` is
        // itself.
        "crate" if name == "main" => here,
        "crate" => Vec::new(),
        other if other == krate.name => Vec::new(),
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

/// What starts a path to another module, besides the crate's own name.
/// Not read: a bare path to a child (`use transport::Transport` in
/// `mail/mod.rs`), which is wiring anyway; and `super` inside a non-test
/// inline `mod` (there is none) would be misread as the file's parent.
const PATH_STARTS: [&str; 3] = ["crate::", "super::", "self::"];

/// Every path `code` names from one of [`PATH_STARTS`] or the crate's name,
/// in `use` or inline, with groups expanded: each with the line of its last
/// segment.
fn path_mentions(krate: CrateSource, code: &str) -> Vec<(usize, Vec<String>)> {
    let bytes = code.as_bytes();
    let by_name = format!("{}::", krate.name);
    let mut found = Vec::new();
    for start in 0..bytes.len() {
        let follows_a_name =
            start > 0 && (is_ident_byte(bytes[start - 1]) || bytes[start - 1] == b':');
        if follows_a_name
            || !PATH_STARTS
                .iter()
                .chain([&by_name.as_str()])
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

/// What of `text` is built into the crate: [`code_only`] without its
/// test-only modules and imports, each line where it was.
pub fn shipped_code(text: &str) -> String {
    without_test_items(&code_only(text))
}

/// `code` without its test-only modules and imports (`#[cfg(test)]`, or
/// `#[cfg(all(test, ...))]`; modules brace matched): what only tests use
/// is no dependency of the crate.
fn without_test_items(code: &str) -> String {
    const TEST_ONLY: [&str; 2] = ["#[cfg(test)]", "#[cfg(all(test,"];
    let mut kept = code.as_bytes().to_vec();
    let mut from = 0;
    while let Some((start, marker)) = TEST_ONLY
        .iter()
        .filter_map(|marker| Some((from + code[from..].find(marker)?, marker)))
        .min()
    {
        // Past the attribute's closing bracket.
        let mut cursor = Cursor {
            text: code.as_bytes(),
            at: start + 2,
        };
        cursor.close(b'[', b']');
        let end = test_item_end(code.as_bytes(), cursor.at.max(start + marker.len()));
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

#[cfg(test)]
mod tests {
    use super::*;

    // The module graph, on small made-up sources.

    fn graph(files: &[(&str, &str)]) -> ModuleGraph {
        ModuleGraph::from_sources(SERVER, files)
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
#[cfg(all(test, feature = "tls"))]
mod tls_tests { fn t() { crate::c::x(); } }
"##;
        let mut files = empty(&["lib.rs", "b.rs", "c.rs", "d.rs", "e.rs", "f.rs", "g.rs"]);
        files.push(("a.rs", a));
        let graph = graph(&files);
        assert_eq!(imports(&graph, "a"), [("b", 1), ("f", 6), ("g", 15)]);
    }
}
