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
"""

import os
import re

import schemathesis
from schemathesis.core.parameters import ParameterLocation

XML = {"application/xml", "text/xml"}
FORM = {"application/x-www-form-urlencoded"}
MULTIPART = {"multipart/form-data"}
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


@schemathesis.hook
def filter_case(context, case):
    media_type = (case.media_type or "").split(";")[0].strip().lower()
    if media_type not in XML | FORM | MULTIPART:
        return True
    meta = case.meta
    if meta is not None and meta.is_negative_at(ParameterLocation.BODY):
        return False
    if media_type in XML:
        return not any(NOT_XML.search(s) for s in _strings(case.body))
    if media_type in FORM and isinstance(case.body, dict):
        return not any(value == [] for value in case.body.values())
    return True
