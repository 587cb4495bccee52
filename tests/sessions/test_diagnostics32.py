"""Session-log diagnostics: `[1,2]` on line 3 was reported as two "line 3" diagnostics, and a line holding
a JSON string was counted among the non-JSON text lines."""

from __future__ import annotations

import json

from bitexact.sessions import parse

_INIT = json.dumps({"type": "system", "subtype": "init", "session_id": "s"})
_RESULT = json.dumps({"type": "result", "num_turns": 1})


def test_the_non_object_entries_of_one_line_are_one_diagnostic() -> None:
    text = "\n".join([_INIT, "[1,2]", "[3]", _RESULT]) + "\n"
    result = parse(text, "claude")
    assert [event["type"] for event in result.events] == ["session.init", "session.result"]
    assert result.diagnostics == ["line 2: 2 non-object JSON entries skipped", "line 3: non-object JSON entry skipped"]


def test_a_json_string_line_is_a_non_object_entry_not_text() -> None:
    text = "\n".join([_INIT, '"just a string"', "plain prose", "42", _RESULT]) + "\n"
    result = parse(text, "claude")
    assert result.diagnostics == [
        "line 2: non-object JSON entry skipped",
        "line 4: non-object JSON entry skipped",
        "1 non-JSON text line(s) skipped (first at line 3)",
    ]


def test_text_that_only_looks_like_a_string_stays_text() -> None:
    text = "\n".join([_INIT, '"a" and "b"', '"unterminated', _RESULT]) + "\n"
    assert parse(text, "claude").diagnostics == ["2 non-JSON text line(s) skipped (first at line 2)"]


def test_a_whole_array_still_names_each_element() -> None:
    assert parse(f"[1, 2, {_INIT}]", "claude").diagnostics == ["element 0: non-object JSON entry skipped",
                                                              "element 1: non-object JSON entry skipped"]
