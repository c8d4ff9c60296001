"""A real SMTP server for the end-to-end tests (aiosmtpd).

Usage: smtp_server.py <folder> <port>

Every message it accepts is written to <folder> as one JSON file (envelope,
headers and the decoded text and HTML bodies), atomically, named so that names sort in
arrival order. Recipients that start with "reject" are refused with 550.
It prints READY once it listens, and stops when its standard input closes.
"""

import email
import email.policy
import itertools
import json
import os
import sys
import time

from aiosmtpd.controller import Controller

folder, port = sys.argv[1], int(sys.argv[2])
counter = itertools.count()


class Handler:
    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address.lower().startswith("reject"):
            return "550 5.1.1 No such mailbox here"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        message = email.message_from_bytes(envelope.original_content, policy=email.policy.default)
        body = message.get_body(preferencelist=("plain",))
        html = message.get_body(preferencelist=("html",))
        record = {
            "mail_from": envelope.mail_from,
            "rcpt_tos": envelope.rcpt_tos,
            "headers": [[name, str(value)] for name, value in message.items()],
            "body": body.get_content() if body is not None else "",
            "html": html.get_content() if html is not None else "",
        }
        name = f"{time.time_ns():020d}-{next(counter):06d}.json"
        temporary = os.path.join(folder, "." + name + ".tmp")
        with open(temporary, "w", encoding="utf-8") as out:
            json.dump(record, out)
        os.rename(temporary, os.path.join(folder, name))
        return "250 Message accepted for delivery"


controller = Controller(Handler(), hostname="127.0.0.1", port=port)
controller.start()
print("READY", flush=True)
try:
    sys.stdin.read()
finally:
    controller.stop()
