//! Where the process is in its life: serving, or draining before it stops.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once a stop is asked for (SIGTERM, Ctrl-C): readiness answers 503 at
/// once, so that load balancers take this replica out, while it goes on
/// answering for the drain period (`http.shutdown_drain_secs`). Clones
/// share it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Draining(Arc<AtomicBool>);

impl Draining {
    pub(crate) fn start(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    pub(crate) fn is_on(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}
