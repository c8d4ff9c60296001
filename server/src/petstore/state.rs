//! What the pet store's handlers reach: its state, one pointer to what it
//! shares, and from it what the reads and the operations need.

use std::sync::Arc;

use anyhow::Context as _;

use crate::access::Access;
use crate::config::PetstoreConfig;
use crate::core::password::Hasher;
use crate::http::service_state::ServiceState;
use crate::limits::Limiter;
use crate::limits::shared_counters::SharedCounters;
use crate::petstore::db;
use crate::petstore::ops;
use crate::petstore::reads;
use crate::storage::Database;
use crate::storage::batches::Writer;

/// What every pet store handler can reach.
pub(crate) type PetstoreState = ServiceState<Shared>;

/// What the pet store's state holds.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) db: Database,
    pub(crate) config: Arc<PetstoreConfig>,
    /// Hashes and checks passwords on a bounded pool.
    pub(crate) hasher: Hasher,
    /// Counts failed logins per username and per client address.
    pub(crate) failed_logins: Arc<Limiter>,
    /// Base URL for links the server hands out, without a trailing slash.
    pub(crate) public_url: Arc<str>,
    /// The credentials: API keys (the pet store's are made by the operator's
    /// CLI), sessions and remembered passwords.
    pub(crate) access: Arc<Access>,
    /// Answers kept in memory while still current.
    pub(crate) caches: reads::Caches,
    /// What bounds the whole lists of pets.
    pub(crate) lists: Arc<reads::pet_lists::Lists>,
    /// New pets waiting to be inserted together.
    pub(crate) new_pets: db::new_pets::NewPets,
    /// New orders waiting to be placed together.
    pub(crate) new_orders: db::new_orders::NewOrders,
    /// Pets replaced at the same time, waiting to be written together.
    pub(crate) replaced_pets: db::replaced_pets::ReplacedPets,
}

impl PetstoreState {
    /// The pet store's state on `db`: the password pool started, empty
    /// caches, and the batched writers on a writer of their own.
    pub(crate) fn build(
        db: &Database,
        config: &PetstoreConfig,
        access: Arc<Access>,
        public_url: &str,
        shared_counters: Option<&Arc<SharedCounters>>,
    ) -> anyhow::Result<PetstoreState> {
        let hasher = Hasher::start(config.password_hash_threads, config.password_hash_queue)
            .context("cannot start the password hashing threads")?;
        // One writer, one transaction a turn, for every kind of write in
        // batches.
        let writer = Writer::start(db.clone());
        Ok(PetstoreState::new(Shared {
            db: db.clone(),
            config: Arc::new(config.clone()),
            hasher,
            failed_logins: Arc::new(Limiter::default().shared_as(shared_counters, "failed-logins")),
            public_url: Arc::from(public_url),
            access,
            caches: reads::Caches::new(db, config.cached_pets),
            lists: Arc::new(reads::pet_lists::Lists::new(config.max_unpaged_list)),
            new_pets: db::new_pets::NewPets::on(&writer),
            new_orders: db::new_orders::NewOrders::on(&writer),
            replaced_pets: db::replaced_pets::ReplacedPets::on(&writer),
        }))
    }

    /// What the reads need of the state.
    pub(crate) fn reads(&self) -> reads::Context<'_> {
        reads::Context {
            db: &self.db,
            caches: &self.caches,
            lists: &self.lists,
        }
    }

    /// What the operations need of the state.
    pub(crate) fn ops(&self) -> ops::Context<'_> {
        ops::Context {
            db: &self.db,
            new_pets: &self.new_pets,
            new_orders: &self.new_orders,
            replaced_pets: &self.replaced_pets,
            hasher: &self.hasher,
            access: &self.access,
            failed_logins: &self.failed_logins,
            config: &self.config,
        }
    }
}
