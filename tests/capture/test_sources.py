"""What a source may send beside its data, and what wrapped clients record of URLs and headers."""

from __future__ import annotations

import pytest

from bitexact.capture import HintError, check_source_fields, redact_headers, redact_query


def test_a_source_may_not_set_the_collectors_capture_field() -> None:
    with pytest.raises(HintError) as caught:
        check_source_fields({"kind": "tool_call", "data": {}, "capture": {"fields": {}}})
    assert caught.value.field == "capture"


def test_a_sources_custody_is_parsed() -> None:
    hints = check_source_fields({"kind": "tool_call", "custody": {"result": "hash-only", "args": "scrubbed-upstream:presidio"}})
    assert [(h.path, h.mode, h.by) for h in hints] == [("result", "hash-only", None), ("args", "scrubbed-upstream", "presidio")]


@pytest.mark.parametrize(
    ("custody", "field"),
    [
        ("hash-only", "custody"),
        ({"result": 1}, "custody.result"),
        ({"*": "scrub"}, "custody[0]"),
        ({"a.b.c": "scrub"}, "custody.a.b.c"),
        ({"a~2": "scrub"}, "custody.a~2"),
        ({"ok": "scrub", "": "scrub"}, "custody[1]"),
    ],
)
def test_custody_that_is_not_one_is_refused_naming_the_field(custody: object, field: str) -> None:
    with pytest.raises(HintError) as caught:
        check_source_fields({"custody": custody})
    assert caught.value.field == field


def test_headers_named_in_the_credential_table_are_redacted() -> None:
    assert redact_headers({"Authorization": "Bearer x", "X-API-KEY": "k", "Accept": "*/*"}) == {
        "Authorization": "[redacted]",
        "X-API-KEY": "[redacted]",
        "Accept": "*/*",
    }
    assert redact_headers([("Subscription-Key", "s"), ("Host", "h")]) == [["Subscription-Key", "[redacted]"], ["Host", "h"]]


def test_http_credential_headers_are_redacted_and_url_headers_follow_the_url_rule() -> None:
    assert redact_headers({"COOKIE": "s=1", "Set-Cookie": "s=2", "proxy-authorization": "Basic x"}) == {
        "COOKIE": "[redacted]", "Set-Cookie": "[redacted]", "proxy-authorization": "[redacted]"}
    assert redact_headers([
        ("Location", "https://u:p@h/next?sig=s&page=2#top"),
        ("Content-Location", "/doc?Key=k"),
        ("Referer", b"https://h/?token=t&q=a%20b"),
        ("Link", "</x?token=t>; rel=next"),  # each <URL> of a Link header by the URL rule too (session 19)
    ]) == [
        ["Location", "https://%5Bredacted%5D@h/next?sig=%5Bredacted%5D&page=2#top"],
        ["Content-Location", "/doc?Key=%5Bredacted%5D"],
        ["Referer", b"https://h/?token=%5Bredacted%5D&q=a%20b"],
        ["Link", "</x?token=%5Bredacted%5D>; rel=next"],
    ]


def test_a_query_alone_is_redacted_by_the_same_rule() -> None:
    assert redact_query("?q=claims&API_KEY=s3cr3t") == "q=claims&API_KEY=%5Bredacted%5D"
    assert redact_query("") == ""


def test_a_hint_that_is_not_one_is_never_quoted() -> None:
    # The agent's free text could be the very value it meant to protect.
    pan = "4111111111111111"
    for custody in ({"args": pan}, {"args": "scrubbed-upstream:-" + pan}, {pan: "hash-only", "x": "keep"}, {pan: pan}):
        with pytest.raises(HintError) as caught:
            check_source_fields({"custody": custody})
        assert pan not in str(caught.value) and pan not in caught.value.field


def test_the_gap_for_a_hint_that_is_not_one_holds_no_agent_text() -> None:
    from bitexact.capture import apply_policy, load_policy

    pan = "4111111111111111"
    captured = apply_policy(load_policy(), "tool_call", {"args": [pan]}, hints={"args": pan})
    assert captured.withheld and pan not in repr(captured.gaps)


def test_a_tool_named_in_a_claim_is_read_by_the_detectors_too() -> None:
    from bitexact.capture import apply_policy, load_policy

    pan = "4111111111111111"
    captured = apply_policy(load_policy(), "tool_call", {"args": ["x"]}, hints={"args": "scrubbed-upstream:" + pan})
    assert captured.block["fields"]["args"] == {"mode": "scrubbed-upstream", "by": "[PAN ****1111]"}
