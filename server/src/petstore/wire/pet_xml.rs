//! A pet and a list of pets in XML: lists are wrapped
//! (`<photoUrls><photoUrl>`), a list of pets is `<pets><pet>...</pet></pets>`.
//! The handlers (`pet.rs`) and the list writer (`pet_list.rs`) share it.

use serde::{Deserialize, Serialize};

use crate::petstore::model::{Category, Pet, PetStatus, Tag};
use crate::petstore::wire::{ToXml, xml_document};

/// The XML shape of a pet: lists are wrapped (`<photoUrls><photoUrl>`).
#[serde_with::skip_serializing_none]
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename = "pet")]
pub(crate) struct PetXml {
    id: Option<i64>,
    name: String,
    category: Option<Category>,
    #[serde(rename = "photoUrls")]
    photo_urls: PhotoUrlsXml,
    #[serde(default)]
    tags: TagsXml,
    status: Option<PetStatus>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct PhotoUrlsXml {
    #[serde(rename = "photoUrl", default)]
    items: Vec<String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct TagsXml {
    #[serde(rename = "tag", default)]
    items: Vec<Tag>,
}

impl From<&Pet> for PetXml {
    fn from(pet: &Pet) -> Self {
        PetXml {
            id: pet.id,
            name: pet.name.clone(),
            category: pet.category.clone(),
            photo_urls: PhotoUrlsXml {
                items: pet.photo_urls.clone(),
            },
            tags: TagsXml {
                items: pet.tags.clone(),
            },
            status: pet.status,
        }
    }
}

impl From<PetXml> for Pet {
    fn from(xml: PetXml) -> Self {
        Pet {
            id: xml.id,
            name: xml.name,
            category: xml.category,
            photo_urls: xml.photo_urls.items,
            tags: xml.tags.items,
            status: xml.status,
        }
    }
}

impl ToXml for Pet {
    fn to_xml(&self) -> Result<String, quick_xml::SeError> {
        xml_document(&PetXml::from(self))
    }
}

/// A list of pets in XML: `<pets><pet>...</pet></pets>`.
#[derive(Debug, Serialize)]
#[serde(rename = "pets")]
struct PetsXml {
    #[serde(rename = "pet")]
    items: Vec<PetXml>,
}

impl ToXml for Vec<Pet> {
    fn to_xml(&self) -> Result<String, quick_xml::SeError> {
        xml_document(&PetsXml {
            items: self.iter().map(PetXml::from).collect(),
        })
    }
}
