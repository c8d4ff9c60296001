//! How the CLI ends: the answer on stdout and exit code 0, or one line on
//! stderr and an exit code that says what kind of failure it was, so that a
//! script can tell "not there" from "not allowed" from "try later".
//!
//! | code | meaning |
//! |---|---|
//! | 0 | done (with `--dry-run`: the request printed, not sent) |
//! | 2 | the command line or the environment is wrong (a missing variable, a bad value) |
//! | 3 | refused: no credential, a wrong one, or one without the scope (401, 403, a token refused) |
//! | 4 | not found (404) |
//! | 5 | the request was refused as it stands (400, 409, 422 and other 4xx) |
//! | 6 | the server could not answer now (429, 5xx): try later |
//! | 7 | no answer: the server could not be reached or took too long |
//! | 8 | the answer could not be read (not what the document says) |

use std::io::Write as _;
use std::process::ExitCode;

use petstore_portfolio_client::Error;

/// A mistake in the command line that clap cannot see.
#[derive(Debug)]
pub(crate) struct Usage(pub(crate) String);

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}

/// Prints `error` (a dry run's curl command on stdout, anything else as one
/// line on stderr) and gives its exit code.
pub(crate) fn report(error: &anyhow::Error) -> ExitCode {
    if let Some(Error::Stopped(curl)) = error.downcast_ref::<Error>() {
        let _ = writeln!(std::io::stdout(), "{curl}");
        return ExitCode::SUCCESS;
    }
    let line = format!("{error:#}").replace('\n', " ");
    let _ = writeln!(std::io::stderr(), "petstore-portfolio-cli: {line}");
    ExitCode::from(code(error))
}

fn code(error: &anyhow::Error) -> u8 {
    let Some(error) = error.downcast_ref::<Error>() else {
        return 2;
    };
    match error {
        Error::Api(api) => match api.status().as_u16() {
            401 | 403 => 3,
            404 => 4,
            429 => 6,
            s if s >= 500 => 6,
            _ => 5,
        },
        Error::Token(_) => 3,
        Error::Transport(_) => 7,
        Error::Decode { .. } => 8,
        _ => 2,
    }
}
