"""An SMTP server that counts what it accepts, for `cargo xtask bench`.

Usage: smtp_sink.py <counter file> <port>

Each accepted message adds one byte per recipient to <counter file>, so the
file's size is the number of emails delivered. It prints READY once it
listens and stops when its standard input closes.
"""

import sys

from aiosmtpd.controller import Controller

path, port = sys.argv[1], int(sys.argv[2])
counter = open(path, "ab", buffering=0)


class Handler:
    async def handle_DATA(self, server, session, envelope):
        counter.write(b"." * len(envelope.rcpt_tos))
        return "250 OK"


controller = Controller(Handler(), hostname="127.0.0.1", port=port)
controller.start()
print("READY", flush=True)
sys.stdin.read()
controller.stop()
