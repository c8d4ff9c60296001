"""schemathesis hooks for every run (loaded through SCHEMATHESIS_HOOKS).

1. The credentials schemathesis runs with stay whole. It learns ids from the
answers it gets, so it would otherwise revoke the OAuth client it gets its
tokens from (which ends the run's authorised requests), or delete or rename
the pet store user whose password and sessions it uses. Such a request goes
to a client or user that does not exist instead (a 404); the operations run
with every other value as generated.

2. XML, form and multipart bodies carry text only. What schemathesis generates
for them can therefore not always reach the server as generated:
- a wrongly typed value arrives as a valid string (`<username>null</username>`,
  `name=5`, a multipart part `true`), and a lone value is indistinguishable
  from a list of one (`tags=a`): such negative cases are not negative on the
  wire;
- XML 1.0 cannot carry most control characters, which the serializer drops,
  so a "valid" name can arrive empty;
- a form cannot carry an empty list: `photoUrls: []` arrives as no
  `photoUrls` at all, which the server refuses as missing (a form sends an
  empty list as `photoUrls=`, docs/petstore.md).
Those cases test the encoding, not the server, and are skipped here. Every
operation that takes XML or a form also takes JSON, where all cases run; the
end-to-end suite covers the XML and form paths on their own.

3. Text from outside follows one policy (docs/architecture.md, "Text from
outside"): no control characters, but tab and newlines in the prose fields.
The documents say so in words, not in a `pattern` on every string, so a
"valid" case with, say, an ESC in a name (in a body, or the query of
updatePetWithForm) is refused (422) by design; such positive cases are
skipped. Negative cases run as generated.

4. Generated Idempotency-Key values repeat across cases with other bodies,
which the server rightly refuses (422): each positive case gets a fresh key.
"""

import os
import re
import uuid

import schemathesis
from schemathesis.core.parameters import ParameterLocation

XML = {"application/xml", "text/xml"}
FORM = {"application/x-www-form-urlencoded"}
MULTIPART = {"multipart/form-data"}
# The text policy (server/src/text_policy.rs): the prose fields, and the
# control characters (Unicode's Cc) refused outside them.
MULTI_LINE_FIELDS = {"body", "bio", "description", "intended_use", "message"}
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
PROSE_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]|\r(?!\n)")


def _breaks_text_policy(value, multi_line=False):
    if isinstance(value, str):
        return bool((PROSE_CONTROL if multi_line else CONTROL).search(value))
    if isinstance(value, dict):
        return any(
            _breaks_text_policy(item, isinstance(key, str) and key in MULTI_LINE_FIELDS)
            for key, item in value.items()
        )
    if isinstance(value, (list, tuple)):
        return any(_breaks_text_policy(item, multi_line) for item in value)
    return False


# Characters XML 1.0 cannot carry.
NOT_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(key)
            yield from _strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)


# What .ci/schemathesis/run makes for the run: the portfolio's OAuth client
# (its id in the environment) and the pet store's user; and, for each, a
# well-formed stand-in that names nobody.
RUN_CREDENTIALS = [
    # (operation, path parameter, the run's own value, its stand-in)
    (
        "POST /api/admin/oauth-clients/{client_id}/revoke",
        "client_id",
        os.environ.get("PORTFOLIO_CLIENT_ID"),
        "pc_0000000000000000",
    ),
    ("DELETE /user/{username}", "username", "ci-schemathesis", "ci-schemathesis-stand-in"),
    ("PUT /user/{username}", "username", "ci-schemathesis", "ci-schemathesis-stand-in"),
]


@schemathesis.hook
def before_call(context, case, kwargs):
    parameters = case.path_parameters or {}
    for label, parameter, own, stand_in in RUN_CREDENTIALS:
        if case.operation.label == label and own and parameters.get(parameter) == own:
            parameters[parameter] = stand_in
    # 4. An Idempotency-Key names one request: the same key with another
    # body is the client's mistake (422), and generated keys repeat ("0",
    # "a"). A case with a valid key gets a fresh one; invalid keys run as
    # generated.
    headers = case.headers or {}
    meta = case.meta
    negative_headers = meta is not None and meta.is_negative_at(ParameterLocation.HEADER)
    for name in list(headers):
        if name.lower() == "idempotency-key" and not negative_headers:
            headers[name] = str(uuid.uuid4())


@schemathesis.hook
def filter_case(context, case):
    media_type = (case.media_type or "").split(";")[0].strip().lower()
    meta = case.meta
    negative_body = meta is not None and meta.is_negative_at(ParameterLocation.BODY)
    if not negative_body and _breaks_text_policy(case.body):
        return False
    negative_query = meta is not None and meta.is_negative_at(ParameterLocation.QUERY)
    if not negative_query and _breaks_text_policy(case.query):
        return False
    if media_type not in XML | FORM | MULTIPART:
        return True
    if negative_body:
        return False
    if media_type in XML:
        return not any(NOT_XML.search(s) for s in _strings(case.body))
    if media_type in FORM and isinstance(case.body, dict):
        return not any(value == [] for value in case.body.values())
    return True
