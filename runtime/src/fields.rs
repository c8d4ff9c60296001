//! What a type builder's `build()` says when fields are missing or break
//! their rules: every one of them, not the first.

use std::fmt;

/// The fields of a value that could not be built, each with why.
///
/// ```
/// use petstore_portfolio_client::petstore::types;
///
/// let error = types::Pet::builder().name("").build().unwrap_err();
/// assert_eq!(error.type_name(), "Pet");
/// let fields: Vec<&str> = error.fields().iter().map(|(field, _)| *field).collect();
/// assert_eq!(fields, ["name", "photo_urls"]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidFields {
    type_name: &'static str,
    fields: Vec<(&'static str, String)>,
}

impl InvalidFields {
    /// None yet, for a value of type `type_name`.
    pub fn new(type_name: &'static str) -> Self {
        InvalidFields {
            type_name,
            fields: Vec::new(),
        }
    }

    /// A field's value, or `None` with its problem noted.
    pub fn take<T>(&mut self, field: &'static str, value: Result<T, String>) -> Option<T> {
        match value {
            Ok(value) => Some(value),
            Err(problem) => {
                self.fields.push((field, problem));
                None
            }
        }
    }

    /// The type that could not be built.
    pub fn type_name(&self) -> &'static str {
        self.type_name
    }

    /// Each field at fault and its problem, in the type's field order.
    pub fn fields(&self) -> &[(&'static str, String)] {
        &self.fields
    }
}

impl fmt::Display for InvalidFields {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid {}: ", self.type_name)?;
        for (i, (field, problem)) in self.fields.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{field}: {problem}")?;
        }
        Ok(())
    }
}

impl std::error::Error for InvalidFields {}
