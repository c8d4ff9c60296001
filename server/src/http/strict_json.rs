//! Reading JSON request bodies as strictly as the documents are written.

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::http::error::Error;

/// Reads JSON as strictly as the schemas are written. Beyond what serde
/// checks, no property of the schema may be `null` (none is nullable: leave
/// it out), an object may not be written as an array (serde would read
/// `[1, "x"]` as `{"id": 1, "name": "x"}`), and no text may hold a NUL byte
/// (`\u0000`, which PostgreSQL cannot store): 400 for any of these. Text
/// that breaks the [`crate::core::text_policy`] (control characters) is 422,
/// naming the field. Unknown properties are ignored, whatever they hold,
/// NUL bytes included.
pub(crate) fn parse<T: DeserializeOwned + Serialize>(bytes: &[u8]) -> Result<T, Error> {
    let invalid = |e: &dyn std::fmt::Display| Error::bad_request(format!("invalid JSON body: {e}"));
    // serde_json keeps the last of a property given twice; which one a
    // proxy or another parser in front keeps is anyone's guess, so neither.
    let StrictValue(input) = serde_json::from_slice(bytes).map_err(|e| invalid(&e))?;
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
    // What was read, not what was ignored: unknown properties are not kept.
    find_nul(&read_back).map_err(|e| invalid(&e))?;
    if let Some(path) = array_for_object_at(&input, &read_back, &mut Vec::new()) {
        return Err(invalid(&format!(
            "{} must be an object",
            display_path(&path)
        )));
    }
    crate::core::text_policy::check(&read_back)?;
    Ok(value)
}

/// JSON as a `serde_json::Value`, but a property given twice in one
/// object is an error (one pass: the value is built as it is checked).
struct StrictValue(serde_json::Value);

impl<'de> serde::Deserialize<'de> for StrictValue {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(StrictVisitor).map(StrictValue)
    }
}

struct StrictVisitor;

impl<'de> serde::de::Visitor<'de> for StrictVisitor {
    type Value = serde_json::Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JSON")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut object = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let StrictValue(value) = map.next_value()?;
            if object.contains_key(&key) {
                return Err(serde::de::Error::custom(format!(
                    "the property {key:?} is given twice in one object"
                )));
            }
            object.insert(key, value);
        }
        Ok(serde_json::Value::Object(object))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        while let Some(StrictValue(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(serde_json::Value::Array(items))
    }

    fn visit_bool<E>(self, value: bool) -> Result<Self::Value, E> {
        Ok(value.into())
    }

    fn visit_i64<E>(self, value: i64) -> Result<Self::Value, E> {
        Ok(value.into())
    }

    fn visit_u64<E>(self, value: u64) -> Result<Self::Value, E> {
        Ok(value.into())
    }

    fn visit_f64<E>(self, value: f64) -> Result<Self::Value, E> {
        Ok(value.into())
    }

    fn visit_str<E>(self, value: &str) -> Result<Self::Value, E> {
        Ok(value.into())
    }

    fn visit_string<E>(self, value: String) -> Result<Self::Value, E> {
        Ok(value.into())
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(serde_json::Value::Null)
    }
}

/// Checks the text of a value read from any format (the pet store's XML
/// and forms, through their serde shape) as [`parse`] checks JSON's: a NUL
/// byte is 400, a control character 422.
pub(crate) fn check_text<T: Serialize>(value: &T) -> Result<(), Error> {
    let read = serde_json::to_value(value)
        .map_err(|e| Error::internal("a body that does not serialise", e))?;
    find_nul(&read).map_err(Error::bad_request)?;
    Ok(crate::core::text_policy::check(&read)?)
}

fn find_nul(value: &serde_json::Value) -> Result<(), String> {
    use serde_json::Value;
    let holds_nul = |text: &str| text.contains('\0');
    match value {
        Value::String(text) if holds_nul(text) => Err(NUL_MESSAGE.to_owned()),
        Value::Array(items) => items.iter().try_for_each(find_nul),
        Value::Object(map) => map.iter().try_for_each(|(key, item)| {
            if holds_nul(key) {
                Err(NUL_MESSAGE.to_owned())
            } else {
                find_nul(item)
            }
        }),
        _ => Ok(()),
    }
}

/// What a client is told of a NUL byte in its text.
pub(crate) const NUL_MESSAGE: &str = "text may not hold NUL bytes";

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

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize, Serialize)]
    struct Named {
        name: String,
    }

    #[test]
    fn nul_bytes_are_refused_in_what_is_read() {
        assert!(parse::<Named>(br#"{"name": "a\u0000b"}"#).is_err());
        assert!(parse::<Named>(br#"{"name": "ab", "x\u0000": "\u0000"}"#).is_ok());
        assert!(parse::<Named>(br#"{"name": "ab"}"#).is_ok());
        assert!(check_text(&Named { name: "a\0".into() }).is_err());
    }

    #[test]
    fn a_property_given_twice_is_refused_at_any_depth() {
        let refused = parse::<Named>(br#"{"name": "a", "name": "b"}"#).unwrap_err();
        assert!(
            refused.message().contains("\"name\" is given twice"),
            "{}",
            refused.message()
        );
        assert!(parse::<serde_json::Value>(br#"{"x": [{"a": 1, "a": 2}]}"#).is_err());
        assert!(parse::<serde_json::Value>(br#"{"x": [{"a": 1}, {"a": 2}]}"#).is_ok());
        let read: serde_json::Value = parse(
            br#"{"s": "a\u00e9", "n": [-1, 2, 1.5, true, {"k": "v"}], "z": 18446744073709551615}"#,
        )
        .unwrap();
        assert_eq!(
            read,
            serde_json::json!({"s": "a\u{e9}", "n": [-1, 2, 1.5, true, {"k": "v"}], "z": 18446744073709551615_u64})
        );
    }

    #[test]
    fn control_characters_are_422_and_nul_400() {
        use crate::http::error::ErrorCode;
        let code = |bytes: &[u8]| parse::<Named>(bytes).err().map(|e| e.code());
        assert_eq!(
            code(br#"{"name": "a\u001b[2J"}"#),
            Some(ErrorCode::ValidationFailed)
        );
        assert_eq!(code(br#"{"name": "a\u0000"}"#), Some(ErrorCode::BadRequest));
        assert_eq!(code(br#"{"name": "plain"}"#), None);
    }
}
