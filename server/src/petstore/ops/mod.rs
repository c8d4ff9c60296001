//! The pet store's operations: one function per use case, between the
//! handlers and storage. Each owns its transaction, takes and returns the
//! domain's types, keeps the rules (an order moves its pet through the
//! statuses; a user changes only their own account), and fails with a
//! [`Failure`](crate::failure::Failure), which the handlers turn into an
//! `ApiResponse` in one `From`.

pub mod orders;
pub mod pets;
pub mod users;

use crate::access::Access;
use crate::password::Hasher;
use crate::petstore::db::new_pets::NewPets;
use crate::storage::Database;

/// What the operations work on.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    pub db: &'a Database,
    /// New pets without an id of their own go in together.
    pub new_pets: &'a NewPets,
    /// Hashes passwords on a bounded pool.
    pub hasher: &'a Hasher,
    /// The remembered logins and sessions, forgotten when a user changes.
    pub access: &'a Access,
}
