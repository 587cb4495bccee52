"""Property: card numbers, IBANs and credentials never survive the shipped default policy.

However they are written - in several scripts' digits, spaced, hyphenated,
URL-encoded, inside JSON documents held in strings (escaped or not), under a
repeated key, as an object key or a number - the canonical JSON of what
apply_policy stores never holds them. The search reads every string, key and
number of the result, JSON documents in strings included, with every digit
made ASCII and every separator removed.
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bitexact.canon import canonicalize
from bitexact.capture import apply_policy, load_policy
from bitexact.capture.detectors import luhn_ok
from bitexact.capture.detectors.iban_registry import LENGTHS
from capture.support import StepClock

POLICY = load_policy("default")
ISSUERS = [("4", 16), ("4", 13), ("4", 19), ("51", 16), ("2221", 16), ("2720", 16), ("34", 15), ("37", 15),
           ("6011", 16), ("65", 19), ("3528", 16), ("62", 17), ("36", 14), ("300", 14), ("6759", 12), ("2200", 18)]
ZEROS = [ord("0"), 0x0660, 0x06F0, 0x0966, 0x09E6, 0x0E50, 0xFF10, 0x1D7CE]
SEPARATORS = [" ", "-", "%20", "%2D", "%2d", "+", "\u00a0", " - "]
WORDS = ["paid", "with", "card", "account", "please", "refund", "the", "order", "Tx", "ref", "note"]
_NORMALIZE_SEPARATORS = re.compile(r"%2[0dD]|[\s\-+\u00a0]")


@st.composite
def pans(draw: st.DrawFn) -> str:
    prefix, length = draw(st.sampled_from(ISSUERS))
    body = prefix + "".join(draw(st.sampled_from("0123456789")) for _ in range(length - len(prefix) - 1))
    return next(body + d for d in "0123456789" if luhn_ok(body + d))


@st.composite
def ibans(draw: st.DrawFn) -> str:
    country = draw(st.sampled_from(sorted(LENGTHS)))
    bban = "".join(draw(st.sampled_from("0123456789")) for _ in range(LENGTHS[country] - 4))
    numeric = "".join(str(int(c, 36)) for c in bban + country + "00")
    return f"{country}{98 - int(numeric) % 97:02d}{bban}"


secrets = st.text("ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789", min_size=10, max_size=24).map(
    lambda s: s + "7Q"  # a digit and a capital: looks like a token
)


@st.composite
def written_pan(draw: st.DrawFn, pan: str) -> str:
    zero = draw(st.sampled_from(ZEROS))
    digits = "".join(chr(zero + int(d)) for d in pan)
    if draw(st.booleans()):
        return digits
    separator = draw(st.sampled_from(SEPARATORS))
    return separator.join(digits[i : i + 4] for i in range(0, len(digits), 4))


@st.composite
def written_iban(draw: st.DrawFn, iban: str) -> str:
    text = iban.lower() if draw(st.booleans()) else iban
    if draw(st.booleans()):
        return text
    separator = draw(st.sampled_from([" ", "-", "%20"]))
    return separator.join(text[i : i + 4] for i in range(0, len(text), 4))


def in_text(draw: st.DrawFn, value: str) -> str:
    before = " ".join(draw(st.lists(st.sampled_from(WORDS), max_size=3)))
    after = " ".join(draw(st.lists(st.sampled_from(WORDS), max_size=3)))
    return f"{before} {value} {after}".strip()


def placed(draw: st.DrawFn, value: str, *, as_key: bool = True, as_number: int | None = None) -> Any:
    """The value somewhere a detector must find it."""
    ways = ["string", "text", "json", "json-escaped", "duplicate-key", "nested"]
    if as_key:
        ways.append("key")
    if as_number is not None:
        ways.append("number")
    way = draw(st.sampled_from(ways))
    if way == "string":
        return value
    if way == "text":
        return in_text(draw, value)
    if way == "json":
        return json.dumps({"note": in_text(draw, value)}, ensure_ascii=False)
    if way == "json-escaped":
        return json.dumps({"data": [in_text(draw, value)]}, ensure_ascii=True)
    if way == "duplicate-key":
        return '{"v": ' + json.dumps(value) + ', "v": "nothing here"}'
    if way == "nested":
        return json.dumps({"payload": json.dumps({"inner": value})})
    if way == "key":
        return {value: "x"}
    return as_number


@st.composite
def credential(draw: st.DrawFn, secret: str) -> Any:
    form = draw(st.sampled_from(["kv", "query", "bearer", "header", "object", "json", "repr"]))
    name = draw(st.sampled_from(["token", "api_key", "Password", "secret", "x-api-key", "access_token"]))
    if form == "kv":
        return in_text(draw, f"{name}={secret}")
    if form == "query":
        return f"GET /v1/items?q=a&{name}={secret}&page=2"
    if form == "bearer":
        return in_text(draw, f"Bearer {secret}")
    if form == "header":
        return f"Accept: */*\nAuthorization: Bearer {secret}\n"
    if form == "object":
        return {name: secret}
    if form == "json":
        return json.dumps({"auth": {name: secret}} if draw(st.booleans()) else {name: secret})
    return repr({name: secret})


@st.composite
def steps(draw: st.DrawFn) -> tuple[dict[str, Any], list[str], list[str], list[str]]:
    cards = draw(st.lists(pans(), min_size=0, max_size=3))
    accounts = draw(st.lists(ibans(), min_size=0, max_size=2))
    tokens = draw(st.lists(secrets, min_size=0, max_size=2))
    items: list[Any] = []
    for pan in cards:
        items.append(placed(draw, draw(written_pan(pan)), as_number=int(pan)))
    for iban in accounts:
        items.append(placed(draw, draw(written_iban(iban))))
    for secret in tokens:
        items.append(draw(credential(secret)))
    items = draw(st.permutations(items)) if items else items
    shape = draw(st.sampled_from(["list", "object", "top"]))
    if shape == "list":
        data: dict[str, Any] = {"tool": "lookup", "result": items}
    elif shape == "object":
        data = {"tool": "lookup", "kwargs": {f"k{i}": item for i, item in enumerate(items)}}
    else:
        data = {f"field{i}": item for i, item in enumerate(items)} or {"tool": "none"}
    return data, cards, accounts, tokens


def everything_stored(value: Any, out: list[str]) -> None:
    """Every string, key and number of ``value``, JSON documents in strings read too."""
    if isinstance(value, dict):
        for key, item in value.items():
            out.append(key)
            everything_stored(item, out)
    elif isinstance(value, list):
        for item in value:
            everything_stored(item, out)
    elif isinstance(value, str):
        out.append(value)
        try:
            inner = json.loads(value, object_pairs_hook=lambda pairs: [x for pair in pairs for x in pair])
        except ValueError:
            return
        if isinstance(inner, (list, str)):
            everything_stored(inner, out)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        out.append(json.dumps(value))


def normalized(text: str) -> str:
    digits = "".join(str(unicodedata.decimal(c)) if c.isdecimal() else c for c in text)
    return _NORMALIZE_SEPARATORS.sub("", digits).upper()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(steps())
def test_nothing_sensitive_survives_the_default_policy(step: tuple) -> None:
    data, cards, accounts, tokens = step
    captured = apply_policy(POLICY, "tool_call", data)
    assert not captured.withheld
    stored_bytes = canonicalize(captured.data).decode("utf-8")
    parts: list[str] = [stored_bytes]
    everything_stored(captured.data, parts)
    blob = normalized("\x00".join(parts))
    for pan in cards:
        assert pan not in blob, pan
    for iban in accounts:
        assert iban.upper() not in blob, iban
    for secret in tokens:
        assert secret.upper() not in blob, secret


pieces = st.sampled_from(
    [
        "4111 1111 1111 1111", "4111111111111111", "\u0664\u0661\u0661\u0661111111111111", "5555-5555-5555-4444",
        "4111%201111%201111%201111", "DE89 3704 0044 0532 0130 00", "gb82west12345698765432", "token=abc123",
        "Bearer abcdefgh12345678", "\nX-Api-Key: k9\n", "'password': 'pw1'", '"secret": "s1"', "ann@example.com",
        "123-45-6789", "SSN", "0.4111111111111111", "12", " ", "-", "=", "%", "\\u0034", "{", "}", '"', ":", "x",
    ]
)
joined_texts = st.lists(st.lists(pieces, max_size=8).map("".join), min_size=1, max_size=8)


@settings(max_examples=200, deadline=None)
@given(joined_texts)
def test_scanning_many_texts_at_once_is_the_same_as_one_at_a_time(texts: list[str]) -> None:
    from bitexact.capture.budget import Deadline
    from bitexact.capture.detectors import build
    from bitexact.capture.scan import Scanner

    scanner = Scanner(
        build(
            {
                "pan": {"keep_last4": True}, "iban": {}, "credentials": {},
                "us_ssn": {"require_context": True}, "email": {},
                "custom": [{"name": "odd", "pattern": "[^a-z]{2}x"}],
            }
        )
    )
    deadline = Deadline.unlimited()
    together = scanner.scrub_many(texts, deadline)
    alone = {i: scanner.scrub_text(text, deadline) for i, text in enumerate(texts)}
    assert together == {i: result for i, result in alone.items() if result[1]}


digit_soup = st.text("0123456789 -+%2dDEGBNOxa.\u0661", max_size=80)


@settings(max_examples=300, deadline=None)
@given(st.lists(pieces | digit_soup, max_size=12).map("".join))
def test_the_shared_digit_pass_finds_what_pan_and_iban_find_apart(text: str) -> None:
    from bitexact.capture.budget import Deadline
    from bitexact.capture.detectors import IbanDetector, PanDetector, PanIbanDetector

    deadline = Deadline.unlimited()
    together = PanIbanDetector(PanDetector(), IbanDetector()).find(text, deadline)
    apart = sorted(PanDetector().find(text, deadline) + IbanDetector().find(text, deadline))
    assert together == apart


class _Boom:
    """A detector with a bug: it raises on any text holding "boom"."""

    name = "boom"
    context_free = True

    def find(self, text: str, deadline: Any, *, context: Any = None, prefilter: bool = False) -> list:
        if "boom" in text:
            raise ZeroDivisionError("a detector bug")
        return []




_leaves = st.sampled_from(["4111111111111111", "card 4111 1111 1111 1111", "boom", "ok", "x", 5, None, "[PAN ****1111]"])
_keys = st.sampled_from(["a", "b", "boom", "4111111111111111", "4111 1111 1111 1111", "[PAN ****1111]", "c.d", "e~f"])
_values = st.recursive(_leaves, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_keys, inner, max_size=3), max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(_keys, _values, min_size=1, max_size=5),
    st.sampled_from([0.0, 0.01, 0.05, 0.2, 1.0]),
    st.sampled_from([1, 16, 1 << 20]),
    st.dictionaries(st.sampled_from(["a", "b", "boom", "a.b", "b.a"]), st.sampled_from(["scrub", "hash-only", "scrubbed-upstream"]), max_size=2),
    st.sampled_from(
        [
            [{"kind": "*", "path": "*", "mode": "scrub"}],
            [{"kind": "*", "path": "*.b", "mode": "hash-only"}, {"kind": "*", "path": "*", "mode": "scrub"}],
            [{"kind": "*", "path": "*.a", "mode": "keep"}, {"kind": "*", "path": "*", "mode": "scrub"}],
            [{"kind": "*", "path": "b.a", "mode": "hash-only", "linkable": True}, {"kind": "*", "path": "*", "mode": "scrub"}],
            [{"kind": "*", "path": "a", "mode": "keep"}, {"kind": "*", "path": "*.boom", "mode": "scrub"}],
        ]
    ),
)
def test_whatever_fails_nothing_raw_is_stored_and_the_block_matches_the_data(
    data: dict[str, Any], step: float, batch: int, hints: dict[str, str], rules: list[dict[str, Any]]
) -> None:
    import copy
    import dataclasses

    from bitexact.capture import walk
    from bitexact.capture.detectors import build
    from bitexact.capture.scan import Scanner

    from .support import assert_block_matches_data

    from bitexact.capture import parse_policy

    ruled = parse_policy({"fields": rules})
    policy = dataclasses.replace(ruled, scanner=Scanner((*build({"pan": {"keep_last4": True}}), _Boom())))
    before = copy.deepcopy(data)
    saved = walk.BATCH_CHARS
    walk.BATCH_CHARS = batch
    try:
        captured = apply_policy(policy, "tool_call", data, hints=hints, clock=StepClock(step))
    finally:
        walk.BATCH_CHARS = saved
    assert data == before  # the caller's data is never changed
    if captured.withheld:
        return  # a hint naming KEY.SUBKEY of something not an object
    assert_block_matches_data(captured.data, captured.block)
    if any(rule["mode"] == "keep" for rule in rules):
        return  # a keep rule stores some values as captured, by design
    stored = canonicalize(captured.data).decode()
    assert "4111111111111111" not in stored and "4111 1111 1111 1111" not in stored
