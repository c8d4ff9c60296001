"""schemathesis hooks for the pet store runs (loaded through SCHEMATHESIS_HOOKS).

XML, form and multipart bodies carry text only. What schemathesis generates
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
