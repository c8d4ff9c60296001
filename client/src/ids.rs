//! Ids that are one type wherever they appear: a pet read with
//! `get_pet_by_id` has `id: Option<PetId>`, and that `PetId` is what
//! `Order::pet_id` and every `pet_id(..)` take, without a conversion.
//!
//! The documents mark such integers with `x-sdk-id`; the client profile
//! names them (`PetId`, `OrderId`), and the SDK puts these types in their
//! place. Each is a positive integer of at most 2^53 - 1, the largest a
//! JSON number carries exactly.

use std::fmt;
use std::num::NonZeroU64;
use std::str::FromStr;

/// The largest id: 2^53 - 1.
pub const MAX_ID: u64 = (1 << 53) - 1;

/// Why a number is not an id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidId {
    what: &'static str,
    value: String,
}

impl fmt::Display for InvalidId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} must be a whole number from 1 to {MAX_ID}, not {}",
            self.what, self.value
        )
    }
}

impl std::error::Error for InvalidId {}

macro_rules! id_type {
    ($name:ident, $what:literal) => {
        #[doc = concat!("The id of ", $what, ": a whole number from 1 to 2^53 - 1.")]
        #[derive(
            Clone,
            Copy,
            Debug,
            PartialEq,
            Eq,
            Hash,
            PartialOrd,
            Ord,
            serde::Serialize,
            serde::Deserialize,
        )]
        #[serde(try_from = "u64", into = "u64")]
        #[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
        pub struct $name(#[cfg_attr(feature = "schemars", schemars(with = "u64"))] NonZeroU64);

        impl $name {
            /// The id as a number.
            pub fn get(self) -> u64 {
                self.0.get()
            }
        }

        impl TryFrom<u64> for $name {
            type Error = InvalidId;

            fn try_from(value: u64) -> Result<Self, InvalidId> {
                NonZeroU64::new(value)
                    .filter(|v| v.get() <= MAX_ID)
                    .map($name)
                    .ok_or(InvalidId {
                        what: $what,
                        value: value.to_string(),
                    })
            }
        }

        impl TryFrom<i64> for $name {
            type Error = InvalidId;

            fn try_from(value: i64) -> Result<Self, InvalidId> {
                u64::try_from(value)
                    .map_err(|_| InvalidId {
                        what: $what,
                        value: value.to_string(),
                    })
                    .and_then($name::try_from)
            }
        }

        impl TryFrom<i32> for $name {
            type Error = InvalidId;

            fn try_from(value: i32) -> Result<Self, InvalidId> {
                $name::try_from(i64::from(value))
            }
        }

        impl TryFrom<u32> for $name {
            type Error = InvalidId;

            fn try_from(value: u32) -> Result<Self, InvalidId> {
                $name::try_from(u64::from(value))
            }
        }

        impl TryFrom<NonZeroU64> for $name {
            type Error = InvalidId;

            fn try_from(value: NonZeroU64) -> Result<Self, InvalidId> {
                $name::try_from(value.get())
            }
        }

        impl TryFrom<&$name> for $name {
            type Error = InvalidId;

            fn try_from(value: &$name) -> Result<Self, InvalidId> {
                Ok(*value)
            }
        }

        impl From<$name> for u64 {
            fn from(id: $name) -> u64 {
                id.get()
            }
        }

        impl From<$name> for i64 {
            fn from(id: $name) -> i64 {
                // At most 2^53 - 1: always fits.
                id.get() as i64
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.0, f)
            }
        }

        impl FromStr for $name {
            type Err = InvalidId;

            fn from_str(text: &str) -> Result<Self, InvalidId> {
                let number: u64 = text.trim().parse().map_err(|_| InvalidId {
                    what: $what,
                    value: format!("{text:?}"),
                })?;
                $name::try_from(number)
            }
        }
    };
}

id_type!(PetId, "a pet");
id_type!(OrderId, "an order");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_positive_and_fit_in_json() {
        assert_eq!(PetId::try_from(7_u64).unwrap().get(), 7);
        assert_eq!(PetId::try_from(7_i64).unwrap().to_string(), "7");
        assert!(PetId::try_from(0_u64).is_err());
        assert!(PetId::try_from(-1_i64).is_err());
        assert!(PetId::try_from(MAX_ID + 1).is_err());
        assert_eq!("12".parse::<OrderId>().unwrap().get(), 12);
        let error = "x".parse::<OrderId>().unwrap_err().to_string();
        assert_eq!(
            error,
            "an order must be a whole number from 1 to 9007199254740991, not \"x\""
        );
        let id: PetId = serde_json::from_str("42").unwrap();
        assert_eq!(serde_json::to_string(&id).unwrap(), "42");
        assert!(serde_json::from_str::<PetId>("0").is_err());
    }
}
