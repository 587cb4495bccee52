"""Kubernetes Secrets: their kind, their data maps (YAML, JSON, a flow mapping) and the values under them.

docs/capture.md: "Kubernetes Secrets" (under "Object keys and JSON").
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Final

from bitexact.capture.budget import Deadline
from bitexact.capture.detectors.credentials.names import ALREADY_TOKENS
from bitexact.capture.detectors.credentials.pairs import _BLOCK_HEADER, _indented_block


# A Kubernetes Secret (rules version 8): its kind's line (YAML), its data maps' keys, and a JSON text's parts.
_KIND_SECRET = re.compile(r"kind:[ \t]*+([\"']?)Secret\1[ \t]*+(?:#[^\n]*+)?(?=\r?\n|\Z)")
_SECRET_DATA = re.compile(r"(?:data|stringData):[ \t]*+(?:#.*)?\Z")
_KUBE_VALUE = re.compile(r"""[ \t]*+(?:"(?:[^"\\\r\n]|\\.)*+"|'[^'\r\n]*+'|[^\s:#'"][^\r\n:]*+):[ \t]*+([^\r\n]*)""")
_JSON_PART = re.compile(r'"((?:[^"\\\x00]|\\.)*+)"([ \t\r\n]*+:)?|[{}\[\]]')
_KEY, _STRING, _OPEN, _CLOSE = range(4)
"""What a part of JSON written inside a text is (:func:`_json_parts`)."""


def _json_parts(text: str, deadline: Deadline) -> Iterator[tuple[int, re.Match[str]]]:
    """The strings (a key when a ``:`` follows it), and the brackets, of JSON written inside ``text``, in order,
    the deadline checked at each: what the rules that read JSON in text walk, each with its own stack of open
    containers (a Secret's data maps, Terraform's sensitive values, a state's sensitive attributes). A string's
    content is group 1 of its match."""
    for part in _JSON_PART.finditer(text):
        deadline.check()
        char = part.group()[0]
        if char == '"':
            yield (_STRING if part.group(2) is None else _KEY), part
        else:
            yield (_OPEN if char in "{[" else _CLOSE), part


# Rules version 9: a data map written as a YAML flow mapping (``data: {password: cGFzcw==, user: YQ==}``), its
# opening, then each ``KEY: VALUE`` entry, its value quoted or plain (up to a comma, a brace or the line's end),
# the comma or brace after it. No entry holds a nested flow collection (a Secret's values are strings).
_SECRET_FLOW = re.compile(r"(?:data|stringData):[ \t]*+\{")
_FLOW_ENTRY = re.compile(
    r"""[ \t\r\n]*+(?:"(?:[^"\\\r\n\x00]|\\.)*+"|'[^'\r\n\x00]*+'|[^\s:,{}\[\]'"#\x00][^:,{}\[\]\r\n\x00]*+)"""
    r"""[ \t]*+:[ \t\r\n]*+(\[CREDENTIAL\]|"(?:[^"\\\r\n\x00]|\\.)*+"|'[^'\r\n\x00]*+'|[^\s,{}\[\]\x00][^,{}\[\]\r\n\x00]*+)"""
    r"""[ \t\r\n]*+([,}])"""
)
_MAX_FLOW_ENTRIES: Final[int] = 4096


def _kube_values(text: str, at: int, column: int) -> list[tuple[int, int]]:
    """The spans of the values of the YAML map under the key whose line ends at ``at`` (indented past
    ``column``): each ``KEY: VALUE`` line's value, or with none on the line (a block scalar's header or nothing)
    the lines indented under it."""
    block = _indented_block(text, at, column)
    if block is None:
        return []
    spans: list[tuple[int, int]] = []
    child = block[0] - (text.rfind("\n", 0, block[0]) + 1)  # the map's keys' column
    position = text.rfind("\n", 0, block[0]) + 1
    while position < block[1]:
        newline = text.find("\n", position)
        end = block[1] if newline == -1 or newline > block[1] else newline
        line = text[position:end]
        content = line.lstrip(" ")
        if len(line) - len(content) == child and not content.startswith("#"):
            pair = _KUBE_VALUE.match(text, position + child, end)
            if pair is not None:
                value = pair.group(1).rstrip(" \t\r")
                if value and not _BLOCK_HEADER.fullmatch(value):
                    if value not in ALREADY_TOKENS:
                        spans.append((pair.start(1), pair.start(1) + len(value)))
                else:
                    below = _indented_block(text, end, child)
                    if below is not None and text[below[0] : below[1]] not in ALREADY_TOKENS:
                        spans.append(below)
        if newline == -1:
            break
        position = newline + 1
    return spans


def _kube_flow_values(text: str, at: int) -> list[tuple[int, int]]:
    """The spans of the values of a YAML flow mapping whose ``{`` is at ``at - 1`` (:data:`_FLOW_ENTRY`): read up
    to its closing brace, or to the first entry not read as one (what was read before it is still taken)."""
    spans: list[tuple[int, int]] = []
    position = at
    for _ in range(_MAX_FLOW_ENTRIES):
        entry = _FLOW_ENTRY.match(text, position)
        if entry is None:
            break
        start, end = entry.span(1)
        while text[end - 1] in " \t":  # a plain value's trailing blanks are none of it
            end -= 1
        if text[start:end] not in ALREADY_TOKENS:
            spans.append((start, end))
        if entry.group(2) == "}":
            break
        position = entry.end()
    return spans
