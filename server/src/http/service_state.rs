//! A service's state as its handlers take it: one pointer, so that the many
//! extractors that take the state each clone one reference count, not one
//! per field. Each service names its own (`PetstoreState`,
//! `PortfolioState`) over what it holds.

use std::sync::Arc;

/// The state of a service holding `T`.
#[derive(Debug)]
pub(crate) struct ServiceState<T>(Arc<T>);

impl<T> ServiceState<T> {
    pub(crate) fn new(shared: T) -> Self {
        ServiceState(Arc::new(shared))
    }
}

// By hand: a derived `Clone` would ask `T: Clone`.
impl<T> Clone for ServiceState<T> {
    fn clone(&self) -> Self {
        ServiceState(Arc::clone(&self.0))
    }
}

impl<T> std::ops::Deref for ServiceState<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}
