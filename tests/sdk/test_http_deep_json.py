"""The model an exchange names, read from its JSON without recursing deep on the agent's stack: a body nested
past Python's json module left the stack at the interpreter's limit, where a collection ran the agent's own
finalizers with no stack left ("Exception ignored in ...", each one's cleanup lost)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from bitexact.sdk.http.sse import json_document, model_of_events, parse_events
from stack_room import least_finalizer_room

DEEP = '{"a": ' + "[" * 5000 + "]" * 5000 + "}"


@pytest.mark.parametrize(
    "read",
    [
        lambda: json_document(DEEP),
        lambda: model_of_events(parse_events("data: " + DEEP + '\n\ndata: {"model": "m"}\n\n')),
    ],
    ids=["body", "event-stream"],
)
def test_a_deep_body_leaves_the_agents_stack_alone(read: Callable[[], object]) -> None:
    assert least_finalizer_room(read) > 500


def test_the_model_of_a_stream_is_read_past_a_deep_event() -> None:
    assert json_document(DEEP) is None
    assert model_of_events(parse_events("data: " + DEEP + '\n\ndata: {"model": "m-sse"}\n\n')) == "m-sse"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"model": "m", "a": ' + "[" * 900 + "]" * 900 + "}", "m"),  # past json's reach, within orjson's
        ('{"model": "m", "n": NaN}', "m"),  # orjson refuses; Python's json reads it
        ('{"model": "m", "s": "\\ud800"}', "m"),  # a lone surrogate escape: the same
        ('{"model": "m", "n": 1e400}', "m"),  # a number past a double: the same
        ('{"model": "m", "n": NaN, "a": ' + "[" * 500 + "]" * 500 + "}", None),  # refused by both safe readers
        ('{"model": "m",', None),
    ],
)
def test_what_is_read_as_a_document(text: str, expected: str | None) -> None:
    doc = json_document(text)
    assert (doc["model"] if isinstance(doc, dict) else None) == expected
