"""A user's whole life through a client that openapi-generator made from the
official Swagger Petstore document (.ci/schemathesis/reference/).

Run by tests/petstore/generated_clients.rs, with the generated package
(`official_petstore_client`, generator `python`) on PYTHONPATH:

    python official_users.py BASE_URL

BASE_URL is the server's origin (http://127.0.0.1:PORT); the server runs in
auth mode `open`. With the official document's own example values (the
user `theUser`, password `12345`), through the generated client only, it
calls createUser, loginUser, getUserByName, updateUser and deleteUser,
checking each answer, and prints OK. It exits 1 with a message naming the
step that went wrong.
"""

import sys
import traceback

import official_petstore_client
from official_petstore_client.exceptions import ApiException
from official_petstore_client.models.user import User


class Failed(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failed(message)


def example_user(**changes):
    """The official document's example User, with `changes`."""
    fields = dict(
        id=10,
        username="theUser",
        first_name="John",
        last_name="James",
        email="john@email.com",
        password="12345",
        phone="12345",
        user_status=1,
    )
    fields.update(changes)
    return User(**fields)


def main(base_url):
    configuration = official_petstore_client.Configuration(host=base_url.rstrip("/") + "/v2")
    with official_petstore_client.ApiClient(configuration) as api_client:
        users = official_petstore_client.UserApi(api_client)

        step = "createUser"
        created = users.create_user(user=example_user())
        check(created.username == "theUser", f"{step} answered {created!r}")
        check(created.password is None, f"{step} returned the password: {created!r}")

        step = "loginUser"
        login = users.login_user_with_http_info(username="theUser", password="12345")
        check(login.status_code == 200, f"{step} answered {login.status_code}")
        check(isinstance(login.data, str) and login.data, f"{step} gave no session: {login.data!r}")
        check(
            any(k.lower() == "x-expires-after" for k in (login.headers or {})),
            f"{step} has no X-Expires-After: {login.headers!r}",
        )

        step = "getUserByName"
        found = users.get_user_by_name("theUser")
        check(
            (found.username, found.first_name, found.email) == ("theUser", "John", "john@email.com"),
            f"{step} answered {found!r}",
        )

        step = "updateUser"
        users.update_user("theUser", user=example_user(first_name="Johnny", password="54321"))
        found = users.get_user_by_name("theUser")
        check(found.first_name == "Johnny", f"{step} did not stick: {found!r}")
        login = users.login_user(username="theUser", password="54321")
        check(login, f"{step}: the new password does not log in")

        step = "deleteUser"
        users.delete_user("theUser")
        try:
            users.get_user_by_name("theUser")
            raise Failed(f"{step}: the user is still there")
        except ApiException as gone:
            check(gone.status == 404, f"{step}: then getUserByName answered {gone.status}")
    print("OK")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    try:
        main(sys.argv[1])
    except Failed as failure:
        print(f"FAILED: {failure}", file=sys.stderr)
        sys.exit(1)
    except Exception:
        traceback.print_exc()
        sys.exit(1)
