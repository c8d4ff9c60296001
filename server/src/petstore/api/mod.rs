//! The pet store's handlers, one module per group of operations of the
//! document (`pet`, `store`, `user`), the sign-in page of its OAuth
//! implicit flow, and the extractors that judge credentials. A handler
//! reads the request, calls a read or an operation, and renders.

pub(crate) mod auth;
pub(crate) mod authorize;
pub(crate) mod pet;
pub(crate) mod pet_image;
pub(crate) mod store;
pub(crate) mod user;
