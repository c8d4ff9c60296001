//! The pet store's operations: one function per use case, between the
//! handlers and storage. Each owns its transaction, takes and returns the
//! domain's types, keeps the rules (an order moves its pet through the
//! statuses; a user changes only their own account), and fails with a
//! [`Failure`](crate::core::failure::Failure), which the handlers turn into an
//! `ApiResponse` in one `From`.

pub(crate) mod demo_data;
pub(crate) mod orders;
pub(crate) mod pets;
pub(crate) mod sessions;
pub(crate) mod users;

use crate::access::Access;
use crate::config::PetstoreConfig;
use crate::core::password::Hasher;
use crate::limits::Limiter;
use crate::petstore::db::new_orders::NewOrders;
use crate::petstore::db::new_pets::NewPets;
use crate::petstore::db::replaced_pets::ReplacedPets;
use crate::storage::Database;

/// What the operations work on.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Context<'a> {
    pub(crate) db: &'a Database,
    /// New pets without an id of their own go in together.
    pub(crate) new_pets: &'a NewPets,
    /// New orders without an id of their own go in together.
    pub(crate) new_orders: &'a NewOrders,
    /// Pets replaced at the same time are written together.
    pub(crate) replaced_pets: &'a ReplacedPets,
    /// Hashes passwords on a bounded pool.
    pub(crate) hasher: &'a Hasher,
    /// The remembered logins and sessions, forgotten when a user changes.
    pub(crate) access: &'a Access,
    /// Counts failed logins per username and per client address.
    pub(crate) failed_logins: &'a Limiter,
    pub(crate) config: &'a PetstoreConfig,
}
