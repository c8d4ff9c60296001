//! Every read of the pet store, its caching included: what a handler asks
//! for, answered from the read caches or from storage.

pub(crate) mod pet_lists;
