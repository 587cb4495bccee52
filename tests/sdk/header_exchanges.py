"""A header's value sent through both wrapped clients (httpx and requests) in one run, and what the run recorded.

The header tests of several sessions (test_http_header_urls21/22/30, test_http_header_paths28) each send a case's
header on a real loopback exchange, check that the agent or the server got it as sent (recording never changes
what crosses the wire), and compare what the store holds. Served by :func:`sdk.servers.header_cases_handler`.
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx
import requests

import bitexact
from sdk.conftest import http_calls
from sdk.servers import latin1_digest


@dataclass(frozen=True)
class Recorded:
    """What one run of two exchanges stored: the header's recorded value per exchange, and every stored call as
    text (to assert a secret appears nowhere in them)."""

    values: list[str]
    stored: str


def _recorded(run_id: str | None, side: str, name: str) -> Recorded:
    calls = http_calls(run_id)
    return Recorded([call["data"][side]["headers"][name] for call in calls], str(calls))


def response_header(base: str, index: int, name: str, sent: str) -> Recorded:
    """The response header ``name`` of case ``index`` (``/h?i=N``) fetched by each client: each agent reads it as
    ``sent`` (redirects not followed, so a ``Location`` is read where it was sent)."""
    with bitexact.run() as r:
        assert bitexact.wrap(httpx.Client()).get(f"{base}/h?i={index}").headers[name] == sent  # the agent's
        assert bitexact.wrap(requests.Session()).get(f"{base}/h?i={index}", allow_redirects=False).headers[name] == sent
    return _recorded(r.run_id, "response", name)


def request_header(base: str, name: str, sent: str) -> Recorded:
    """The request header ``name: sent`` sent by each client to ``/echo``: the server gets it as sent (its digest
    echoed, so the value is in no recorded body)."""
    with bitexact.run() as r:
        for client in (httpx.Client(), requests.Session()):
            assert bitexact.wrap(client).get(f"{base}/echo", headers={name: sent}).json()[name] == latin1_digest(sent)
    return _recorded(r.run_id, "request", name)
