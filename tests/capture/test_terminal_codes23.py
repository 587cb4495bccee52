"""Terminal escape codes inside a text no longer hide a credential (rules version 13, ansi23).

A tool's output captured with colour or from a pty holds ANSI escape codes between the characters a terminal
shows. At 5851ed2 only three places of the credentials rules read past a code at a line's start; a code between a
name and its value, or inside a name or a value, hid the credential from every rule. Now a text holding ESC is read
as written and as a terminal shows it (``Scanner.findings``, ``bitexact.capture.terminal``), each finding of the
second read placed back over the characters it covers and the codes between them; the codes before and after it
are kept. Each finding below was kept whole at 5851ed2; each look-alike is left byte for byte.
"""

from __future__ import annotations

import json

import pytest
from capture.support import scrubbed
from hypothesis import given, settings
from hypothesis import strategies as st

from bitexact.capture import apply_policy, load_policy
from bitexact.capture.terminal import mapped, shown

T = "[CREDENTIAL]"
TOKEN = "ghp_R2x9aQ7LmN3pK8vT1wY6zB4cD0eF5gH2jS9u"
# GNU grep --color=always's match: ESC[01;31m ESC[K before it, ESC[m ESC[K after it.
HIT, END = "\x1b[01;31m\x1b[K", "\x1b[m\x1b[K"


@pytest.mark.parametrize(("text", "expected"), [
    # a bold label, the value after it
    ("\x1b[1mpassword\x1b[0m: hunter2x", f"\x1b[1mpassword\x1b[0m: {T}"),
    # the value coloured too: the codes on either side of it kept
    ("\x1b[1mpassword\x1b[0m: \x1b[33mhunter2x\x1b[0m\n", f"\x1b[1mpassword\x1b[0m: \x1b[33m{T}\x1b[0m\n"),
    # heroku config: each key in green (chalk closes a colour with ESC[39m), padded after its colon
    ("=== app Config Vars\n\x1b[32mREDIS_PASSWORD\x1b[39m:  p4ssw0rd9\n\x1b[32mREGION\x1b[39m:          eu\n",
     f"=== app Config Vars\n\x1b[32mREDIS_PASSWORD\x1b[39m:  {T}\n\x1b[32mREGION\x1b[39m:          eu\n"),
    # a colour between the name and its "="
    ("export DB_PASSWORD\x1b[0m=hunter2x", f"export DB_PASSWORD\x1b[0m={T}"),
    # grep --color's match inside the name: the codes stay, the value is taken
    (f"DB_{HIT}PASS{END}WORD=hunter2x\n", f"DB_{HIT}PASS{END}WORD={T}\n"),
    # grep's match inside a token: the token taken whole with the codes inside it, the codes before it kept
    (f"TOKEN_FILE {HIT}ghp_{END}{TOKEN[4:]}\n", f"TOKEN_FILE {HIT}{T}\n"),
    # a card number whose groups a terminal shows as one run
    ("card 4111\x1b[1m1111\x1b[0m11111111 ok", "card [PAN ****1111] ok"),
    # a hyperlink (OSC 8, ls --hyperlink) around the name
    ("\x1b]8;;file:///app/.env\x1b\\password\x1b]8;;\x1b\\: hunter2x",
     f"\x1b]8;;file:///app/.env\x1b\\password\x1b]8;;\x1b\\: {T}"),
    # a CSV header in bold on a text's first line, after a window title (kept at 5851ed2 as no table)
    ("\x1b]0;title\x07\x1b[1mname,password\x1b[0m\r\nbob,hunter2x\r\n",
     f"\x1b]0;title\x07\x1b[1mname,password\x1b[0m\r\nbob,{T}\r\n"),
    # a charset designation (ESC ( B, tput sgr0's) and a cursor save (ESC 7) between a name and its value
    ("api_key\x1b(B\x1b[m=\x1b7sk-live-0123456789abcdef", f"api_key\x1b(B\x1b[m=\x1b7{T}"),
])
def test_codes_hide_no_credential(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize("text", [
    "\x1b[32mINFO\x1b[0m Server started on port 8080\n",
    "\x1b[0m\x1b[01;34mpasswords\x1b[0m  \x1b[01;32mrotate_token.sh\x1b[0m\n",  # ls --color: file names
    "\x1b[1mdiff --git a/password.py b/password.py\x1b[m\n\x1b[32m+def reset_password(user):\x1b[m\n",
    "tests/test_auth.py::test_password_reset \x1b[32mPASSED\x1b[0m\x1b[32m [ 50%]\x1b[0m\n",
    "\x1b[?2004h$ \x1b[?2004l\r\x1b]0;user@host: ~\x07\x1b[01;32muser@host\x1b[00m:\x1b[01;34m~\x1b[00m$ ",
    "\x1b[33mwarning\x1b[0m: your \x1b[1mpassword\x1b[0m expires in 3 days\n",
    # C1 controls as one character are no codes to a UTF-8 terminal: left as written (documented)
    "\x9b1mpassword\x9b0m: see the vault\n",
])
def test_codes_around_ordinary_text_are_left(text: str) -> None:
    assert scrubbed(text) == text


def test_a_window_title_is_still_read_as_written() -> None:
    """What only the codes hold (bash sets the window title to the command it runs) is no text on the screen; it is
    still read as written, as at 5851ed2: the screen's read adds findings, it takes none away."""
    assert scrubbed("\x1b]0;mysql -uroot -pS3cr3tPw app\x07$ ls\n") == f"\x1b]0;mysql -uroot -p{T} app\x07$ ls\n"
    # and beside what the screen's read finds
    assert (scrubbed("\x1b]0;mysql -uroot -pS3cr3tPw app\x07\x1b[1mpassword\x1b[0m: hunter2x\n")
            == f"\x1b]0;mysql -uroot -p{T} app\x07\x1b[1mpassword\x1b[0m: {T}\n")


def test_coloured_output_among_a_steps_fields() -> None:
    """A step's many strings are scanned joined; one holding ESC is read alone, as a terminal shows it too."""
    data = {"command": "heroku config -a app", "exit": 0, "stderr": "",
            "stdout": "\x1b[32mREDIS_PASSWORD\x1b[39m: p4ssw0rd9\n", "cwd": "/srv/app",
            "env": ["TERM=xterm-256color", "CLICOLOR_FORCE=1"]}
    captured = apply_policy(load_policy(env={}), "tool_call", data)
    assert captured.data == {**data, "stdout": f"\x1b[32mREDIS_PASSWORD\x1b[39m: {T}\n"}


def test_coloured_lines_read_joined() -> None:
    """A list of coloured lines: the lines as a terminal shows them are read joined (one pass for them all), and
    each line holding a finding there is scanned alone; the others are left byte for byte."""
    lines = [f"\x1b[32m{i:04d}\x1b[0m INFO request served in {i} ms" if i % 3 else f"{i:04d} plain"
             for i in range(300)]  # every third line without codes: a coloured line's place in the step is its own
    lines[7] = "\x1b[1mpassword\x1b[0m: hunter2x"
    lines[151] = f"DB_{HIT}PASS{END}WORD=hunter2x"
    lines[299] = "card 4111\x1b[1m1111\x1b[0m11111111"
    captured = apply_policy(load_policy(env={}), "tool_call", {"lines": lines, "note": "\x1b[1mok\x1b[0m"})
    expected = [*lines]
    expected[7] = f"\x1b[1mpassword\x1b[0m: {T}"
    expected[151] = f"DB_{HIT}PASS{END}WORD={T}"
    expected[299] = "card [PAN ****1111]"
    assert captured.data == {"lines": expected, "note": "\x1b[1mok\x1b[0m"}


def test_coloured_output_in_a_json_document_keeps_its_escapes() -> None:
    """A JSON document in a string writes ESC as ``\\u001b``: its string is read decoded and written back escaped."""
    document = json.dumps({"output": "\x1b[1mpassword\x1b[0m: hunter2x", "code": 0})
    captured = apply_policy(load_policy(env={}), "tool_call", {"result": document})
    assert captured.data["result"] == json.dumps({"output": f"\x1b[1mpassword\x1b[0m: {T}", "code": 0})


def test_a_span_takes_the_codes_between_its_characters_not_those_beside_it() -> None:
    written = "a\x1b[1mbc\x1b[0m\x1b[Kd\x1b]0;t\x07"
    screen = shown(written)
    assert screen == "abcd"
    back = mapped(written, screen)
    assert back.span(1, 3) == (written.index("b"), written.index("c") + 1)  # "bc": the code before b is not in it
    assert back.span(1, 4) == (written.index("b"), written.index("d") + 1)  # "bcd": the two codes inside it are
    assert back.span(0, 4) == (0, written.index("d") + 1)  # the window title after d is not
    assert back.span(4, 4) == (len(written), len(written))


@pytest.mark.parametrize(("written", "screen"), [
    ("\x1b[" * 4, ""),  # an unfinished CSI: its introducer alone
    ("\x1b]0;no end\nx", "0;no end\nx"),  # an OSC with no terminator before the line's end: its introducer alone
    ("a\x1b\x1b[1mb\x1b", "ab"),  # ESC before ESC, or ending the text, begins no sequence: shown as nothing
    ("\x1b\x1b[0m[", "["),  # what taking a code out joins is no new code
    ("\x1bPq#0;1;1\x1b\\x", "x"),  # DCS (sixel) up to ST
    ("\x1b_Gf=100;AAAA\x1b\\x", "x"),  # APC (kitty's graphics)
    ("a\rb\bc\x9b1md", "a\rb\bc\x9b1md"),  # CR, BS and C1 CSI left
])
def test_what_is_taken_out(written: str, screen: str) -> None:
    assert shown(written) == screen


_PIECES = st.sampled_from(["\x1b", "[", "]", "1", ";", "m", "K", "?", "(", "B", "P", "\\", "\x07", "\n", "a", "=",
                           "password", ": ", "4111", "\x1b[0m", "\x1b]0;t\x07", "\x1b[01;31m\x1b[K"])


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, max_size=40).map("".join))
def test_every_character_shown_is_placed_back_on_itself(written: str) -> None:
    """Each character of the text as shown stands, placed back, on the same character of the text as written, in
    order; a span from the first to the last shown character covers no more than they do."""
    screen = shown(written)
    back = mapped(written, screen)
    places = [back.span(i, i + 1)[0] for i in range(len(screen))]
    assert [written[at] for at in places] == list(screen)
    assert places == sorted(set(places))
    for i, at in enumerate(places):
        assert back.span(i, i + 1) == (at, at + 1)
    if screen:
        assert back.span(0, len(screen)) == (places[0], places[-1] + 1)


@settings(max_examples=150, deadline=None)
@given(st.lists(_PIECES, max_size=30).map("".join))
def test_a_scrub_with_codes_is_final(written: str) -> None:
    """Whatever the codes, a scrub finds nothing new in its own output (``scrubbed`` asserts it), and the text as
    shown holds no ESC: showing it again changes nothing."""
    out = scrubbed(written)
    assert "\x1b" not in shown(written) and "\x1b" not in shown(out)
