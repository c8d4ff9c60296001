//! A small pet shop: what a program that uses the SDK looks like.

use petstore_portfolio_client::petstore::{self, types};
use petstore_portfolio_client::portfolio;

/// The shop's answer about one pet.
#[derive(Debug, PartialEq, Eq)]
pub enum Availability {
    ForSale(String),
    Gone,
}

/// Whether pet `id` can be sold: a pet the store does not have is gone;
/// any other failure is the caller's to handle.
pub async fn availability(
    store: &petstore::Client,
    id: u64,
) -> Result<Availability, petstore_portfolio_client::Error> {
    match store.get_pet_by_id().pet_id(id).send().await {
        Ok(pet) if pet.status == Some(types::PetStatus::Available) => {
            Ok(Availability::ForSale(pet.name.to_string()))
        }
        Ok(_) => Ok(Availability::Gone),
        Err(e) if e.is_not_found() => Ok(Availability::Gone),
        Err(e) => Err(e),
    }
}

/// Signs a customer up for the newsletter.
pub async fn sign_up(
    site: &portfolio::Client,
    email: &str,
) -> Result<(), petstore_portfolio_client::Error> {
    let email = email
        .parse()
        .map_err(|e| petstore_portfolio_client::Error::InvalidRequest(format!("{e}")))?;
    site.subscribe_newsletter()
        .body(portfolio::types::SubscribeRequest { email })
        .send()
        .await?;
    Ok(())
}
