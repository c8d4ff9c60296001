//! What the commands print: the answer as JSON (pretty, one document) or as
//! a table, on stdout. Errors are printed once, by `exit::report`, so the
//! generated commands' error callbacks print nothing.

use std::io::Write as _;

use futures::TryStreamExt as _;
use petstore_portfolio_client::petstore::ResponseValue;
use serde_json::Value;
use tokio::io::AsyncWriteExt as _;

use crate::Settings;

/// How an answer is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Json,
    Table,
}

/// The commands' output, for both services' generated `CliConfig`.
#[derive(Debug)]
pub(crate) struct Output {
    format: Format,
    all: bool,
}

impl Output {
    pub(crate) fn new(settings: &Settings) -> Self {
        Output {
            format: settings.format,
            all: settings.all,
        }
    }

    fn print(&self, value: &impl serde::Serialize) {
        let value = serde_json::to_value(value).unwrap_or(Value::Null);
        let text = match self.format {
            Format::Json => serde_json::to_string_pretty(&value).unwrap_or_default(),
            Format::Table => table(&value),
        };
        let _ = writeln!(std::io::stdout(), "{text}");
    }
}

/// The answer as a table: a list of objects a row each (a column for each
/// key), one object a row per key, anything else as JSON. A value that is
/// itself a list or an object is shown as compact JSON.
fn table(value: &Value) -> String {
    let cell = |value: &Value| match value {
        Value::String(text) => text.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    };
    let rows: Vec<Vec<String>> = match value {
        Value::Array(items) if items.iter().all(Value::is_object) => {
            let mut columns: Vec<&str> = Vec::new();
            for item in items.iter().filter_map(Value::as_object) {
                for key in item.keys() {
                    if !columns.contains(&key.as_str()) {
                        columns.push(key);
                    }
                }
            }
            let header = columns.iter().map(|c| c.to_uppercase()).collect();
            let body = items.iter().map(|item| {
                columns
                    .iter()
                    .map(|column| item.get(*column).map(cell).unwrap_or_default())
                    .collect()
            });
            std::iter::once(header).chain(body).collect()
        }
        Value::Object(fields) => fields
            .iter()
            .map(|(key, value)| vec![key.to_uppercase(), cell(value)])
            .collect(),
        other => return cell(other),
    };
    let widths: Vec<usize> = (0..rows.first().map_or(0, Vec::len))
        .map(|i| {
            rows.iter()
                .map(|row| row[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    rows.iter()
        .map(|row| {
            let line: Vec<String> = row
                .iter()
                .zip(&widths)
                .map(|(text, width)| format!("{text:<width$}"))
                .collect();
            line.join("  ").trim_end().to_owned()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The generated `CliConfig` of a service, the same for both.
macro_rules! cli_config {
    ($service:ident) => {
        impl crate::$service::CliConfig for Output {
            fn success_item<T>(&self, value: &ResponseValue<T>)
            where
                T: schemars::JsonSchema + serde::Serialize + std::fmt::Debug,
            {
                self.print(&**value);
            }

            fn success_no_item(&self, _: &ResponseValue<()>) {}

            fn error(&self, _: &petstore_portfolio_client::Error) {}

            async fn success_bytes(
                &self,
                value: ResponseValue<petstore_portfolio_client::petstore::ByteStream>,
            ) -> anyhow::Result<()> {
                let mut stdout = tokio::io::stdout();
                let mut bytes = value.into_inner();
                while let Some(chunk) = bytes.try_next().await? {
                    stdout.write_all(&chunk).await?;
                }
                stdout.flush().await?;
                Ok(())
            }

            fn all_pages(&self) -> bool {
                self.all
            }

            fn success_items<T: serde::Serialize>(&self, items: &[T]) {
                self.print(&items);
            }

            fn body_file(&self, matches: &clap::ArgMatches) -> anyhow::Result<Vec<u8>> {
                let path = matches
                    .get_one::<std::path::PathBuf>("file")
                    .ok_or_else(|| anyhow::anyhow!("--file <PATH> is required"))?;
                std::fs::read(path)
                    .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))
            }

            fn list_start<T>(&self)
            where
                T: schemars::JsonSchema + serde::Serialize + std::fmt::Debug,
            {
            }

            fn list_item<T>(&self, value: &T)
            where
                T: schemars::JsonSchema + serde::Serialize + std::fmt::Debug,
            {
                self.print(value);
            }

            fn list_end_success<T>(&self)
            where
                T: schemars::JsonSchema + serde::Serialize + std::fmt::Debug,
            {
            }

            fn list_end_error(&self, _: &petstore_portfolio_client::Error) {}
        }
    };
}

cli_config!(petstore_commands);
cli_config!(portfolio_commands);
