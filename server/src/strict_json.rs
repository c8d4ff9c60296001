//! Reading JSON request bodies as strictly as the documents are written.

use serde::Serialize;
use serde::de::DeserializeOwned;

/// Reads JSON as strictly as the schemas are written. Beyond what serde
/// checks, no property of the schema may be `null` (none is nullable: leave
/// it out), and an object may not be written as an array (serde would read
/// `[1, "x"]` as `{"id": 1, "name": "x"}`). Unknown properties are ignored,
/// whatever they hold.
pub fn parse<T: DeserializeOwned + Serialize>(bytes: &[u8]) -> Result<T, String> {
    let invalid = |e: &dyn std::fmt::Display| e.to_string();
    let input: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| invalid(&e))?;
    let mut ignored: Vec<Vec<String>> = Vec::new();
    let value: T = serde_ignored::deserialize(&input, |path| ignored.push(segments(&path)))
        .map_err(|e| invalid(&e))?;
    let mut nulls = Vec::new();
    collect_nulls(&input, &mut Vec::new(), &mut nulls);
    if let Some(null) = nulls
        .iter()
        .find(|null| !ignored.iter().any(|unknown| null.starts_with(unknown)))
    {
        return Err(invalid(&format!(
            "{} is null; leave an optional property out instead",
            display_path(null)
        )));
    }
    let read_back = serde_json::to_value(&value).map_err(|e| invalid(&e))?;
    if let Some(path) = array_for_object_at(&input, &read_back, &mut Vec::new()) {
        return Err(invalid(&format!(
            "{} must be an object",
            display_path(&path)
        )));
    }
    Ok(value)
}

/// A serde_ignored path as segments (`["tags", "0", "name"]`).
fn segments(path: &serde_ignored::Path<'_>) -> Vec<String> {
    use serde_ignored::Path;
    let mut out = match path {
        Path::Root => return Vec::new(),
        Path::Seq { parent, .. }
        | Path::Map { parent, .. }
        | Path::Some { parent }
        | Path::NewtypeStruct { parent }
        | Path::NewtypeVariant { parent } => segments(parent),
    };
    match path {
        Path::Seq { index, .. } => out.push(index.to_string()),
        Path::Map { key, .. } => out.push(key.clone()),
        _ => {}
    }
    out
}

fn display_path(path: &[String]) -> String {
    if path.is_empty() {
        "the body".to_owned()
    } else {
        path.join(".")
    }
}

fn collect_nulls(value: &serde_json::Value, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    use serde_json::Value;
    match value {
        Value::Null => out.push(path.clone()),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                path.push(i.to_string());
                collect_nulls(item, path, out);
                path.pop();
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                path.push(key.clone());
                collect_nulls(item, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

/// Where the input has an array and what was read from it is an object.
fn array_for_object_at(
    input: &serde_json::Value,
    read: &serde_json::Value,
    path: &mut Vec<String>,
) -> Option<Vec<String>> {
    use serde_json::Value;
    match (input, read) {
        (Value::Array(_), Value::Object(_)) => Some(path.clone()),
        (Value::Array(a), Value::Array(b)) => {
            a.iter().zip(b).enumerate().find_map(|(i, (x, y))| {
                path.push(i.to_string());
                let found = array_for_object_at(x, y, path);
                path.pop();
                found
            })
        }
        (Value::Object(a), Value::Object(b)) => b.iter().find_map(|(key, y)| {
            path.push(key.clone());
            let found = a.get(key).and_then(|x| array_for_object_at(x, y, path));
            path.pop();
            found
        }),
        _ => None,
    }
}
