"""Ordinary text rules version 14 scrubbed that 6ae0a3d (rules version 13) left (fp26's A/B over the docs, sources,
session fixtures and written agent text), each left again while the taken cases of test_leak_edges25 still hold.

1. A numbered list in prose read as redis-cli's reply with no command line above it: a name holding a blank
   (``1) "Use an API key"`` took ``2) "Use OAuth"``) and a first string opening ``user `` that is no ACL LIST line
   (``1) "user guide >= v2"`` lost ``= v2`` as an ACL password);
   and a list of members under the command that printed it (``LRANGE``, ``KEYS``, ``SMEMBERS``: ``1) "password"`` /
   ``2) "email"`` names no value);
2. a sentence opening with sentinel.conf's names capitalized (``Sentinel auth-pass must match ...``): the rest of its
   line was taken as sentinel.conf's value;
3. a heading or a checklist line opening with redis's names capitalized or in upper case (``Requirepass Basics``,
   ``REQUIREPASS yes``): its word was taken as the password.
"""

from __future__ import annotations

import pytest

from capture.support import scrubbed

T = "[CREDENTIAL]"


# -- 1. a numbered list in prose with no command line above it ---------------------------------------------------------


@pytest.mark.parametrize("text", [
    'Options the wizard shows:\n  1) "Use an API key"\n  2) "Use OAuth"\n',
    '1) "Sign in with a token"\n2) "Continue as guest"\n',
    'Menu\n1) "user guide >= v2"\n2) "FAQ"\n',
    # a list of members under its command's line: no names over values
    '127.0.0.1:6379> LRANGE fields 0 -1\n1) "password"\n2) "email"\n',
    '127.0.0.1:6379> KEYS *\n1) "session:token"\n2) "user:1"\n3) "api_key"\n4) "cache:home"\n',
    "$ redis-cli --no-raw -h db smembers fields\n1) \"token\"\n2) \"email\"\n3) \"password\"\n4) \"name\"\n",
])
def test_prose_list_is_left(text: str) -> None:
    assert scrubbed(text) == text


@pytest.mark.parametrize(("text", "expected"), [
    # the same replies as redis-cli --no-raw prints them (one-word names, ACL LIST's lines) are still taken
    ('The script printed:\n1) "masterauth"\n2) "MasterPw9"', f'The script printed:\n1) "masterauth"\n2) "{T}"'),
    (f'1) "user bob on #{"ab" * 32} ~* +@all"\n', f'1) "user bob on #{T} ~* +@all"\n'),
    ('1) "user carol off >CarolPw1 ~* +@all"\n', f'1) "user carol off >{T} ~* +@all"\n'),
    # at the prompt the command says what was asked: a field named with a blank is read as before
    ('127.0.0.1:6379> HGETALL h\n1) "api key"\n2) "k-123"\n', f'127.0.0.1:6379> HGETALL h\n1) "api key"\n2) "{T}"\n'),
    # a command no member list comes from, above a reply read as redis-cli prints it
    ('127.0.0.1:6379> HRANDFIELD h 2 WITHVALUES\n1) "password"\n2) "pw5"\n',
     f'127.0.0.1:6379> HRANDFIELD h 2 WITHVALUES\n1) "password"\n2) "{T}"\n'),
    ('$ redis-cli --no-raw < cmds.txt\n1) "requirepass"\n2) "pw6"\n',
     f'$ redis-cli --no-raw < cmds.txt\n1) "requirepass"\n2) "{T}"\n'),
])
def test_replies_are_still_taken(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


# -- 2. a sentence opening with sentinel.conf's names not in lower case ------------------------------------------------


@pytest.mark.parametrize("text", [
    "Sentinel auth-pass must match the master's requirepass.\n",
    "Sentinel Auth-Pass Master is described below.\n",
    "SENTINEL SENTINEL-PASS is what the other sentinels use\n",
])
def test_sentence_after_capitalized_sentinel_names_is_left(text: str) -> None:
    assert scrubbed(text) == text


@pytest.mark.parametrize(("text", "expected"), [
    ("SENTINEL AUTH-PASS mymaster MasterUpperPw\n", f"SENTINEL AUTH-PASS mymaster {T}\n"),
    ("Sentinel Sentinel-Pass SentUpperPw\n", f"Sentinel Sentinel-Pass {T}\n"),
    ('SENTINEL AUTH-PASS mymaster "a pw"\n', f'SENTINEL AUTH-PASS mymaster "{T}"\n'),
    ("SENTINEL AUTH-PASS mymaster pw9 # the master's\n", f"SENTINEL AUTH-PASS mymaster {T} # the master's\n"),
    # lower case, as CONFIG REWRITE writes it: the rest of the line, blanks and all, as before
    ("sentinel auth-pass mymaster my s3cret pw\n", f"sentinel auth-pass mymaster {T}\n"),
])
def test_sentinel_values_are_still_taken(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


# -- 3. a heading or a checklist line opening with redis's names not in lower case -------------------------------------


@pytest.mark.parametrize("text", [
    "Masterauth Setup\n================\nReplicas need the master's password.\n",
    "Requirepass Basics\nSet a password before exposing the port.\n",
    "TLS-KEY-FILE-PASS Explained\n",
    "Sentinel Sentinel-Pass Explained\n",
    "Checklist:\nRequirepass enabled\nMasterauth configured\n",
    "Config review\nREQUIREPASS yes\nMASTERAUTH missing\n",
])
def test_heading_after_cased_redis_names_is_left(text: str) -> None:
    assert scrubbed(text) == text


@pytest.mark.parametrize(("text", "expected"), [
    ("port 6379\nREQUIREPASS S3cretPw\nMASTERAUTH MasterPw9\n", f"port 6379\nREQUIREPASS {T}\nMASTERAUTH {T}\n"),
    ('Requirepass "Basics"\n', f'Requirepass "{T}"\n'),  # quoted: redis's value, whatever it says
    ("127.0.0.1:6379> CONFIG SET REQUIREPASS Hunter\n", f"127.0.0.1:6379> CONFIG SET REQUIREPASS {T}\n"),
    ("requirepass Basics\n", f"requirepass {T}\n"),  # lower case, as at 6ae0a3d
    ("requirepass yes\n", f"requirepass {T}\n"),
])
def test_cased_redis_values_are_still_taken(text: str, expected: str) -> None:
    assert scrubbed(text) == expected
