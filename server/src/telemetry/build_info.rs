//! What this binary is: its version, the commit it was built from and the
//! day it was built (the build script's `BUILT_FROM_COMMIT` and `BUILT_ON`).

/// The server's version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The commit it was built from (12 hex digits), or `unknown`.
pub const COMMIT: &str = env!("BUILT_FROM_COMMIT");

/// The day it was built (`YYYY-MM-DD`, UTC; `SOURCE_DATE_EPOCH`'s when set).
pub const BUILT_ON: &str = env!("BUILT_ON");
