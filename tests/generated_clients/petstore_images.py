"""Pet images through a client that openapi-generator made from openapi/petstore.yaml.

Run by tests/petstore/generated_clients.rs, with the generated package
(`petstore_client`, generator `python`) on PYTHONPATH:

    python petstore_images.py BASE_URL IMAGE_FILE

BASE_URL is the server's origin (http://127.0.0.1:PORT); IMAGE_FILE a PNG.
Through the generated client only, it adds a pet, uploads the image to it
(uploadFile), reads the pet back (getPetById) and fetches the image
(getPetImage), checking each answer. It exits 1 with a message naming what
went wrong.
"""

import sys
import traceback
from urllib.parse import urlparse

import petstore_client
from petstore_client.models.pet import Pet
from petstore_client.models.pet_status import PetStatus
from petstore_client.models.tag import Tag


class Failed(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failed(message)


def header(headers, name):
    """A response header by name, whatever its case."""
    for key, value in (headers or {}).items():
        if key.lower() == name.lower():
            return value
    return None


def sent_headers(serialized):
    """The headers of a request the generated client serialized (method, url, headers, body, ...)."""
    return serialized[2]


def main(base_url, image_file):
    with open(image_file, "rb") as f:
        png = f.read()
    check(png.startswith(b"\x89PNG\r\n\x1a\n"), f"{image_file} is not a PNG")

    configuration = petstore_client.Configuration(host=base_url.rstrip("/") + "/v2")
    with petstore_client.ApiClient(configuration) as api_client:
        pets = petstore_client.PetApi(api_client)

        # addPet
        added = pets.add_pet_with_http_info(
            Pet(
                name="Pixel",
                photo_urls=[],
                tags=[Tag(name="generated-client")],
                status=PetStatus.AVAILABLE,
            )
        )
        check(added.status_code == 200, f"addPet answered {added.status_code}")
        pet = added.data
        check(pet.id is not None and pet.id > 0, f"addPet gave no id: {pet!r}")
        check(pet.name == "Pixel", f"addPet gave back {pet!r}")
        print(f"addPet: pet {pet.id}")

        # uploadFile: the generated client sends the first media type the
        # document lists for the body, application/octet-stream (it has no
        # multipart form for a body that is a binary string or a form).
        serialized = pets._upload_file_serialize(
            pet_id=pet.id,
            body=png,
            idempotency_key=None,
            additional_metadata="generated client",
            _request_auth=None,
            _content_type=None,
            _headers=None,
            _host_index=0,
        )
        upload_type = sent_headers(serialized).get("Content-Type")
        print(f"uploadFile sends Content-Type: {upload_type}")
        uploaded = pets.upload_file_with_http_info(
            pet.id, png, additional_metadata="generated client"
        )
        check(uploaded.status_code == 200, f"uploadFile answered {uploaded.status_code}")
        location = header(uploaded.headers, "Location")
        check(location, f"uploadFile answered no Location header: {uploaded.headers!r}")
        answer = uploaded.data
        check(answer.code == 200, f"uploadFile answered {answer!r}")
        check(
            location in (answer.message or "")
            and "image/png" in answer.message
            and f"{len(png)} bytes" in answer.message
            and "generated client" in answer.message,
            f"uploadFile's message does not name the image: {answer.message!r}",
        )
        print(f"uploadFile: {answer.message}")

        # getPetById: the image's URL is the pet's last photoUrl.
        read = pets.get_pet_by_id(pet.id)
        check(read.id == pet.id and read.name == "Pixel", f"getPetById gave {read!r}")
        check(
            read.photo_urls[-1:] == [location],
            f"photoUrls {read.photo_urls!r} do not end with {location}",
        )

        # getPetImage: the generated client asks for JSON first (its Accept
        # header picks the first JSON type of the 200 and error answers).
        parts = urlparse(location).path.rstrip("/").split("/")
        check(
            len(parts) >= 4 and parts[-2] == "images" and parts[-3] == str(pet.id),
            f"{location} is not an image URL of pet {pet.id}",
        )
        image_id = int(parts[-1])
        serialized = pets._get_pet_image_serialize(
            pet_id=pet.id,
            image_id=image_id,
            _request_auth=None,
            _content_type=None,
            _headers=None,
            _host_index=0,
        )
        print(f"getPetImage sends Accept: {sent_headers(serialized).get('Accept')}")
        image = pets.get_pet_image_with_http_info(pet.id, image_id)
        check(image.status_code == 200, f"getPetImage answered {image.status_code}")
        content_type = header(image.headers, "Content-Type")
        check(
            content_type == "image/png",
            f"getPetImage answered Content-Type {content_type!r}, not image/png",
        )
        check(
            bytes(image.data) == png,
            f"getPetImage gave {len(image.data)} bytes, not the {len(png)} uploaded",
        )
        print(f"getPetImage: {len(image.data)} bytes, {content_type}, the same PNG")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(f"usage: {sys.argv[0]} BASE_URL IMAGE_FILE")
    try:
        main(sys.argv[1], sys.argv[2])
    except Failed as failed:
        sys.exit(f"FAILED: {failed}")
    except petstore_client.ApiException as error:
        sys.exit(
            f"FAILED: the server answered {error.status} {error.reason} "
            f"(headers {dict(error.headers or {})!r}): {error.body!r}"
        )
    except Exception as error:  # the generated client's own errors, e.g. pydantic's
        traceback.print_exc()
        sys.exit(f"FAILED: {type(error).__name__}: {error}")
    print("OK")
