"""Fake provider servers on 127.0.0.1, one per wire format, scripted per test.

Each speaks its provider's wire format over a real socket (streamed and whole answers,
rate-limit headers, quota bodies, cut streams) and records every request it received, with
key-carrying headers removed. The official SDKs are run against them in the tests, so the
fakes cannot drift into a dialect only our client speaks.
"""

from tests.providers.fakes.base import Answer, Call, Fault, FakeServer, Raw, Recorded

__all__ = ["Answer", "Call", "Fault", "FakeServer", "Raw", "Recorded"]
