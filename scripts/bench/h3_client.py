"""An independent HTTP/3 client (aioquic) that times one GET on a new connection.

A warm-up connection runs first (untimed), so Python's one-time set-up is not counted.

Prints one JSON line: {"handshake_ms", "ttfb_ms", "total_ms", "status", "bytes"}, all
from a monotonic clock started just before the first packet; used to cross-check
h123's HTTP/3 figures against another QUIC stack.
"""

import asyncio
import json
import ssl
import sys
import time
from urllib.parse import urlparse

from aioquic.asyncio import connect
from aioquic.asyncio.protocol import QuicConnectionProtocol
from aioquic.h3.connection import H3_ALPN, H3Connection
from aioquic.h3.events import DataReceived, HeadersReceived
from aioquic.quic.configuration import QuicConfiguration


class TimedClient(QuicConnectionProtocol):
    """Sends one request and records when its headers and its last byte arrive."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.http = H3Connection(self._quic)
        self.done = asyncio.get_running_loop().create_future()
        self.first_byte = None
        self.status = None
        self.bytes = 0

    def get(self, authority, path):
        stream = self._quic.get_next_available_stream_id()
        self.http.send_headers(
            stream,
            [
                (b":method", b"GET"),
                (b":scheme", b"https"),
                (b":authority", authority.encode()),
                (b":path", path.encode()),
                (b"user-agent", b"aioquic-crosscheck"),
            ],
            end_stream=True,
        )
        self.transmit()

    def quic_event_received(self, event):
        for h3_event in self.http.handle_event(event):
            if isinstance(h3_event, HeadersReceived):
                self.first_byte = self.first_byte or time.monotonic()
                for name, value in h3_event.headers:
                    if name == b":status":
                        self.status = int(value)
                if h3_event.stream_ended and not self.done.done():
                    self.done.set_result(time.monotonic())
            elif isinstance(h3_event, DataReceived):
                self.bytes += len(h3_event.data)
                if h3_event.stream_ended and not self.done.done():
                    self.done.set_result(time.monotonic())


async def timed_get(parsed, config):
    """One GET on a new connection: (handshake done, first byte, end, protocol) times."""
    start = time.monotonic()
    async with connect(
        parsed.hostname, parsed.port or 443, configuration=config, create_protocol=TimedClient
    ) as client:
        handshake = time.monotonic()
        client.get(parsed.netloc, parsed.path or "/")
        end = await asyncio.wait_for(client.done, 10)
        return {
            "handshake_ms": (handshake - start) * 1000,
            "ttfb_ms": (client.first_byte - start) * 1000,
            "total_ms": (end - start) * 1000,
            "status": client.status,
            "bytes": client.bytes,
        }


async def main(url, cafile):
    parsed = urlparse(url)
    config = QuicConfiguration(is_client=True, alpn_protocols=H3_ALPN)
    config.load_verify_locations(cafile)
    config.verify_mode = ssl.CERT_REQUIRED
    # The first connection of a process pays Python's one-time set-up (imports, crypto
    # back end); time a second, new connection, as a long-running client would see it.
    await timed_get(parsed, config)
    print(json.dumps(await timed_get(parsed, config)))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
