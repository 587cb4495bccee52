"""Credentials in text, US SSNs, e-mail addresses and custom patterns."""

from __future__ import annotations

import base64

import pytest

from bitexact.capture.budget import Deadline
from bitexact.capture.detectors import CredentialsDetector, CustomDetector, EmailDetector, SsnDetector
from bitexact.capture.detectors.custom import PatternRefused, validate_pattern


def values(detector: object, text: str, **kwargs: object) -> list[str]:
    return [text[f.start : f.end] for f in detector.find(text, Deadline.unlimited(), **kwargs)]  # type: ignore[attr-defined]


# -- credentials -------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("retry with token=abc123 next", "abc123"),
        ("curl -H x --password=hunter2", "hunter2"),
        ("db.password = s3cr3t", "s3cr3t"),
        ('config api_key="quoted value"', "quoted value"),
        ("GET /v1?api%5Fkey=zz&q=1", "zz"),
        ("{'secret': 'py-repr', 'n': 1}", "py-repr"),
        ('{"Signature": "abc"} trailing', "abc"),
        ("headers:\nX-Api-Key: k-123 456\nAccept: */*", "k-123 456"),
        ("Authorization: Bearer eyJ0eXAi.eyJzdWIi.c2ln", "Bearer eyJ0eXAi.eyJzdWIi.c2ln"),
        ("see https://ann:hunter2@example.com/x", "ann:hunter2"),
    ],
)
def test_credential_forms(text: str, secret: str) -> None:
    found = values(CredentialsDetector(), text)
    assert secret in found


def test_bearer_and_basic_need_something_that_looks_like_a_token() -> None:
    basic = base64.b64encode(b"ann:hunter2").decode()
    assert values(CredentialsDetector(), f"Basic {basic}") == [basic]
    assert values(CredentialsDetector(), "a Basic idea, a bearer of news") == []
    assert values(CredentialsDetector(), "BEARER abcdefgh1234") == ["abcdefgh1234"]


def test_names_are_compared_ignoring_ascii_case_only() -> None:
    assert values(CredentialsDetector(), "TOKEN=x1") == ["x1"]
    # A Kelvin sign is not a K: "\u212aey" names another parameter.
    assert values(CredentialsDetector(), "\u212aey=x1") == []


def test_a_name_is_matched_whole() -> None:
    """A credential word inside a longer word names nothing; as the last word of a compound name
    (x_token) it does (docs/capture.md, compound names)."""
    assert values(CredentialsDetector(), "monkey=banana tokens=5 tokenizer=bpe sort_key=id") == []
    assert values(CredentialsDetector(), "x_token=1") == ["1"]


def test_a_value_that_is_already_a_token_is_left_alone() -> None:
    text = "token=[CREDENTIAL] key=%5Bredacted%5D password=[redacted]"
    assert values(CredentialsDetector(), text) == []


# -- US SSN ------------------------------------------------------------------


def test_ssn_requires_context_by_default() -> None:
    assert values(SsnDetector(), "call 123-45-6789") == []
    assert values(SsnDetector(), "SSN: 123-45-6789") == ["123-45-6789"]
    assert values(SsnDetector(), "123456789", context="ssn") == ["123456789"]
    assert values(SsnDetector(), "social security number 123 45 6789") == ["123 45 6789"]


def test_ssn_without_context_finds_the_separated_forms() -> None:
    detector = SsnDetector(require_context=False)
    assert values(detector, "call 123-45-6789") == ["123-45-6789"]
    assert values(detector, "id 123456789") == []  # nine bare digits always need a cue


def test_ssn_numbers_the_ssa_never_issues() -> None:
    detector = SsnDetector(require_context=False)
    for text in ("000-12-3456", "666-12-3456", "912-34-5678", "123-00-4567", "123-45-0000"):
        assert values(detector, text) == [], text
    assert values(detector, "1123-45-6789") == []  # part of a longer number


# -- e-mail ------------------------------------------------------------------


def test_email_addresses() -> None:
    assert values(EmailDetector(), "write to ann.lee+x@mail.example.co.uk today") == ["ann.lee+x@mail.example.co.uk"]
    assert values(EmailDetector(), "@handle and a@b") == []


# -- custom ------------------------------------------------------------------


@pytest.mark.parametrize(
    "pattern",
    [r"ACCT-\d{8}", r"\d{4}-?\d{4}", r"[A-Z]{2}\d{6}", r"\bINV\.\d{3,6}\b", r"user@[a-z]{1,64}", r"[^\s]{3}"],
)
def test_custom_patterns_accepted(pattern: str) -> None:
    assert validate_pattern(pattern) == pattern


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        (r"\d{1,8}-\d{1,8}", "at most one quantifier may vary"),
        (r"a.b", "a bare . is not a literal"),
        (r"(ab)", "groups and alternation"),
        (r"a|b", "groups and alternation"),
        (r"\d+", "unbounded repetition"),
        (r"\d*", "unbounded repetition"),
        (r"\d{2,}", "unbounded repetition"),
        (r"x{65}", "at most 64"),
        (r"\d{3}?", "lazy or possessive"),
        (r"^ACCT", "anchors"),
        (r"\n", "not an allowed escape"),
        (r"a=b", "not a literal"),
        (r"\d?", "empty text"),
        (r"[a-", "not closed"),
        (r"[z-a]", "not a range"),
    ],
)
def test_custom_patterns_refused_with_the_reason(pattern: str, reason: str) -> None:
    with pytest.raises(PatternRefused) as caught:
        validate_pattern(pattern)
    assert reason in str(caught.value)


def test_custom_detector_replaces_with_its_name() -> None:
    detector = CustomDetector("account", r"ACCT-\d{8}")
    assert [f.token for f in detector.find("see ACCT-12345678 and ACCT-1", Deadline.unlimited())] == ["[ACCOUNT]"]
