//! The pet store's domain: pets, orders and users, and the rules they keep.
//! The types are also the JSON shapes of the contract (they derive
//! `ToSchema`); the XML and form shapes are the handlers' business
//! (`pet.rs`, `wire.rs`), the rows storage's (`db/`).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::config::AuthMode;
use crate::core::failure::Failure;

/// The largest id a client may choose: the largest integer JavaScript
/// represents exactly, so that no client loses precision, and far enough
/// from `i64::MAX` that the server's own id sequence never runs out.
pub(crate) const MAX_CLIENT_ID: i64 = 9_007_199_254_740_991;

/// Longest pet, category and tag name accepted.
const MAX_NAME_CHARS: usize = 255;

/// A pet in the store.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(xml(name = "pet"))]
pub(crate) struct Pet {
    /// Assigned by the server when absent or 0. Ids stay within the integers
    /// that JavaScript represents exactly (at most 2^53 - 1).
    #[schema(minimum = 0, maximum = 9007199254740991_i64)]
    pub(crate) id: Option<i64>,
    #[schema(min_length = 1, max_length = 255)]
    pub(crate) name: String,
    pub(crate) category: Option<Category>,
    #[schema(xml(name = "photoUrl", wrapped))]
    pub(crate) photo_urls: Vec<String>,
    #[schema(xml(wrapped))]
    #[serde(default)]
    pub(crate) tags: Vec<Tag>,
    pub(crate) status: Option<PetStatus>,
}

#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[schema(xml(name = "category"))]
pub(crate) struct Category {
    pub(crate) id: Option<i64>,
    #[schema(max_length = 255)]
    pub(crate) name: Option<String>,
}

#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[schema(xml(name = "tag"))]
pub(crate) struct Tag {
    pub(crate) id: Option<i64>,
    #[schema(max_length = 255)]
    pub(crate) name: Option<String>,
}

/// pet status in the store
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, ToSchema,
)]
#[serde(rename_all = "lowercase")]
pub(crate) enum PetStatus {
    Available,
    Pending,
    Sold,
}

impl PetStatus {
    pub(crate) const ALL: [PetStatus; 3] =
        [PetStatus::Available, PetStatus::Pending, PetStatus::Sold];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            PetStatus::Available => "available",
            PetStatus::Pending => "pending",
            PetStatus::Sold => "sold",
        }
    }

    pub(crate) fn parse(value: &str) -> Option<PetStatus> {
        PetStatus::ALL.into_iter().find(|s| s.as_str() == value)
    }
}

impl Pet {
    /// The rules beyond the schema's types.
    pub(crate) fn check_rules(&self) -> Result<(), Failure> {
        check_client_id(self.id)?;
        check_pet_name("name", &self.name)?;
        if let Some(Category {
            name: Some(name), ..
        }) = &self.category
        {
            check_length("category.name", name, MAX_NAME_CHARS)?;
        }
        for tag in &self.tags {
            if let Some(name) = &tag.name {
                check_length("tags[].name", name, MAX_NAME_CHARS)?;
            }
        }
        Ok(())
    }

    /// A pet without a status is available.
    pub(crate) fn with_default_status(mut self) -> Self {
        self.status = Some(self.status.unwrap_or(PetStatus::Available));
        self
    }
}

/// A pet's name: not empty, at most 255 characters.
pub(crate) fn check_pet_name(field: &str, name: &str) -> Result<(), Failure> {
    if name.is_empty() {
        return Err(Failure::invalid(format!("{field} must not be empty")));
    }
    // A name may also come from a query (updatePetWithForm), which no
    // body check sees.
    crate::core::text_policy::check_field(field, name)?;
    check_length(field, name, MAX_NAME_CHARS)
}

fn check_length(field: &str, value: &str, max: usize) -> Result<(), Failure> {
    if value.chars().count() > max {
        return Err(Failure::invalid(format!(
            "{field} must be at most {max} characters"
        )));
    }
    Ok(())
}

/// An id a client put in a body: absent or 0 (the server chooses), or
/// positive up to [`MAX_CLIENT_ID`].
pub(crate) fn check_client_id(id: Option<i64>) -> Result<(), Failure> {
    match id {
        Some(id) if id < 0 => Err(Failure::invalid(
            "id must be positive (or 0 or absent to let the server choose one)",
        )),
        Some(id) if id > MAX_CLIENT_ID => Err(Failure::invalid(format!(
            "id must be at most {MAX_CLIENT_ID}"
        ))),
        _ => Ok(()),
    }
}

/// The id a client asked for, if any (0 means none).
pub(crate) fn requested_id(id: Option<i64>) -> Option<i64> {
    id.filter(|id| *id > 0)
}

/// A stored image of a pet.
#[derive(Debug, Clone)]
pub(crate) struct PetImage {
    /// As sniffed from the bytes when it was uploaded.
    pub(crate) content_type: String,
    pub(crate) data: Vec<u8>,
}

/// A purchase order for a pet.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename = "order", rename_all = "camelCase")]
#[schema(xml(name = "order"))]
pub(crate) struct Order {
    /// Assigned by the server when absent or 0. Ids stay within the integers
    /// that JavaScript represents exactly (at most 2^53 - 1).
    #[schema(minimum = 0, maximum = 9007199254740991_i64)]
    pub(crate) id: Option<i64>,
    #[schema(minimum = 1)]
    pub(crate) pet_id: i64,
    #[schema(minimum = 1, default = 1)]
    pub(crate) quantity: Option<i32>,
    pub(crate) ship_date: Option<DateTime<Utc>>,
    pub(crate) status: Option<OrderStatus>,
    /// True once the order is delivered (derived from `status`; ignored on input).
    pub(crate) complete: Option<bool>,
}

/// Order Status
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum OrderStatus {
    Placed,
    Approved,
    Delivered,
}

impl OrderStatus {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            OrderStatus::Placed => "placed",
            OrderStatus::Approved => "approved",
            OrderStatus::Delivered => "delivered",
        }
    }

    pub(crate) fn parse(value: &str) -> Option<OrderStatus> {
        [
            OrderStatus::Placed,
            OrderStatus::Approved,
            OrderStatus::Delivered,
        ]
        .into_iter()
        .find(|s| s.as_str() == value)
    }

    /// The status an order in this state gives its pet: `placed` and
    /// `approved` make it `pending`, `delivered` makes it `sold`.
    pub(crate) fn pet_status(self) -> PetStatus {
        match self {
            OrderStatus::Placed | OrderStatus::Approved => PetStatus::Pending,
            OrderStatus::Delivered => PetStatus::Sold,
        }
    }

    /// The status the pet of a deleted order in this state returns to: an
    /// order that was not delivered releases its pet; a sold pet stays sold.
    pub(crate) fn pet_status_once_deleted(self) -> Option<PetStatus> {
        match self {
            OrderStatus::Placed | OrderStatus::Approved => Some(PetStatus::Available),
            OrderStatus::Delivered => None,
        }
    }
}

impl Order {
    /// The rules beyond the schema's types.
    pub(crate) fn check_rules(&self) -> Result<(), Failure> {
        check_client_id(self.id)?;
        if self.pet_id < 1 {
            return Err(Failure::invalid("petId must be a positive integer"));
        }
        if matches!(self.quantity, Some(q) if q < 1) {
            return Err(Failure::invalid("quantity must be at least 1"));
        }
        Ok(())
    }

    /// What an order without them gets: status `placed`, quantity 1; and
    /// `complete` as the status says.
    pub(crate) fn with_defaults(mut self) -> Self {
        let status = self.status.unwrap_or(OrderStatus::Placed);
        self.status = Some(status);
        self.quantity = Some(self.quantity.unwrap_or(1));
        self.complete = Some(status == OrderStatus::Delivered);
        self
    }
}

/// A user of the store. `password` is write-only: it is stored as an
/// argon2id hash and never returned (nor shown by `Debug`).
#[serde_with::skip_serializing_none]
#[derive(Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename = "user", rename_all = "camelCase")]
#[schema(xml(name = "user"))]
pub(crate) struct User {
    /// Assigned by the server when absent or 0, or when another user has it
    /// (a user's id names nothing in the API). Ids stay within the integers
    /// that JavaScript represents exactly (at most 2^53 - 1).
    #[schema(minimum = 0, maximum = 9007199254740991_i64)]
    pub(crate) id: Option<i64>,
    /// ASCII letters, digits and `. _ @ + -`: one script, no spaces or
    /// control characters, nothing that looks like another name.
    #[schema(min_length = 1, max_length = 64, pattern = "^[A-Za-z0-9._@+-]+$")]
    pub(crate) username: String,
    #[schema(max_length = 255)]
    pub(crate) first_name: Option<String>,
    #[schema(max_length = 255)]
    pub(crate) last_name: Option<String>,
    #[schema(max_length = 255)]
    pub(crate) email: Option<String>,
    /// Not empty; in auth mode `enforce`, at least 8 characters. Stored as
    /// an argon2id hash; never returned.
    #[schema(min_length = 1, max_length = 255, write_only)]
    pub(crate) password: Option<String>,
    #[schema(max_length = 64)]
    pub(crate) phone: Option<String>,
    /// User Status
    pub(crate) user_status: Option<i32>,
}

impl std::fmt::Debug for User {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("User")
            .field("id", &self.id)
            .field("username", &self.username)
            .field("first_name", &self.first_name)
            .field("last_name", &self.last_name)
            .field("email", &self.email)
            .field("password", &self.password.as_ref().map(|_| "***"))
            .field("phone", &self.phone)
            .field("user_status", &self.user_status)
            .finish()
    }
}

/// The shortest password a user may set in auth mode `enforce` (the
/// sample users' is older). In `open`, any password upstream takes does:
/// clients generated from the official document post its example, `12345`.
pub(crate) const MIN_PASSWORD_CHARS: usize = 8;

/// Checks a password a user sets against the rule of the auth mode.
pub(crate) fn check_password(mode: AuthMode, password: &str) -> Result<(), Failure> {
    if mode == AuthMode::Enforce && password.chars().count() < MIN_PASSWORD_CHARS {
        return Err(Failure::invalid(format!(
            "password must be at least {MIN_PASSWORD_CHARS} characters"
        )));
    }
    Ok(())
}

/// Whether a byte may stand in a username.
fn username_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"._@+-".contains(&b)
}

impl User {
    /// The rules beyond the schema's types.
    pub(crate) fn check_rules(&self) -> Result<(), Failure> {
        check_client_id(self.id)?;
        if self.username.is_empty() {
            return Err(Failure::invalid("username must not be empty"));
        }
        if !self.username.bytes().all(username_byte) {
            return Err(Failure::invalid(
                "username may hold only ASCII letters, digits and . _ @ + -",
            ));
        }
        if self.password.as_ref().is_some_and(String::is_empty) {
            return Err(Failure::invalid("password must not be empty"));
        }
        let limits = [
            ("username", Some(&self.username), 64),
            ("firstName", self.first_name.as_ref(), 255),
            ("lastName", self.last_name.as_ref(), 255),
            ("email", self.email.as_ref(), 255),
            ("password", self.password.as_ref(), 255),
            ("phone", self.phone.as_ref(), 64),
        ];
        for (field, value, max) in limits {
            if let Some(value) = value {
                check_length(field, value, max)?;
            }
        }
        Ok(())
    }

    /// The user as the API shows it: with its id, without its password.
    pub(crate) fn public(mut self, id: i64) -> Self {
        self.id = Some(id);
        self.password = None;
        self
    }

    /// What anyone may see of a user in auth mode `enforce`: the id, the
    /// username and the status, not the names, email or phone.
    pub(crate) fn without_private_fields(self) -> Self {
        User {
            first_name: None,
            last_name: None,
            email: None,
            phone: None,
            password: None,
            ..self
        }
    }
}

/// A user as stored: the public fields and the password's hash (which
/// `Debug` does not show).
#[derive(Clone)]
pub(crate) struct StoredUser {
    pub(crate) id: i64,
    /// Without its password.
    pub(crate) user: User,
    pub(crate) password_hash: Option<String>,
}

impl std::fmt::Debug for StoredUser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoredUser")
            .field("id", &self.id)
            .field("user", &self.user)
            .field("password_hash", &self.password_hash.as_ref().map(|_| "***"))
            .finish()
    }
}

/// The scopes of `petstore_auth`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PetScope {
    ReadPets,
    WritePets,
}

impl PetScope {
    pub(crate) const ALL: [PetScope; 2] = [PetScope::WritePets, PetScope::ReadPets];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            PetScope::ReadPets => "read:pets",
            PetScope::WritePets => "write:pets",
        }
    }

    pub(crate) fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == text)
    }
}

/// Who is calling, once their credential was checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Principal {
    /// A pet store user, by a token (a session, or the implicit flow's) or
    /// by HTTP Basic, which holds both scopes.
    User {
        id: i64,
        scopes: Vec<PetScope>,
        /// The SHA-256 of the session token it came with, if any: a password
        /// change ends the user's other sessions, not this one.
        session: Option<String>,
    },
    /// A pet store `api_key`; `admin` when it carries the scope.
    Key { admin: bool },
}

impl Principal {
    /// Whether this caller may change, delete or see all of the user
    /// `user_id`: that user, or an admin key.
    pub(crate) fn may_act_for(&self, user_id: i64) -> bool {
        match self {
            Principal::User { id, .. } => *id == user_id,
            Principal::Key { admin } => *admin,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_output_never_shows_a_password_or_its_hash() {
        let user = User {
            id: Some(1),
            username: "ada".into(),
            first_name: None,
            last_name: None,
            email: None,
            password: Some("s3cret-password".into()),
            phone: None,
            user_status: None,
        };
        let stored = StoredUser {
            id: 1,
            user: user.clone(),
            password_hash: Some("$argon2id$s3cret-hash".into()),
        };
        let printed = format!("{user:?} {stored:?}");
        assert!(!printed.contains("s3cret"), "{printed}");
    }
}
