//! The commit the server is built from, for `--version`: the same script
//! as the runtime's.

include!("../runtime/build.rs");
