//! Programs that use the SDK against a running server. Each is a function
//! here (so that the end-to-end tests run it) and a binary beside it.

use std::io::Write;

use anyhow::Context as _;
use petstore_portfolio_client::petstore::{self, types};
use petstore_portfolio_client::{RetryPolicy, portfolio};

/// A first walk through the pet store: add a pet, find it, upload an image,
/// place an order for it, and see the inventory change. Writes what it does
/// to `out`.
pub async fn petstore_tour(server_url: &str, out: &mut impl Write) -> anyhow::Result<()> {
    // No credentials needed: the pet store runs in auth mode `open` by default.
    let client = petstore::ClientBuilder::new(server_url).build()?;

    // 1. Add a pet. The server assigns the id and defaults the status to available.
    let new_pet = types::Pet {
        id: None,
        name: "Biscuit".parse()?,
        category: Some(types::Category {
            id: None,
            name: Some("Dogs".parse()?),
        }),
        photo_urls: Vec::new(),
        tags: vec![types::Tag {
            id: None,
            name: Some("tour".parse()?),
        }],
        status: None,
    };
    let pet = client
        .add_pet()
        .body(new_pet)
        .send()
        .await
        .context("addPet")?
        .into_inner();
    let pet_id = pet.id.context("the server assigns an id")?;
    writeln!(out, "added pet {pet_id}: {} ({:?})", *pet.name, pet.status)?;

    // 2. Find it, by tag.
    let found = client
        .find_pets_by_tags()
        .tags(vec!["tour".to_owned()])
        .send()
        .await?
        .into_inner();
    let found_it = found.iter().any(|p| p.id == Some(pet_id));
    writeln!(
        out,
        "found it by its tag: {found_it} ({} pets tagged \"tour\")",
        found.len()
    )?;

    // 3. Upload a photo: the bytes of a 1x1 PNG.
    let uploaded = client
        .upload_file()
        .pet_id(pet_id)
        .body(TINY_PNG.to_vec())
        .send()
        .await?;
    let location = uploaded
        .headers()
        .get("location")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    writeln!(out, "uploaded an image; it is served at {location}")?;

    // 4. Place an order: the pet becomes pending. The pet's id is the
    // order's `petId`, one type for both.
    let order = types::Order::builder()
        .pet_id(pet_id)
        .quantity(std::num::NonZeroU32::MIN);
    let order = client
        .place_order()
        .body(order)
        .send()
        .await
        .context("placeOrder")?
        .into_inner();
    let status = client
        .get_pet_by_id()
        .pet_id(pet_id)
        .send()
        .await?
        .into_inner()
        .status;
    writeln!(
        out,
        "placed order {:?}; the pet is now {status:?}",
        order.id
    )?;

    // 5. The inventory counts pets by status.
    let inventory = client.get_inventory().send().await?.into_inner();
    let mut counts: Vec<_> = inventory.into_iter().collect();
    counts.sort();
    writeln!(out, "inventory: {counts:?}")?;

    // An error the server answered prints as one line: status, code, message.
    let missing = client.get_pet_by_id().pet_id(u64::MAX >> 1).send().await;
    if let Err(error) = missing {
        writeln!(out, "asking for a missing pet: {error}")?;
    }
    Ok(())
}

/// A first walk through the portfolio: read the site information and the
/// projects, subscribe to the newsletter, and send the contact form with an
/// API key (the operator hands keys out; keep them in the environment).
pub async fn portfolio_tour(
    server_url: &str,
    api_key: &str,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    // Public operations need no key.
    let public = portfolio::ClientBuilder::new(server_url).build()?;
    let site = public
        .get_site_info()
        .send()
        .await
        .context("getSiteInfo")?
        .into_inner();
    writeln!(out, "site: {} - {}", *site.name, *site.headline)?;
    let projects = public
        .list_projects()
        .send()
        .await
        .context("listProjects")?
        .into_inner();
    for project in &projects {
        writeln!(out, "project {}: {}", *project.slug, *project.summary)?;
    }

    // The newsletter answers the same for every address: no enumeration.
    let subscription = portfolio::types::SubscribeRequest {
        email: "tour@example.test".parse()?,
    };
    let accepted = public
        .subscribe_newsletter()
        .body(subscription)
        .send()
        .await?
        .into_inner();
    writeln!(out, "newsletter: {}", accepted.message)?;

    // The contact form is protected: it needs a key with contact:write.
    let protected = portfolio::ClientBuilder::new(server_url)
        .api_key(api_key)
        .build()?;
    let message = portfolio::types::ContactRequest {
        name: "Tour".parse()?,
        email: "tour@example.test".parse()?,
        subject: Some("Hello from the tour".parse()?),
        message: Some("The SDK works.".parse()?),
    };
    match protected.submit_contact().body(message).send().await {
        Ok(receipt) => writeln!(out, "contact form sent: submission {}", receipt.id)?,
        // The envelope says why: 401 names the header, 403 the scope.
        Err(error) if error.status().is_some() => writeln!(
            out,
            "contact form refused: {error} {:?}",
            error.details().cloned().unwrap_or_default()
        )?,
        Err(error) => return Err(error.into()),
    }
    Ok(())
}

/// A 1x1 transparent PNG.
const TINY_PNG: &[u8] = &[
    0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4,
    0x89, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0x00, 0x01, 0x00, 0x00,
    0x05, 0x00, 0x01, 0x0D, 0x0A, 0x2D, 0xB4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE,
    0x42, 0x60, 0x82,
];

/// A server-to-server caller: it gets bearer tokens with an OAuth client's
/// id and secret (the SDK fetches a token, and a new one before it
/// expires) and reads the subscribers `calls` times. Over the server's
/// limit, the SDK waits as long as `Retry-After` says and tries again: this
/// caller allows each call two minutes. Writes what it does to `out`.
pub async fn server_to_server(
    server_url: &str,
    client_id: &str,
    client_secret: &str,
    calls: usize,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    let client = portfolio::ClientBuilder::new(server_url)
        .client_credentials(client_id, client_secret)
        .retry(
            RetryPolicy::default()
                .max_attempts(5)
                .deadline(std::time::Duration::from_secs(120)),
        )
        .build()?;
    for done in 1..=calls {
        let page = client
            .list_subscribers()
            .per_page(10)
            .send()
            .await
            .context("listSubscribers")?;
        writeln!(out, "call {done}: {} subscribers", page.total)?;
    }
    Ok(())
}
