//! One policy for text that comes from outside, in every body of both
//! services: no control characters (Unicode's `Cc`: C0, DEL and C1), but
//! tab, newline and CR before a newline in the fields documented as
//! multi-line ([`MULTI_LINE_FIELDS`]). A field that breaks it is refused at
//! the door with 422 and its name, before anything is stored, so that no
//! escape sequence reaches an operator's terminal, an email header or a
//! log. NUL, which neither database can store, stays a 400 of its own
//! ([`crate::http::strict_json::NUL_MESSAGE`]).

use crate::core::failure::Failure;

/// The properties that hold prose, where tab and newlines belong (a post's
/// body, a description, a contact message, a key request's intended use, a
/// biography). Every other text is one line.
pub(crate) const MULTI_LINE_FIELDS: [&str; 5] =
    ["body", "bio", "description", "intended_use", "message"];

/// Why `text` cannot stand in a field (multi-line or not), if it cannot.
pub(crate) fn problem(text: &str, multi_line: bool) -> Option<String> {
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let allowed = match c {
            '\t' | '\n' => multi_line,
            '\r' => multi_line && chars.peek() == Some(&'\n'),
            c => !c.is_control(),
        };
        if !allowed {
            let where_ = if multi_line {
                "only tab and newlines are allowed"
            } else {
                "it is one line of text"
            };
            return Some(format!(
                "holds the control character U+{:04X}; {where_}",
                u32::from(c)
            ));
        }
    }
    None
}

/// Refuses one field's text (a query parameter, a form part) that breaks
/// the policy: 422 naming it, as [`check`] does for a body.
pub(crate) fn check_field(field: &str, text: &str) -> Result<(), Failure> {
    let multi_line = MULTI_LINE_FIELDS.contains(&field);
    match problem(text, multi_line) {
        None => Ok(()),
        Some(problem) => Err(refused(field, problem)),
    }
}

fn refused(field: &str, problem: String) -> Failure {
    Failure::Invalid {
        message: format!("{field} {problem}").into(),
        fields: vec![(field.to_owned(), problem)],
    }
}

/// Refuses the first field of `value` (a body as read, under its wire
/// names) whose text breaks the policy: 422 naming it, as
/// `details.fields` too.
pub(crate) fn check(value: &serde_json::Value) -> Result<(), Failure> {
    match first_problem(value, &mut Vec::new(), false) {
        None => Ok(()),
        Some((field, problem)) => Err(refused(&field, problem)),
    }
}

fn first_problem(
    value: &serde_json::Value,
    path: &mut Vec<String>,
    multi_line: bool,
) -> Option<(String, String)> {
    use serde_json::Value;
    match value {
        Value::String(text) => problem(text, multi_line).map(|p| (field_name(path), p)),
        Value::Array(items) => items.iter().enumerate().find_map(|(i, item)| {
            path.push(i.to_string());
            let found = first_problem(item, path, multi_line);
            path.pop();
            found
        }),
        Value::Object(map) => map.iter().find_map(|(key, item)| {
            path.push(key.clone());
            let found = first_problem(item, path, MULTI_LINE_FIELDS.contains(&key.as_str()));
            path.pop();
            found
        }),
        _ => None,
    }
}

/// `tags.0.name` for `["tags", "0", "name"]`; `the body` for a bare text.
fn field_name(path: &[String]) -> String {
    if path.is_empty() {
        "the body".to_owned()
    } else {
        path.join(".")
    }
}

/// Text from outside made safe to print on a terminal: control characters
/// (escape sequences, CR, BEL, ...) shown as `\u{1b}` and the like, so
/// that nothing a client sent can clear the screen, fake rows or set the
/// window title of the operator who lists it.
pub(crate) fn for_terminal(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return std::borrow::Cow::Borrowed(text);
    }
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect::<String>()
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn one_line_fields_take_no_control_character() {
        assert_eq!(problem("Acme Ltd", false), None);
        assert_eq!(problem("tab\there", true), None);
        assert_eq!(problem("line\r\nline\n", true), None);
        for bad in [
            "\u{1b}[2J",
            "bell\u{7}",
            "a\rb",
            "a\nb",
            "\u{9b}31m",
            "\u{7f}",
        ] {
            assert!(problem(bad, false).is_some(), "{bad:?}");
        }
        assert!(problem("lone\rcr", true).is_some());
        assert!(problem("\u{1b}]0;title\u{7}", true).is_some());
        assert_eq!(
            problem("a\u{1b}", false).as_deref(),
            Some("holds the control character U+001B; it is one line of text")
        );
    }

    #[test]
    fn the_field_is_named() {
        let body = json!({"name": "ok", "tags": [{"name": "fine"}, {"name": "x\u{7}"}]});
        let Failure::Invalid { message, fields } = check(&body).unwrap_err() else {
            panic!("not a broken rule");
        };
        assert_eq!(
            fields,
            [("tags.1.name".to_owned(), problem("x\u{7}", false).unwrap())]
        );
        assert!(message.starts_with("tags.1.name holds"), "{message}");
        assert!(check(&json!({"message": "Hi,\n\tthanks"})).is_ok());
        assert!(check(&json!({"subject": "Hi,\nthanks"})).is_err());
    }

    #[test]
    fn a_terminal_sees_escapes_not_controls() {
        assert_eq!(for_terminal("plain"), "plain");
        assert_eq!(for_terminal("\u{1b}[2Jx\r\n"), "\\u{1b}[2Jx\\u{d}\\u{a}");
    }
}
