//! How a document changed since its last release, and whether the change
//! breaks a client written against the release: `cargo xtask check`
//! compares each working document with the latest copy in
//! `openapi/released/` (written by `cargo xtask release`), and refuses a
//! breaking change unless the major part of `info.version` went up.
//!
//! The rules, each a function below with a test of its own:
//! - a path, an operation, a parameter, a response code, a property or an
//!   enum value removed;
//! - a parameter or a property made required (or a required one added);
//! - a type changed, or a format, a pattern or a bound (length, value,
//!   items) narrowed;
//! - a security requirement added where none was needed, or an accepted
//!   way of signing in removed.
//!
//! Everything else that differs is additive (a path, an operation, an
//! optional parameter, a response, a property, an enum value added) or a
//! deprecation, and is listed.
//!
//! Each change names a JSON pointer into the document it is about: the old
//! one for what went, the new one for what came.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use openapiv3::{
    OpenAPI, Operation, Parameter, ParameterSchemaOrContent, PathItem, ReferenceOr, Schema,
    SchemaKind, Type,
};

/// What kind of change it is for a client of the older document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// A client of the older document may fail.
    Breaking,
    /// Marked deprecated.
    Deprecated,
    /// New; nothing a client did stops working.
    Additive,
}

/// One difference between two versions of a document.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Change {
    pub kind: Kind,
    /// Where, as a JSON pointer (`/paths/~1pet~1{petId}/get/responses/404`).
    pub pointer: String,
    /// What, in a sentence.
    pub what: String,
    /// The operation it belongs to, if any (`getPetById`), for the changelog.
    pub operation: Option<String>,
}

impl std::fmt::Display for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.pointer, self.what)
    }
}

/// Every change from `old` to `new`, breaking ones first.
pub fn compare(old: &OpenAPI, new: &OpenAPI) -> Vec<Change> {
    let mut diff = Diff {
        old,
        new,
        changes: Vec::new(),
        operation: None,
        seen: BTreeSet::new(),
    };
    diff.paths();
    let mut changes = diff.changes;
    changes.sort();
    changes.dedup();
    changes
}

/// The comparison under way.
struct Diff<'a> {
    old: &'a OpenAPI,
    new: &'a OpenAPI,
    changes: Vec<Change>,
    /// The operation being compared, named in each change.
    operation: Option<String>,
    /// Pairs of named schemas already compared (schemas refer to each
    /// other, and to themselves).
    seen: BTreeSet<(String, String, bool)>,
}

/// A JSON pointer's part: `~` and `/` escaped.
fn escape(part: &str) -> String {
    part.replace('~', "~0").replace('/', "~1")
}

/// Where a schema is used: what a client sends (a request) or reads (an
/// answer). The rules are the same; the sentence says which.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Request,
    Response,
}

impl Diff<'_> {
    fn push(&mut self, kind: Kind, pointer: String, what: String) {
        self.changes.push(Change {
            kind,
            pointer,
            what,
            operation: self.operation.clone(),
        });
    }

    fn paths(&mut self) {
        for (path, old_item) in &self.old.paths.paths {
            let pointer = format!("/paths/{}", escape(path));
            let (Some(old_item), new_item) = (
                old_item.as_item(),
                self.new
                    .paths
                    .paths
                    .get(path)
                    .and_then(ReferenceOr::as_item),
            ) else {
                continue;
            };
            match new_item {
                None => self.push(Kind::Breaking, pointer, format!("path {path} removed")),
                Some(new_item) => self.path_item(&pointer, old_item, new_item),
            }
        }
        for (path, new_item) in &self.new.paths.paths {
            if !self.old.paths.paths.contains_key(path) {
                let pointer = format!("/paths/{}", escape(path));
                if let Some(item) = new_item.as_item() {
                    // Each of its operations is added.
                    self.path_item(&pointer, &PathItem::default(), item);
                }
            }
        }
    }

    fn path_item(&mut self, pointer: &str, old: &PathItem, new: &PathItem) {
        let new_operations: Vec<(&str, &Operation)> = new.iter().collect();
        for (method, old_op) in old.iter() {
            self.operation = old_op.operation_id.clone();
            let here = format!("{pointer}/{method}");
            match new_operations.iter().find(|(m, _)| *m == method) {
                None => self.push(
                    Kind::Breaking,
                    here,
                    format!("operation {} removed", name_of(old_op, method, pointer)),
                ),
                Some((_, new_op)) => self.operation_pair(&here, old_op, new_op),
            }
        }
        for (method, new_op) in new_operations {
            if !old.iter().any(|(m, _)| m == method) {
                self.operation = new_op.operation_id.clone();
                self.push(
                    Kind::Additive,
                    format!("{pointer}/{method}"),
                    format!("operation {} added", name_of(new_op, method, pointer)),
                );
            }
        }
        self.operation = None;
    }

    fn operation_pair(&mut self, pointer: &str, old: &Operation, new: &Operation) {
        if old.operation_id != new.operation_id {
            self.push(
                Kind::Breaking,
                format!("{pointer}/operationId"),
                format!(
                    "operationId {} renamed {}",
                    old.operation_id.as_deref().unwrap_or("-"),
                    new.operation_id.as_deref().unwrap_or("-")
                ),
            );
        }
        if new.deprecated && !old.deprecated {
            self.push(
                Kind::Deprecated,
                format!("{pointer}/deprecated"),
                "operation deprecated".to_owned(),
            );
        }
        self.parameters(pointer, old, new);
        self.request_body(pointer, old, new);
        self.responses(pointer, old, new);
        self.security(pointer, old, new);
    }

    fn parameters(&mut self, pointer: &str, old: &Operation, new: &Operation) {
        let old_params: Vec<&Parameter> = old
            .parameters
            .iter()
            .filter_map(|p| resolve_parameter(self.old, p))
            .collect();
        let new_params: Vec<(usize, &Parameter)> = new
            .parameters
            .iter()
            .enumerate()
            .filter_map(|(i, p)| resolve_parameter(self.new, p).map(|p| (i, p)))
            .collect();
        for (i, old_param) in old_params.iter().enumerate() {
            let old_data = old_param.parameter_data_ref();
            let here = format!("{pointer}/parameters/{i}");
            let found = new_params
                .iter()
                .find(|(_, p)| same_parameter(p, old_param));
            let Some((j, new_param)) = found else {
                self.push(
                    Kind::Breaking,
                    here,
                    format!("parameter {} removed", describe_parameter(old_param)),
                );
                continue;
            };
            let new_data = new_param.parameter_data_ref();
            let there = format!("{pointer}/parameters/{j}");
            if new_data.required && !old_data.required {
                self.push(
                    Kind::Breaking,
                    format!("{there}/required"),
                    format!("parameter {} made required", describe_parameter(new_param)),
                );
            }
            if new_data.deprecated == Some(true) && old_data.deprecated != Some(true) {
                self.push(
                    Kind::Deprecated,
                    format!("{there}/deprecated"),
                    format!("parameter {} deprecated", describe_parameter(new_param)),
                );
            }
            if let (
                ParameterSchemaOrContent::Schema(old_schema),
                ParameterSchemaOrContent::Schema(new_schema),
            ) = (&old_data.format, &new_data.format)
            {
                self.schema(
                    &format!("{there}/schema"),
                    old_schema,
                    new_schema,
                    Side::Request,
                );
            }
        }
        for (j, new_param) in &new_params {
            if !old_params.iter().any(|p| same_parameter(p, new_param)) {
                let here = format!("{pointer}/parameters/{j}");
                let (kind, what) = if new_param.parameter_data_ref().required {
                    (Kind::Breaking, "a required parameter added")
                } else {
                    (Kind::Additive, "parameter added")
                };
                self.push(
                    kind,
                    here,
                    format!("{what}: {}", describe_parameter(new_param)),
                );
            }
        }
    }

    fn request_body(&mut self, pointer: &str, old: &Operation, new: &Operation) {
        let old_body = old
            .request_body
            .as_ref()
            .and_then(|b| resolve_body(self.old, b));
        let new_body = new
            .request_body
            .as_ref()
            .and_then(|b| resolve_body(self.new, b));
        match (old_body, new_body) {
            (None, Some(body)) if body.required => self.push(
                Kind::Breaking,
                format!("{pointer}/requestBody"),
                "a required request body added".to_owned(),
            ),
            (Some(old_body), Some(new_body)) => {
                if new_body.required && !old_body.required {
                    self.push(
                        Kind::Breaking,
                        format!("{pointer}/requestBody/required"),
                        "request body made required".to_owned(),
                    );
                }
                self.content(
                    &format!("{pointer}/requestBody"),
                    &old_body.content,
                    &new_body.content,
                    Side::Request,
                    |media| format!("request media type {media} no longer accepted"),
                );
            }
            _ => {}
        }
    }

    /// A body's media types (a request's or an answer's): one gone breaks
    /// (`gone` says how), the schemas of the others are compared.
    fn content(
        &mut self,
        pointer: &str,
        old: &openapiv3::Content,
        new: &openapiv3::Content,
        side: Side,
        gone: impl Fn(&str) -> String,
    ) {
        for (media, old_media) in old {
            let here = format!("{pointer}/content/{}", escape(media));
            match new.get(media) {
                None => self.push(Kind::Breaking, here, gone(media)),
                Some(new_media) => {
                    if let (Some(o), Some(n)) = (&old_media.schema, &new_media.schema) {
                        self.schema(&format!("{here}/schema"), o, n, side);
                    }
                }
            }
        }
    }

    fn responses(&mut self, pointer: &str, old: &Operation, new: &Operation) {
        for (status, old_response) in &old.responses.responses {
            let here = format!("{pointer}/responses/{status}");
            let Some(new_response) = new.responses.responses.get(status) else {
                self.push(Kind::Breaking, here, format!("response {status} removed"));
                continue;
            };
            let (Some(old_response), Some(new_response)) = (
                resolve_response(self.old, old_response),
                resolve_response(self.new, new_response),
            ) else {
                continue;
            };
            self.content(
                &here,
                &old_response.content,
                &new_response.content,
                Side::Response,
                |media| format!("response {status} no longer comes as {media}"),
            );
        }
        for status in new.responses.responses.keys() {
            if !old.responses.responses.contains_key(status) {
                self.push(
                    Kind::Additive,
                    format!("{pointer}/responses/{status}"),
                    format!("response {status} added"),
                );
            }
        }
    }

    fn security(&mut self, pointer: &str, old: &Operation, new: &Operation) {
        let old_ways = ways_in(old.security.as_ref().or(self.old.security.as_ref()));
        let new_ways = ways_in(new.security.as_ref().or(self.new.security.as_ref()));
        let open = |ways: &[BTreeSet<String>]| ways.iter().any(BTreeSet::is_empty);
        let here = format!("{pointer}/security");
        if open(&old_ways) && !open(&new_ways) {
            self.push(
                Kind::Breaking,
                here,
                "a security requirement added: a caller without credentials is refused".to_owned(),
            );
            return;
        }
        let named = |way: &BTreeSet<String>| way.iter().cloned().collect::<Vec<_>>().join(" + ");
        for way in old_ways.iter().filter(|way| !way.is_empty()) {
            if !new_ways.contains(way) {
                let what = format!("a way of signing in removed: {}", named(way));
                self.push(Kind::Breaking, here.clone(), what);
            }
        }
        for way in new_ways.iter().filter(|way| !way.is_empty()) {
            if !old_ways.contains(way) {
                let what = format!("a way of signing in added: {}", named(way));
                self.push(Kind::Additive, here.clone(), what);
            }
        }
    }

    /// Compares two schemas at `pointer`, following references (each pair
    /// of named schemas once).
    fn schema(
        &mut self,
        pointer: &str,
        old: &ReferenceOr<Schema>,
        new: &ReferenceOr<Schema>,
        side: Side,
    ) {
        if let (ReferenceOr::Reference { reference: o }, ReferenceOr::Reference { reference: n }) =
            (old, new)
            && !self
                .seen
                .insert((o.clone(), n.clone(), side == Side::Request))
        {
            return;
        }
        let (Some(old), Some(new)) = (resolve_schema(self.old, old), resolve_schema(self.new, new))
        else {
            return;
        };
        self.schema_kind(pointer, old, new, side);
    }

    fn schema_kind(&mut self, pointer: &str, old: &Schema, new: &Schema, side: Side) {
        match (&old.schema_kind, &new.schema_kind) {
            (SchemaKind::Type(old_type), SchemaKind::Type(new_type)) => {
                self.typed(pointer, old_type, new_type, side);
            }
            (SchemaKind::AllOf { all_of: o }, SchemaKind::AllOf { all_of: n })
            | (SchemaKind::OneOf { one_of: o }, SchemaKind::OneOf { one_of: n })
            | (SchemaKind::AnyOf { any_of: o }, SchemaKind::AnyOf { any_of: n }) => {
                for (i, (o, n)) in o.iter().zip(n).enumerate() {
                    self.schema(&format!("{pointer}/{i}"), o, n, side);
                }
            }
            (SchemaKind::Any(_), _) => {}
            (old_kind, new_kind) if kind_name(old_kind) != kind_name(new_kind) => self.push(
                Kind::Breaking,
                format!("{pointer}/type"),
                format!(
                    "type changed from {} to {}",
                    kind_name(old_kind),
                    kind_name(new_kind)
                ),
            ),
            _ => {}
        }
    }

    fn typed(&mut self, pointer: &str, old: &Type, new: &Type, side: Side) {
        match (old, new) {
            (Type::String(o), Type::String(n)) => {
                self.format_narrowed(pointer, &o.format, &n.format);
                self.narrowed(pointer, "pattern", &o.pattern, &n.pattern);
                self.bound_up(pointer, "minLength", o.min_length, n.min_length);
                self.bound_down(pointer, "maxLength", o.max_length, n.max_length);
                self.enumeration(pointer, &o.enumeration, &n.enumeration);
            }
            (Type::Integer(o), Type::Integer(n)) => {
                self.format_narrowed(pointer, &o.format, &n.format);
                self.bound_up(pointer, "minimum", o.minimum, n.minimum);
                self.bound_down(pointer, "maximum", o.maximum, n.maximum);
                self.enumeration(pointer, &o.enumeration, &n.enumeration);
            }
            (Type::Number(o), Type::Number(n)) => {
                self.format_narrowed(pointer, &o.format, &n.format);
                self.enumeration(pointer, &o.enumeration, &n.enumeration);
            }
            (Type::Boolean(_), Type::Boolean(_)) => {}
            (Type::Array(o), Type::Array(n)) => {
                self.bound_up(pointer, "minItems", o.min_items, n.min_items);
                self.bound_down(pointer, "maxItems", o.max_items, n.max_items);
                if let (Some(oi), Some(ni)) = (&o.items, &n.items) {
                    self.schema(
                        &format!("{pointer}/items"),
                        &oi.clone().unbox(),
                        &ni.clone().unbox(),
                        side,
                    );
                }
            }
            (Type::Object(o), Type::Object(n)) => {
                for (name, old_property) in &o.properties {
                    let here = format!("{pointer}/properties/{}", escape(name));
                    match n.properties.get(name) {
                        None => self.push(
                            Kind::Breaking,
                            here,
                            format!("property {name} removed ({})", side_text(side)),
                        ),
                        Some(new_property) => self.schema(
                            &here,
                            &old_property.clone().unbox(),
                            &new_property.clone().unbox(),
                            side,
                        ),
                    }
                }
                for name in n.properties.keys() {
                    if !o.properties.contains_key(name) {
                        let here = format!("{pointer}/properties/{}", escape(name));
                        let required = n.required.contains(name);
                        let (kind, what) = if required && side == Side::Request {
                            (Kind::Breaking, "a required property added")
                        } else {
                            (Kind::Additive, "property added")
                        };
                        self.push(kind, here, format!("{what}: {name} ({})", side_text(side)));
                    }
                }
                for name in &n.required {
                    if !o.required.contains(name)
                        && o.properties.contains_key(name)
                        && side == Side::Request
                    {
                        self.push(
                            Kind::Breaking,
                            format!("{pointer}/required"),
                            format!("property {name} made required ({})", side_text(side)),
                        );
                    }
                }
            }
            (o, n) => self.push(
                Kind::Breaking,
                format!("{pointer}/type"),
                format!("type changed from {} to {}", type_name(o), type_name(n)),
            ),
        }
    }

    /// A text rule (format, pattern) added or changed narrows what passes.
    fn narrowed(&mut self, pointer: &str, rule: &str, old: &Option<String>, new: &Option<String>) {
        if new.is_some() && new != old {
            self.push(
                Kind::Breaking,
                format!("{pointer}/{rule}"),
                format!(
                    "{rule} narrowed from {} to {}",
                    old.as_deref().unwrap_or("none"),
                    new.as_deref().unwrap_or("none")
                ),
            );
        }
    }

    /// A format added or changed narrows what passes.
    fn format_narrowed<T: std::fmt::Debug>(
        &mut self,
        pointer: &str,
        old: &openapiv3::VariantOrUnknownOrEmpty<T>,
        new: &openapiv3::VariantOrUnknownOrEmpty<T>,
    ) {
        self.narrowed(pointer, "format", &format_text(old), &format_text(new));
    }

    /// A lower bound raised (or set) narrows what passes.
    fn bound_up<T: PartialOrd + std::fmt::Display + Copy>(
        &mut self,
        pointer: &str,
        rule: &str,
        old: Option<T>,
        new: Option<T>,
    ) {
        if let Some(new) = new
            && old.is_none_or(|old| new > old)
        {
            self.push(
                Kind::Breaking,
                format!("{pointer}/{rule}"),
                format!("{rule} raised to {new}"),
            );
        }
    }

    /// An upper bound lowered (or set) narrows what passes.
    fn bound_down<T: PartialOrd + std::fmt::Display + Copy>(
        &mut self,
        pointer: &str,
        rule: &str,
        old: Option<T>,
        new: Option<T>,
    ) {
        if let Some(new) = new
            && old.is_none_or(|old| new < old)
        {
            self.push(
                Kind::Breaking,
                format!("{pointer}/{rule}"),
                format!("{rule} lowered to {new}"),
            );
        }
    }

    fn enumeration<T: PartialEq + std::fmt::Debug>(
        &mut self,
        pointer: &str,
        old: &[Option<T>],
        new: &[Option<T>],
    ) {
        if new.is_empty() {
            return;
        }
        if old.is_empty() {
            self.push(
                Kind::Breaking,
                format!("{pointer}/enum"),
                "values narrowed to a list".to_owned(),
            );
            return;
        }
        for (i, value) in old.iter().enumerate() {
            if !new.contains(value) {
                self.push(
                    Kind::Breaking,
                    format!("{pointer}/enum/{i}"),
                    format!("enum value {} removed", enum_text(value)),
                );
            }
        }
        for (i, value) in new.iter().enumerate() {
            if !old.contains(value) {
                self.push(
                    Kind::Additive,
                    format!("{pointer}/enum/{i}"),
                    format!("enum value {} added", enum_text(value)),
                );
            }
        }
    }
}

/// `getPetById`, or `GET /pet/{petId}` for an operation without an id.
fn name_of(operation: &Operation, method: &str, path: &str) -> String {
    operation
        .operation_id
        .clone()
        .unwrap_or_else(|| format!("{} {path}", method.to_uppercase()))
}

/// `item`, or the item in the components that it refers to
/// (`#/components/<kind>/<name>`, looked up by `table`).
fn resolve<'a, T>(
    doc: &'a OpenAPI,
    item: &'a ReferenceOr<T>,
    kind: &str,
    table: impl Fn(&'a openapiv3::Components, &str) -> Option<&'a ReferenceOr<T>>,
) -> Option<&'a T> {
    match item {
        ReferenceOr::Item(item) => Some(item),
        ReferenceOr::Reference { reference } => {
            let name = reference.strip_prefix(&format!("#/components/{kind}/"))?;
            table(doc.components.as_ref()?, name)?.as_item()
        }
    }
}

fn resolve_parameter<'a>(doc: &'a OpenAPI, p: &'a ReferenceOr<Parameter>) -> Option<&'a Parameter> {
    resolve(doc, p, "parameters", |c, name| c.parameters.get(name))
}

fn resolve_body<'a>(
    doc: &'a OpenAPI,
    b: &'a ReferenceOr<openapiv3::RequestBody>,
) -> Option<&'a openapiv3::RequestBody> {
    resolve(doc, b, "requestBodies", |c, name| {
        c.request_bodies.get(name)
    })
}

fn resolve_response<'a>(
    doc: &'a OpenAPI,
    r: &'a ReferenceOr<openapiv3::Response>,
) -> Option<&'a openapiv3::Response> {
    resolve(doc, r, "responses", |c, name| c.responses.get(name))
}

fn resolve_schema<'a>(doc: &'a OpenAPI, s: &'a ReferenceOr<Schema>) -> Option<&'a Schema> {
    let mut schema = s;
    // A reference may name a schema that is itself a reference.
    for _ in 0..8 {
        match schema {
            ReferenceOr::Item(s) => return Some(s),
            ReferenceOr::Reference { reference } => {
                schema = doc
                    .components
                    .as_ref()?
                    .schemas
                    .get(reference.strip_prefix("#/components/schemas/")?)?;
            }
        }
    }
    None
}

/// The same parameter: the same name, in the same place.
fn same_parameter(a: &Parameter, b: &Parameter) -> bool {
    let (da, db) = (a.parameter_data_ref(), b.parameter_data_ref());
    da.name == db.name && place(a) == place(b)
}

fn place(p: &Parameter) -> &'static str {
    match p {
        Parameter::Query { .. } => "query",
        Parameter::Header { .. } => "header",
        Parameter::Path { .. } => "path",
        Parameter::Cookie { .. } => "cookie",
    }
}

fn describe_parameter(p: &Parameter) -> String {
    format!("{} ({})", p.parameter_data_ref().name, place(p))
}

/// The ways of signing in an operation accepts, each a set of scheme
/// names; an empty set (or nothing said, or an empty list) is "no
/// credentials needed".
fn ways_in(requirements: Option<&Vec<openapiv3::SecurityRequirement>>) -> Vec<BTreeSet<String>> {
    match requirements {
        Some(requirements) if !requirements.is_empty() => requirements
            .iter()
            .map(|requirement| requirement.keys().cloned().collect())
            .collect(),
        _ => vec![BTreeSet::new()],
    }
}

fn kind_name(kind: &SchemaKind) -> String {
    match kind {
        SchemaKind::Type(t) => type_name(t).to_owned(),
        SchemaKind::OneOf { .. } => "oneOf".to_owned(),
        SchemaKind::AllOf { .. } => "allOf".to_owned(),
        SchemaKind::AnyOf { .. } => "anyOf".to_owned(),
        SchemaKind::Not { .. } => "not".to_owned(),
        SchemaKind::Any(_) => "any".to_owned(),
    }
}

fn type_name(t: &Type) -> &'static str {
    match t {
        Type::String(_) => "string",
        Type::Number(_) => "number",
        Type::Integer(_) => "integer",
        Type::Object(_) => "object",
        Type::Array(_) => "array",
        Type::Boolean(_) => "boolean",
    }
}

fn format_text<T: std::fmt::Debug>(
    format: &openapiv3::VariantOrUnknownOrEmpty<T>,
) -> Option<String> {
    match format {
        openapiv3::VariantOrUnknownOrEmpty::Item(item) => {
            Some(format!("{item:?}").to_ascii_lowercase())
        }
        openapiv3::VariantOrUnknownOrEmpty::Unknown(text) => Some(text.clone()),
        openapiv3::VariantOrUnknownOrEmpty::Empty => None,
    }
}

fn side_text(side: Side) -> &'static str {
    match side {
        Side::Request => "in a request",
        Side::Response => "in an answer",
    }
}

fn enum_text<T: std::fmt::Debug>(value: &Option<T>) -> String {
    match value {
        Some(value) => format!("{value:?}"),
        None => "null".to_owned(),
    }
}

/// Where the released copies are kept.
pub const RELEASED: &str = "openapi/released";

/// A document's released copies are `<stem>-<version>.json`; `stem` is the
/// document's file name without `.yaml` (`petstore`).
fn stem(document: &str) -> &str {
    Path::new(document)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or(document)
}

/// A version's numeric parts, for ordering (`1.0.27` before `1.0.100`).
fn version_parts(version: &str) -> Vec<u64> {
    version
        .split(['.', '-', '+'])
        .map(|part| part.parse().unwrap_or(0))
        .collect()
}

/// The document's `info.version`.
pub fn version_of(document: &OpenAPI) -> &str {
    &document.info.version
}

/// The latest released copy of `document`: its path and version.
pub fn latest_release(root: &Path, document: &str) -> anyhow::Result<Option<(PathBuf, String)>> {
    let prefix = format!("{}-", stem(document));
    let folder = root.join(RELEASED);
    let Ok(entries) = std::fs::read_dir(&folder) else {
        return Ok(None);
    };
    let mut releases: Vec<(Vec<u64>, String, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().to_str()?.to_owned();
            let version = name
                .strip_prefix(&prefix)?
                .strip_suffix(".json")?
                .to_owned();
            Some((version_parts(&version), version, entry.path()))
        })
        .collect();
    releases.sort();
    Ok(releases.pop().map(|(_, version, path)| (path, version)))
}

/// An OpenAPI document (YAML or JSON) from a file, in the openapiv3 model.
pub fn load(path: &Path) -> anyhow::Result<OpenAPI> {
    let value = crate::codegen::load_document(path)?;
    serde_json::from_value(value)
        .with_context(|| format!("{} is not an OpenAPI 3.0 document", path.display()))
}

/// One document against its latest release.
#[derive(Debug)]
pub struct Verdict {
    pub document: &'static str,
    pub released: Option<String>,
    pub version: String,
    pub changes: Vec<Change>,
    /// The breaking changes are allowed: the major version went up.
    pub major_bump: bool,
}

impl Verdict {
    /// Whether the document may go out as it is.
    pub fn passes(&self) -> bool {
        self.major_bump || !self.changes.iter().any(|c| c.kind == Kind::Breaking)
    }
}

/// Compares `document` (under `root`) with its latest released copy.
pub fn check(root: &Path, document: &'static str) -> anyhow::Result<Verdict> {
    let working = load(&root.join(document))?;
    let version = version_of(&working).to_owned();
    let Some((path, released)) = latest_release(root, document)? else {
        return Ok(Verdict {
            document,
            released: None,
            version,
            changes: Vec::new(),
            major_bump: false,
        });
    };
    let old = load(&path)?;
    let changes = compare(&old, &working);
    let major = |v: &str| version_parts(v).first().copied().unwrap_or(0);
    Ok(Verdict {
        document,
        major_bump: major(&version) > major(&released),
        released: Some(released),
        version,
        changes,
    })
}

/// `cargo xtask release`: keeps a copy of each document at its version, as
/// JSON (`openapi/released/petstore-1.0.27.json`). A version already kept
/// with other contents is refused: a released version does not change.
pub fn release(root: &Path, documents: &[&str]) -> anyhow::Result<Vec<String>> {
    let mut written = Vec::new();
    for document in documents {
        let value = crate::codegen::read_document(root, document)?;
        let parsed: OpenAPI = serde_json::from_value(value.clone())
            .with_context(|| format!("{document} is not OpenAPI 3.0"))?;
        let file = format!("{RELEASED}/{}-{}.json", stem(document), version_of(&parsed));
        let text = crate::codegen::profile_text(&value)?;
        match std::fs::read_to_string(root.join(&file)) {
            Ok(kept) if kept == text => {}
            Ok(_) => anyhow::bail!(
                "{file} is released with other contents: raise {document}'s info.version first"
            ),
            Err(_) => {
                std::fs::create_dir_all(root.join(RELEASED))
                    .with_context(|| format!("cannot create {RELEASED}"))?;
                std::fs::write(root.join(&file), text)
                    .with_context(|| format!("cannot write {file}"))?;
                written.push(file);
            }
        }
    }
    Ok(written)
}

/// The changes as a changelog section in Markdown: per operation (in the
/// order the operations first come), what was added, deprecated, changed
/// and removed.
pub fn changelog(document: &str, from: &str, to: &str, changes: &[Change]) -> String {
    let mut out = format!("## {document}: {from} → {to}\n\n");
    if changes.is_empty() {
        out.push_str("No changes.\n");
        return out;
    }
    let mut operations: Vec<Option<&str>> = Vec::new();
    for change in changes {
        if !operations.contains(&change.operation.as_deref()) {
            operations.push(change.operation.as_deref());
        }
    }
    operations.sort_by_key(|operation| (operation.is_none(), *operation));
    for operation in operations {
        match operation {
            Some(id) => out.push_str(&format!("### `{id}`\n\n")),
            None => out.push_str("### The document\n\n"),
        }
        for (heading, wanted) in [
            ("Added", Section::Added),
            ("Deprecated", Section::Deprecated),
            ("Changed", Section::Changed),
            ("Removed", Section::Removed),
        ] {
            for change in changes
                .iter()
                .filter(|c| c.operation.as_deref() == operation && Section::of(c) == wanted)
            {
                out.push_str(&format!(
                    "- {heading}: {} (`{}`){}\n",
                    change.what,
                    change.pointer,
                    if change.kind == Kind::Breaking {
                        " **breaking**"
                    } else {
                        ""
                    }
                ));
            }
        }
        out.push('\n');
    }
    out
}

/// Where a change goes in the changelog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Section {
    Added,
    Deprecated,
    Changed,
    Removed,
}

impl Section {
    fn of(change: &Change) -> Section {
        match change.kind {
            Kind::Additive => Section::Added,
            Kind::Deprecated => Section::Deprecated,
            Kind::Breaking if change.what.contains("removed") => Section::Removed,
            Kind::Breaking => Section::Changed,
        }
    }
}

/// The released copy of `document` at `version`.
pub fn release_of(root: &Path, document: &str, version: &str) -> anyhow::Result<OpenAPI> {
    let file = root
        .join(RELEASED)
        .join(format!("{}-{version}.json", stem(document)));
    anyhow::ensure!(
        file.exists(),
        "{document} has no released version {version} (in {RELEASED})"
    );
    load(&file)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    /// A small document; each test edits it into the pair it needs.
    const BASE: &str = r#"
openapi: 3.0.3
info: {title: pets, version: '1.0'}
paths:
  /pets/{id}:
    get:
      operationId: getPet
      parameters:
        - {name: id, in: path, required: true, schema: {type: integer}}
        - {name: verbose, in: query, schema: {type: boolean}}
      responses:
        '200':
          description: ok
          content:
            application/json:
              schema: {$ref: '#/components/schemas/Pet'}
        '404': {description: missing}
  /pets:
    post:
      operationId: addPet
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: '#/components/schemas/Pet'}
      responses:
        '200': {description: ok}
components:
  securitySchemes:
    key: {type: apiKey, in: header, name: api_key}
    basic: {type: http, scheme: basic}
  schemas:
    Pet:
      type: object
      required: [name]
      properties:
        name: {type: string, maxLength: 100}
        status: {type: string, enum: [available, sold]}
        tag: {type: string}
"#;

    /// The additive twin of several rules: an optional parameter added.
    const OPTIONAL_PARAMETER: (&str, &str) = (
        "        - {name: verbose, in: query, schema: {type: boolean}}\n",
        "        - {name: verbose, in: query, schema: {type: boolean}}\n        - {name: fields, in: query, schema: {type: string}}\n",
    );

    /// The additive twin of the property rules: an optional property added.
    const OPTIONAL_PROPERTY: (&str, &str) = (
        "        tag: {type: string}\n",
        "        tag: {type: string}\n        age: {type: integer}\n",
    );

    fn parse(text: &str) -> OpenAPI {
        serde_norway::from_str(text).unwrap()
    }

    /// The changes from `BASE` to `BASE` with `from` replaced by `to`.
    fn changes(from: &str, to: &str) -> Vec<Change> {
        assert!(BASE.contains(from), "{from}");
        compare(&parse(BASE), &parse(&BASE.replacen(from, to, 1)))
    }

    fn breaking(changes: &[Change]) -> Vec<String> {
        changes
            .iter()
            .filter(|c| c.kind == Kind::Breaking)
            .map(ToString::to_string)
            .collect()
    }

    /// `from` → `to` breaks, naming `pointer`; the additive twin
    /// (`twin.0` → `twin.1`) does not, and is listed.
    fn rule(from: &str, to: &str, pointer: &str, twin: (&str, &str)) {
        let broken = breaking(&changes(from, to));
        assert!(
            broken
                .iter()
                .any(|b| b.starts_with(&format!("{pointer}: "))),
            "{pointer} not among {broken:#?}"
        );
        let additive = changes(twin.0, twin.1);
        assert!(breaking(&additive).is_empty(), "{additive:#?}");
        assert!(
            additive.iter().any(|c| c.kind == Kind::Additive),
            "the twin is listed: {additive:#?}"
        );
    }

    #[test]
    fn the_changelog_lists_each_operations_changes() {
        let (from, to) = OPTIONAL_PARAMETER;
        let text = changelog("pets.yaml", "1.0", "1.1", &changes(from, to));
        assert_eq!(
            text,
            "## pets.yaml: 1.0 → 1.1\n\n### `getPet`\n\n\
             - Added: parameter added: fields (query) (`/paths/~1pets~1{id}/get/parameters/2`)\n\n"
        );
        let removed = changelog(
            "pets.yaml",
            "1.0",
            "2.0",
            &changes("        '404': {description: missing}\n", ""),
        );
        assert!(
            removed.contains("- Removed: response 404 removed"),
            "{removed}"
        );
        assert!(removed.contains("**breaking**"), "{removed}");
    }

    /// Today's documents against their released copies: what `cargo xtask
    /// check` runs.
    #[test]
    fn the_documents_keep_their_released_promises() {
        let root = crate::codegen::workspace_root();
        for service in crate::SERVICES {
            let verdict = check(&root, service.document).unwrap();
            assert!(
                verdict.released.is_some(),
                "{} has a release",
                service.document
            );
            assert!(verdict.passes(), "{:#?}", verdict.changes);
        }
    }

    #[test]
    fn the_same_document_has_no_changes() {
        assert!(compare(&parse(BASE), &parse(BASE)).is_empty());
    }

    #[test]
    fn a_path_removed_breaks() {
        rule(
            "  /pets:\n    post:",
            "  /animals:\n    post:",
            "/paths/~1pets",
            (
                "  /pets:\n    post:",
                "  /pets:\n    put:\n      operationId: putPet\n      responses:\n        '200': {description: ok}\n    post:",
            ),
        );
    }

    #[test]
    fn an_operation_removed_breaks() {
        rule(
            "    post:\n      operationId: addPet",
            "    put:\n      operationId: addPet",
            "/paths/~1pets/post",
            (
                "    post:\n      operationId: addPet",
                "    delete:\n      operationId: dropPets\n      responses:\n        '200': {description: ok}\n    post:\n      operationId: addPet",
            ),
        );
    }

    #[test]
    fn a_parameter_removed_breaks() {
        rule(
            "        - {name: verbose, in: query, schema: {type: boolean}}\n",
            "",
            "/paths/~1pets~1{id}/get/parameters/1",
            OPTIONAL_PARAMETER,
        );
    }

    #[test]
    fn a_parameter_made_required_breaks() {
        rule(
            "{name: verbose, in: query, schema",
            "{name: verbose, in: query, required: true, schema",
            "/paths/~1pets~1{id}/get/parameters/1/required",
            OPTIONAL_PARAMETER,
        );
        // Added already required, too.
        let broken = breaking(&changes(
            "      responses:\n        '200':\n          description: ok\n          content:",
            "        - {name: since, in: query, required: true, schema: {type: string}}\n      responses:\n        '200':\n          description: ok\n          content:",
        ));
        assert!(
            broken
                .iter()
                .any(|b| b.contains("a required parameter added")),
            "{broken:?}"
        );
    }

    #[test]
    fn a_response_code_removed_breaks() {
        rule(
            "        '404': {description: missing}\n",
            "",
            "/paths/~1pets~1{id}/get/responses/404",
            (
                "        '404': {description: missing}\n",
                "        '404': {description: missing}\n        '410': {description: gone}\n",
            ),
        );
    }

    #[test]
    fn a_property_removed_breaks() {
        rule(
            "        tag: {type: string}\n",
            "",
            "/paths/~1pets~1{id}/get/responses/200/content/application~1json/schema/properties/tag",
            OPTIONAL_PROPERTY,
        );
    }

    #[test]
    fn a_property_made_required_breaks() {
        rule(
            "required: [name]",
            "required: [name, tag]",
            "/paths/~1pets/post/requestBody/content/application~1json/schema/required",
            OPTIONAL_PROPERTY,
        );
    }

    #[test]
    fn an_enum_value_removed_breaks() {
        rule(
            "enum: [available, sold]",
            "enum: [available]",
            "/paths/~1pets~1{id}/get/responses/200/content/application~1json/schema/properties/status/enum/1",
            (
                "enum: [available, sold]",
                "enum: [available, sold, pending]",
            ),
        );
    }

    #[test]
    fn a_type_or_format_or_pattern_or_bound_narrowed_breaks() {
        rule(
            "tag: {type: string}",
            "tag: {type: integer}",
            "/paths/~1pets~1{id}/get/responses/200/content/application~1json/schema/properties/tag/type",
            OPTIONAL_PROPERTY,
        );
        for (to, rule_name) in [
            ("tag: {type: string, format: email}", "format"),
            ("tag: {type: string, pattern: '^[a-z]+$'}", "pattern"),
        ] {
            let broken = breaking(&changes("tag: {type: string}", to));
            assert!(
                broken
                    .iter()
                    .any(|b| b.contains(&format!("/tag/{rule_name}: "))),
                "{broken:?}"
            );
        }
        let lowered = breaking(&changes("maxLength: 100", "maxLength: 50"));
        assert!(
            lowered.iter().any(|b| b.contains("/name/maxLength: ")),
            "{lowered:?}"
        );
        assert!(breaking(&changes("maxLength: 100", "maxLength: 200")).is_empty());
    }

    #[test]
    fn a_security_requirement_added_breaks() {
        rule(
            "      operationId: getPet\n",
            "      operationId: getPet\n      security: [{key: []}]\n",
            "/paths/~1pets~1{id}/get/security",
            (
                "      operationId: getPet\n",
                "      operationId: getPet\n      security: [{}, {key: []}]\n",
            ),
        );
        // Of two ways in, one removed.
        let old = BASE.replacen(
            "      operationId: getPet\n",
            "      operationId: getPet\n      security: [{key: []}, {basic: []}]\n",
            1,
        );
        let new = BASE.replacen(
            "      operationId: getPet\n",
            "      operationId: getPet\n      security: [{key: []}]\n",
            1,
        );
        let broken = breaking(&compare(&parse(&old), &parse(&new)));
        assert!(
            broken
                .iter()
                .any(|b| b.contains("a way of signing in removed: basic")),
            "{broken:?}"
        );
    }
}
