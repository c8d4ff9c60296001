//! `cargo xtask check`: does the code say what the hand-written document says?
//!
//! Both documents are brought to one canonical form and compared node by
//! node. The canonical form keeps what a client depends on (paths, methods,
//! operation ids, parameters, bodies and responses per media type, headers,
//! security, schemas with their constraints) and drops prose (descriptions,
//! summaries, examples). utoipa writes OpenAPI 3.1, so 3.1 spellings are
//! turned back into 3.0 ones (`type: [T, "null"]` -> `nullable`, ...).

use std::collections::BTreeSet;
use std::fmt;

use serde_json::{Map, Value, json};

/// One difference between the two documents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drift {
    /// JSON pointer into the canonical form (paths and component names as in the documents).
    pub pointer: String,
    /// The value in the hand-written document (`None`: absent there).
    pub document: Option<Value>,
    /// The value the code's annotations give (`None`: absent there).
    pub code: Option<Value>,
}

impl fmt::Display for Drift {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let show = |v: &Option<Value>| match v {
            None => "(absent)".to_owned(),
            Some(v) => serde_json::to_string(v).unwrap_or_default(),
        };
        write!(
            f,
            "{}: document {} | code {}",
            self.pointer,
            show(&self.document),
            show(&self.code)
        )
    }
}

/// Compares a hand-written document with the one the code produces.
pub fn compare(document: &Value, code: &Value) -> Vec<Drift> {
    let mut drifts = Vec::new();
    diff("", &canonical(document), &canonical(code), &mut drifts);
    drifts
}

/// The canonical form of a document (3.0 or 3.1).
pub fn canonical(doc: &Value) -> Value {
    let mut out = Map::new();
    let mut operations = Map::new();
    if let Some(paths) = doc.get("paths").and_then(Value::as_object) {
        for (path, item) in paths {
            let shared_params = item.get("parameters").cloned().unwrap_or(json!([]));
            for method in crate::METHODS {
                if let Some(op) = item.get(method) {
                    operations.insert(
                        format!("{method} {path}"),
                        canonical_operation(doc, op, &shared_params),
                    );
                }
            }
        }
    }
    out.insert("operations".into(), Value::Object(operations));
    let components = doc.get("components");
    let canonical_components = |kind: &str, canonical: fn(&Value) -> Value| {
        let all = components
            .and_then(|c| c.get(kind))
            .and_then(Value::as_object);
        let canonical: Map<String, Value> = all
            .into_iter()
            .flatten()
            .map(|(name, item)| (name.clone(), canonical(item)))
            .collect();
        Value::Object(canonical)
    };
    out.insert(
        "schemas".into(),
        canonical_components("schemas", canonical_schema),
    );
    out.insert(
        "securitySchemes".into(),
        canonical_components("securitySchemes", strip_prose),
    );
    out.insert(
        "security".into(),
        canonical_security(doc.get("security").unwrap_or(&Value::Null)),
    );
    Value::Object(out)
}

fn canonical_operation(doc: &Value, op: &Value, shared_params: &Value) -> Value {
    let mut out = Map::new();
    out.insert(
        "operationId".into(),
        op.get("operationId").cloned().unwrap_or(Value::Null),
    );
    out.insert("tags".into(), sorted_strings(op.get("tags")));
    out.insert(
        "deprecated".into(),
        op.get("deprecated").cloned().unwrap_or(json!(false)),
    );

    let mut params = Map::new();
    let all_params = shared_params.as_array().into_iter().flatten().chain(
        op.get("parameters")
            .and_then(Value::as_array)
            .into_iter()
            .flatten(),
    );
    for param in all_params {
        let param = resolve(doc, param);
        let location = param.get("in").and_then(Value::as_str).unwrap_or("?");
        let name = param.get("name").and_then(Value::as_str).unwrap_or("?");
        let (default_style, default_explode) = match location {
            "query" | "cookie" => ("form", true),
            _ => ("simple", false),
        };
        let style = param
            .get("style")
            .and_then(Value::as_str)
            .unwrap_or(default_style);
        let explode = param
            .get("explode")
            .and_then(Value::as_bool)
            .unwrap_or(if style == "form" {
                true
            } else {
                default_explode
            });
        params.insert(
            format!("{location} {name}"),
            json!({
                "required": param.get("required").and_then(Value::as_bool).unwrap_or(location == "path"),
                "style": style,
                "explode": explode,
                "deprecated": param.get("deprecated").and_then(Value::as_bool).unwrap_or(false),
                "schema": param.get("schema").map(canonical_schema).unwrap_or(Value::Null),
            }),
        );
    }
    out.insert("parameters".into(), Value::Object(params));

    let body = op.get("requestBody").map(|b| resolve(doc, b));
    out.insert(
        "requestBody".into(),
        match body {
            None => Value::Null,
            Some(body) => json!({
                "required": body.get("required").and_then(Value::as_bool).unwrap_or(false),
                "content": canonical_body_content(body.get("content")),
            }),
        },
    );

    let mut responses = Map::new();
    if let Some(all) = op.get("responses").and_then(Value::as_object) {
        for (status, response) in all {
            let response = resolve(doc, response);
            let mut headers = Map::new();
            if let Some(all) = response.get("headers").and_then(Value::as_object) {
                for (name, header) in all {
                    let header = resolve(doc, header);
                    headers.insert(
                        name.to_ascii_lowercase(),
                        header
                            .get("schema")
                            .map(canonical_schema)
                            .unwrap_or(Value::Null),
                    );
                }
            }
            responses.insert(
                status.clone(),
                json!({
                    "headers": headers,
                    "content": canonical_content(response.get("content")),
                }),
            );
        }
    }
    out.insert("responses".into(), Value::Object(responses));
    out.insert(
        "security".into(),
        canonical_security(op.get("security").unwrap_or(&Value::Null)),
    );
    Value::Object(out)
}

fn canonical_content(content: Option<&Value>) -> Value {
    let mut out = Map::new();
    if let Some(all) = content.and_then(Value::as_object) {
        for (media_type, media) in all {
            out.insert(
                media_type.clone(),
                media
                    .get("schema")
                    .map(canonical_schema)
                    .unwrap_or(Value::Null),
            );
        }
    }
    Value::Object(out)
}

/// A request body's content. utoipa says "this body is optional" (an
/// `Option<T>` body) by making its schema nullable as well as by
/// `required: false`; 3.0 says it with `required` alone, compared apart.
fn canonical_body_content(content: Option<&Value>) -> Value {
    let mut out = canonical_content(content);
    if let Some(all) = out.as_object_mut() {
        for schema in all.values_mut() {
            if let Some(schema) = schema.as_object_mut() {
                schema.remove("nullable");
            }
        }
    }
    out
}

/// Security requirements as a sorted list of `{scheme: sorted scopes}`.
fn canonical_security(security: &Value) -> Value {
    let Some(requirements) = security.as_array() else {
        return Value::Null;
    };
    let mut out: Vec<Value> = requirements
        .iter()
        .map(|req| {
            let mut sorted = Map::new();
            if let Some(req) = req.as_object() {
                for (scheme, scopes) in req {
                    sorted.insert(scheme.clone(), sorted_strings(Some(scopes)));
                }
            }
            Value::Object(sorted)
        })
        .collect();
    out.sort_by_key(|v| v.to_string());
    Value::Array(out)
}

fn sorted_strings(value: Option<&Value>) -> Value {
    let set: BTreeSet<String> = value
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect();
    Value::Array(set.into_iter().map(Value::String).collect())
}

/// Follows a local `$ref` (to components.responses, parameters, ...).
fn resolve<'a>(doc: &'a Value, value: &'a Value) -> &'a Value {
    match value.get("$ref").and_then(Value::as_str) {
        Some(reference) => reference
            .strip_prefix('#')
            .and_then(|pointer| doc.pointer(pointer))
            .unwrap_or(value),
        None => value,
    }
}

const PROSE: [&str; 6] = [
    "description",
    "summary",
    "example",
    "examples",
    "title",
    "externalDocs",
];

fn strip_prose(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                // Vendor extensions (`x-sdk-id`, ...) say how tools present
                // a value, not what the wire carries.
                .filter(|(k, _)| !PROSE.contains(&k.as_str()) && !k.starts_with("x-"))
                .map(|(k, v)| (k.clone(), strip_prose(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(strip_prose).collect()),
        other => other.clone(),
    }
}

/// A schema in 3.0 spelling, without prose, with sets sorted.
pub fn canonical_schema(schema: &Value) -> Value {
    let Some(map) = schema.as_object() else {
        return schema.clone();
    };
    let mut out = Map::new();
    let mut nullable = map
        .get("nullable")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    for (key, value) in map {
        match key.as_str() {
            k if PROSE.contains(&k) => {}
            // Vendor extensions (`x-sdk-id`, ...) say how tools present a
            // value, not what the wire carries.
            k if k.starts_with("x-") => {}
            // 3.1 only; no 3.0 meaning.
            "propertyNames" | "$schema" | "contentMediaType" | "contentEncoding" => {}
            "nullable" => {}
            "type" => match value {
                Value::Array(types) => {
                    let non_null: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
                    nullable |= non_null.len() < types.len();
                    if let [single] = non_null.as_slice() {
                        out.insert("type".into(), (*single).clone());
                    } else {
                        out.insert(
                            "type".into(),
                            Value::Array(non_null.into_iter().cloned().collect()),
                        );
                    }
                }
                other => {
                    out.insert("type".into(), other.clone());
                }
            },
            "oneOf" | "anyOf" => {
                let items = value.as_array().cloned().unwrap_or_default();
                let non_null: Vec<Value> = items
                    .iter()
                    .filter(|item| item.get("type") != Some(&json!("null")))
                    .cloned()
                    .collect();
                nullable |= non_null.len() < items.len();
                if let [single] = non_null.as_slice() {
                    // `oneOf: [X, {type: null}]` is 3.1 for a nullable X.
                    if let Value::Object(inner) = canonical_schema(single) {
                        out.extend(inner);
                    }
                } else {
                    out.insert(
                        key.clone(),
                        Value::Array(non_null.iter().map(canonical_schema).collect()),
                    );
                }
            }
            "allOf" => match value.as_array().map(Vec::as_slice) {
                Some([single]) => {
                    if let Value::Object(inner) = canonical_schema(single) {
                        out.extend(inner);
                    }
                }
                _ => {
                    out.insert(
                        key.clone(),
                        Value::Array(
                            value
                                .as_array()
                                .into_iter()
                                .flatten()
                                .map(canonical_schema)
                                .collect(),
                        ),
                    );
                }
            },
            "properties" => {
                let props = value
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(name, prop)| (name.clone(), canonical_schema(prop)))
                    .collect();
                out.insert(key.clone(), Value::Object(props));
            }
            "items" | "additionalProperties" | "not" => {
                out.insert(key.clone(), canonical_schema(value));
            }
            "required" | "enum" => {
                let mut items = value.as_array().cloned().unwrap_or_default();
                items.sort_by_key(|v| v.to_string());
                if !(key == "required" && items.is_empty()) {
                    out.insert(key.clone(), Value::Array(items));
                }
            }
            "exclusiveMinimum" | "exclusiveMaximum" if value.is_number() => {
                // 3.1's numeric form -> 3.0's boolean plus bound.
                let bound = if key == "exclusiveMinimum" {
                    "minimum"
                } else {
                    "maximum"
                };
                out.insert(bound.into(), value.clone());
                out.insert(key.clone(), json!(true));
            }
            "minimum" | "maximum" | "minLength" | "maxLength" | "minItems" | "maxItems" => {
                // 1 and 1.0 are the same bound.
                out.insert(
                    key.clone(),
                    value.as_f64().map_or(value.clone(), |n| json!(n)),
                );
            }
            _ => {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    if nullable {
        out.insert("nullable".into(), json!(true));
    }
    Value::Object(out)
}

fn escape(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

fn diff(pointer: &str, document: &Value, code: &Value, out: &mut Vec<Drift>) {
    match (document, code) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for key in keys {
                let here = format!("{pointer}/{}", escape(key));
                match (a.get(key), b.get(key)) {
                    (Some(x), Some(y)) => diff(&here, x, y, out),
                    (x, y) => out.push(Drift {
                        pointer: here,
                        document: x.cloned(),
                        code: y.cloned(),
                    }),
                }
            }
        }
        (a, b) if a == b => {}
        (a, b) => out.push(Drift {
            pointer: pointer.to_owned(),
            document: Some(a.clone()),
            code: Some(b.clone()),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_one_nullability_reads_as_three_zero() {
        let a = canonical_schema(&json!({"type": ["string", "null"], "description": "x"}));
        let b = canonical_schema(&json!({"type": "string", "nullable": true}));
        assert_eq!(a, b);
        let c = canonical_schema(
            &json!({"oneOf": [{"$ref": "#/components/schemas/Pet"}, {"type": "null"}]}),
        );
        assert_eq!(
            c,
            json!({"$ref": "#/components/schemas/Pet", "nullable": true})
        );
    }

    #[test]
    fn diff_names_the_place_and_both_values() {
        let mut drifts = Vec::new();
        diff(
            "",
            &json!({"a": {"b": 1}}),
            &json!({"a": {"b": 2, "c": 3}}),
            &mut drifts,
        );
        let lines: Vec<String> = drifts.iter().map(ToString::to_string).collect();
        assert_eq!(
            lines,
            [
                "/a/b: document 1 | code 2",
                "/a/c: document (absent) | code 3"
            ]
        );
    }
}
