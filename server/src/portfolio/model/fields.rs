//! Checking a body's fields one by one, for a 422 that names every broken
//! field (`details.fields`: field -> problem).

use crate::core::failure::Failure;

/// The problems found so far.
#[derive(Debug, Default)]
pub(crate) struct Fields(Vec<(String, String)>);

impl Fields {
    /// A text field: present if `required`, at most `max` characters.
    pub(crate) fn text(
        &mut self,
        name: &str,
        value: Option<&str>,
        required: bool,
        max: usize,
    ) -> Option<String> {
        match value {
            None | Some("") if required => {
                self.problem(name, "required");
                None
            }
            Some(text) if text.chars().count() > max => {
                self.problem(name, &format!("at most {max} characters"));
                None
            }
            other => other.map(str::to_owned),
        }
    }

    /// An email address, by the one rule of [`crate::mail::address`].
    pub(crate) fn email(
        &mut self,
        name: &str,
        value: Option<&str>,
        required: bool,
    ) -> Option<String> {
        let text = self.text(name, value, required, crate::mail::address::MAX_CHARS)?;
        match crate::mail::address::parse(&text) {
            Ok(_) => Some(text),
            Err(problem) => {
                self.problem(name, problem);
                None
            }
        }
    }

    /// Records a problem with a field.
    pub(crate) fn problem(&mut self, name: &str, problem: &str) {
        self.0.push((name.to_owned(), problem.to_owned()));
    }

    /// Invalid if any field broke its rule.
    pub(crate) fn check(self) -> Result<(), Failure> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(Failure::invalid_fields(self.0))
        }
    }
}
