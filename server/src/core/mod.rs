//! What every layer stands on and no layer owns: why an operation did not
//! happen ([`failure`]), the one policy for text from outside, password
//! hashing, the clock, secrets, and where the process is in its life.

pub(crate) mod clock;
pub(crate) mod failure;
pub(crate) mod lifecycle;
pub(crate) mod password;
pub(crate) mod secret;
pub(crate) mod templates;
pub(crate) mod text_policy;
