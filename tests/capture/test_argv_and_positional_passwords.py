"""Passwords the default policy let through (rules version 3), scrubbed under version 4: a credential-named long
flag and its value as two items of an argv list (``["myapp", "--password", "X"]``), a command written as a path
in a line of text (``/usr/bin/mysql -pX``), and passwords given as positional words (``htpasswd -b FILE USER
PASS``, ``nmcli ... password X``, ``nmcli connection modify NAME wifi-sec.psk X``).

Each form is scrubbed (only the secret replaced), scrubbed again with nothing more declared, and set beside the
near-misses that must be left. An argv list is tried as data and as a JSON document held in a string.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from capture.support import recorded_in_store, scrubbed

from bitexact.capture import apply_policy, load_policy
from bitexact.capture.budget import Deadline
from bitexact.capture.clean import clean
from bitexact.capture.policy import POLICY_VERSION

V5_DIGEST = "73290d24da81c9dd3a19e8797d6e31f03bf10d12b56e0907f5c4763bd827bcab"
"""The shipped default policy's digest under rules version 5 (docs/capture.md, "Digest"); version 6 is pinned in
test_names_and_connection_strings.py, version 7 in test_leak_edges15.py."""
T = "[CREDENTIAL]"


def _as_data_and_document(args: list[Any]) -> tuple[list[Any], list[Any], int]:
    """``args`` stored as data and as a JSON document in a string (its pretty-printed form, whose text shows no
    flag before its value on one line); the credentials found in the list; a second pass declares nothing."""
    policy = load_policy(env={})
    stored = apply_policy(policy, "tool_call", {"args": args, "doc": json.dumps({"argv": args}, indent=2)})
    assert apply_policy(policy, "tool_call", stored.data).block is None, "a second pass finds nothing new"
    found = stored.block["fields"]["args"]["found"].get("credentials", 0) if stored.block else 0
    return stored.data["args"], json.loads(stored.data["doc"])["argv"], found


# -- 1. a credential-named long flag and its value as two items ---------------------------------------------------


@pytest.mark.parametrize(("args", "expected"), [
    (["myapp", "--password", "X1"], ["myapp", "--password", T]),
    (["deploy", "--api-key", "X2", "--region", "eu"], ["deploy", "--api-key", T, "--region", "eu"]),
    (["tool", "--client-secret", "X3"], ["tool", "--client-secret", T]),
    (["t", "--token", "X4"], ["t", "--token", T]),
    (["t", "--secret", "X5"], ["t", "--secret", T]),
    (["t", "--access-token", "X6"], ["t", "--access-token", T]),
    (["t", "--auth-token", "X7"], ["t", "--auth-token", T]),
    (["t", "--db-password", "X8"], ["t", "--db-password", T]),
    (["t", "--DB_PASSWORD", "X9"], ["t", "--DB_PASSWORD", T]),
    (["t", "--db.password", "pw 10"], ["t", "--db.password", T]),
    (["t", "--password=X11"], ["t", f"--password={T}"]),  # one item: a text's NAME=VALUE
    # Far past the first items a command is looked for in, and after a command of the table too.
    (["deploy", "-v", "a", "b", "c", "d", "e", "f", "g", "--api-key", "X12"],
     ["deploy", "-v", "a", "b", "c", "d", "e", "f", "g", "--api-key", T]),
    (["mysql", "--password", "X13", "shop"], ["mysql", "--password", T, "shop"]),
    (["t", 1, None, "--token", "X14", True], ["t", 1, None, "--token", T, True]),
    # The value's word is scanned for the rest as any text: nothing of it is left to find.
    (["t", "--token", "4111111111111111"], ["t", "--token", T]),
], ids=["password", "api-key", "client-secret", "token", "secret", "access-token", "auth-token", "db-password",
        "upper-compound", "dotted", "equals", "past-the-head", "known-command", "other-scalars", "pan-value"])
def test_a_credential_flags_value_is_the_next_item(args: list[Any], expected: list[Any]) -> None:
    as_data, in_document, found = _as_data_and_document(args)
    assert as_data == expected
    assert in_document == expected
    assert found == 1


@pytest.mark.parametrize("args", [
    ["t", "--password", "--verbose"],  # the next item is a flag
    ["t", "--password", "-"],  # "-": read it from stdin
    ["t", "--password"],  # no next item
    ["t", "--password", ""],
    ["t", "--password", 1234],  # not a string
    ["t", "--password", None],
    ["t", "--password-file", "/run/secrets/x"],  # names where the password is
    ["t", "--no-password"],
    ["t", "--token-ttl", "3600"],
    ["t", "--show-password"],
    ["t", "--key", "2"],  # the bare word key: a sort column, an S3 object's name
    ["t", "--monkey", "x"],  # no word boundary before "key"
    ["t", "--pass word", "x"],  # no flag's name: a space in it
    ["t", "-password", "x"],  # one dash: no long flag
    ["t", "password", "x"],
    ["t", "--password", T],  # already a token
], ids=["next-flag", "stdin", "last", "empty", "number", "null", "password-file", "no-password", "token-ttl",
        "show-password", "key", "monkey", "space", "one-dash", "no-dash", "token"])
def test_a_flag_item_without_a_secret_after_it_is_left(args: list[Any]) -> None:
    as_data, in_document, found = _as_data_and_document(args)
    assert (as_data, in_document, found) == (args, args, 0)


@pytest.mark.parametrize(("flag", "value"), [
    ("--password", "X"), ("--password-file", "/run/x"), ("--no-password", "y"), ("--token-ttl", "3600"),
    ("--show-password", "y"), ("--key", "2"), ("--api-key", "X"), ("--password", "-"),
])
def test_an_argv_item_is_read_as_the_same_flag_on_a_line_is(flag: str, value: str) -> None:
    """One notion of a credential flag: whatever the text rule does with ``FLAG VALUE`` on a line, the list does
    with ``[FLAG, VALUE]`` (``--no-password y`` is a switch and ``y`` is left in both; ``--show-password y`` is
    read as a value after a credential name in both)."""
    on_a_line = scrubbed(f"t {flag} {value}")
    as_data, _, _ = _as_data_and_document(["t", flag, value])
    assert (on_a_line == f"t {flag} {T}") == (as_data == ["t", flag, T])
    assert on_a_line in (f"t {flag} {value}", f"t {flag} {T}")


@pytest.mark.parametrize(("text", "expected"), [
    ('exec: ["myapp", "--password", "X1"]', f'exec: ["myapp", "--password", "{T}"]'),
    ("Command '['deploy', '--api-key', 'X2', '--region', 'eu']' failed",
     f"Command '['deploy', '--api-key', '{T}', '--region', 'eu']' failed"),
    ('exec: ["myapp", "--password", "--verbose"]', 'exec: ["myapp", "--password", "--verbose"]'),
    ('exec: ["myapp", "--password", "-"]', 'exec: ["myapp", "--password", "-"]'),
    ('exec: ["myapp", "--password-file", "/run/x"]', 'exec: ["myapp", "--password-file", "/run/x"]'),
], ids=["json-list", "python-repr", "next-flag", "stdin", "password-file"])
def test_an_argv_list_written_in_a_line_of_text_is_read_so_too(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize(("args", "expected"), [
    (["mysql", "-pX1", {"password": "y1", "n": "4111111111111111"}],
     ["mysql", f"-p{T}", {"password": T, "n": "[PAN ****1111]"}]),
    (["sshpass", "-p", "X1", "ssh", "h", ["x", "4111111111111111"]], ["sshpass", "-p", T, "ssh", "h", ["x", "[PAN ****1111]"]]),
    (["myapp", "--password", "X1", {"a": 1}], ["myapp", "--password", T, {"a": 1}]),
    ([{"cmd": "x"}, "myapp", "--api-key", "X1"], [{"cmd": "x"}, "myapp", "--api-key", T]),
], ids=["mysql-object", "sshpass-list", "flag-object", "object-first"])
def test_an_argv_list_holding_an_object_or_a_list_is_read_and_its_object_walked(args: list[Any],
                                                                               expected: list[Any]) -> None:
    """The review found it: a list holding an object was read as argv and its object never walked (a password and a
    card number stored raw), and then, mended, such a list was not read as argv at all (``-pX1`` stored). Both now:
    its scalars are the command's words (an object is a word that is no flag and no value), its objects walked."""
    policy = load_policy(env={})
    first = apply_policy(policy, "tool_call", {"args": args})
    assert first.data["args"] == expected
    again = apply_policy(policy, "tool_call", first.data)
    assert again.data == first.data and again.block is None, "a second pass finds nothing new"


@pytest.mark.parametrize(("data", "is_clean"), [
    ({"args": ["myapp", "--password", "X1"]}, False),
    ({"args": ["myapp", "--password", "--verbose", "--token-ttl", "3600"]}, True),
    ({"args": [1.5, 2.5, "--verbose"]}, True),
], ids=["flag-value", "near-misses", "mixed-kinds"])
def test_the_clean_shortcut_leaves_a_flags_value_to_the_walk(data: dict[str, Any], is_clean: bool) -> None:
    assert clean(data, load_policy(env={}).scanner, Deadline.unlimited()) is is_clean


def test_a_flags_value_naming_a_command_is_not_taken_for_the_command() -> None:
    """The review's fuzzer found it: the first pass took ``nmcli`` (a flag's value) for the list's command, found no
    password for it and left sshpass's; the second pass, ``nmcli`` replaced, found it."""
    args, in_document, found = _as_data_and_document(["deploy", "--token", "nmcli", "sshpass", "-p", "S1"])
    assert args == in_document == ["deploy", "--token", T, "sshpass", "-p", T] and found == 2


# -- 2. a command written as a path ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("/usr/bin/mysql -uroot -pX1 shop", f"/usr/bin/mysql -uroot -p{T} shop"),
    ("./bin/sshpass -p x2 ssh h", f"./bin/sshpass -p {T} ssh h"),
    ("../tools/sshpass -p x2 ssh h", f"../tools/sshpass -p {T} ssh h"),
    ("~/bin/redis-cli -a x3 ping", f"~/bin/redis-cli -a {T} ping"),
    ("$ /opt/homebrew/bin/curl -u bob:x4 https://h", f"$ /opt/homebrew/bin/curl -u bob:{T} https://h"),
    ("/usr/local/bin/docker login -u bob -p x5 r", f"/usr/local/bin/docker login -u bob -p {T} r"),
    ('"cmd": "/usr/bin/mysql -pX6"', f'"cmd": "/usr/bin/mysql -p{T}"'),
    ("CMD=/usr/bin/mysql -pX7", f"CMD=/usr/bin/mysql -p{T}"),
    ("/usr/bin/mysql -pX8\n/usr/bin/zip -P x9 o.zip d", f"/usr/bin/mysql -p{T}\n/usr/bin/zip -P {T} o.zip d"),
], ids=["usr-bin", "dot-slash", "dot-dot", "tilde", "prompt", "two-words", "json-text", "assigned", "two-lines"])
def test_a_command_written_as_a_path_takes_its_password_flag(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize("text", [
    "https://example.test/mysql -pX",  # a URL's path, not a command
    "x/usr/bin/mysql -pX",  # the path does not start its word
    "/usr//bin/mysql -pX",  # an empty directory name
    "/usr/bin/mysql.sock -pX",  # a longer name
    "/usr/bin/my-mysql -pX",
    "/usr/bin/mysql -p shop",  # -p then a word: asks for the password
    "/var/lib/mkdir -p out",
], ids=["url", "inside-a-word", "empty-dir", "longer-name", "prefixed-name", "asks", "other-command"])
def test_a_path_that_is_no_command_of_the_table_is_left(text: str) -> None:
    assert scrubbed(text) == text


# -- 3. positional passwords ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("htpasswd -b /etc/nginx/.htpasswd bob X1", f"htpasswd -b /etc/nginx/.htpasswd bob {T}"),
    ("htpasswd -bc .htpasswd bob X2", f"htpasswd -bc .htpasswd bob {T}"),
    ("htpasswd -bB .htpasswd bob X3", f"htpasswd -bB .htpasswd bob {T}"),
    ("htpasswd -nb bob X4", f"htpasswd -nb bob {T}"),
    ("htpasswd -nbB bob X5", f"htpasswd -nbB bob {T}"),
    ("htpasswd -c -b f bob X6", f"htpasswd -c -b f bob {T}"),
    ("htpasswd -bBC 12 f bob X7", f"htpasswd -bBC 12 f bob {T}"),
    ("htpasswd -bC12 f bob X8", f"htpasswd -bC12 f bob {T}"),
    ("htpasswd -b f bob 'p w 9' && nginx -s reload", f"htpasswd -b f bob '{T}' && nginx -s reload"),
    ("sudo /usr/bin/htpasswd -b f bob X10", f"sudo /usr/bin/htpasswd -b f bob {T}"),
    ("['htpasswd', '-nb', 'bob', 'X11']", f"['htpasswd', '-nb', 'bob', '{T}']"),
    ("nmcli dev wifi connect Home password X12", f"nmcli dev wifi connect Home password {T}"),
    ("nmcli device wifi connect 'My Net' password 'p w 13' ifname wlan0",
     f"nmcli device wifi connect 'My Net' password '{T}' ifname wlan0"),
    ("nmcli -w 10 device wifi connect Home ifname wlan0 password X14",
     f"nmcli -w 10 device wifi connect Home ifname wlan0 password {T}"),
    ("nmcli dev wifi connect password password X15", f"nmcli dev wifi connect password password {T}"),  # an SSID
    ("nmcli dev wifi hotspot ssid S password X16", f"nmcli dev wifi hotspot ssid S password {T}"),
    ("nmcli connection modify Home wifi-sec.psk X17", f"nmcli connection modify Home wifi-sec.psk {T}"),
    ("nmcli con mod Work 802-1x.password X18 802-1x.identity bob",
     f"nmcli con mod Work 802-1x.password {T} 802-1x.identity bob"),
    ("nmcli con mod Home +wifi-sec.psk X19", f"nmcli con mod Home +wifi-sec.psk {T}"),
    ("nmcli c add type wifi ssid S wifi-sec.key-mgmt wpa-psk 802-11-wireless-security.psk X20",
     f"nmcli c add type wifi ssid S wifi-sec.key-mgmt wpa-psk 802-11-wireless-security.psk {T}"),
    ("nmcli con mod W wifi-sec.wep-key0 X21 gsm.pin 1234", f"nmcli con mod W wifi-sec.wep-key0 {T} gsm.pin {T}"),
], ids=["b", "bc", "bB", "nb", "nbB", "separate", "cost", "cost-attached", "quoted", "path", "repr-list",
        "wifi-connect", "quoted-ssid", "after-options", "ssid-password", "hotspot", "psk", "8021x", "plus",
        "long-setting", "wep-pin"])
def test_a_positional_password_is_scrubbed(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize("text", [
    "htpasswd -c .htpasswd bob",  # prompts for the password
    "htpasswd -D .htpasswd bob",
    "htpasswd -i .htpasswd bob",
    "htpasswd -b .htpasswd bob",  # the password missing
    "htpasswd -nb bob",
    "htpasswd -b f bob; echo done",  # the next command's words are not htpasswd's
    "htpasswd -b f bob\nls",
    "myhtpasswd -b f bob x",
    "see htpasswd(1) and the -b flag",
    "nmcli dev wifi connect Home",
    "nmcli dev wifi connect Home password",
    "nmcli con mod Home wifi-sec.psk-flags 0",
    "nmcli con mod Home wifi-sec.key-mgmt wpa-psk",
    "nmcli con show Home --show-secrets",
    "nmcli dev wifi connect Home && echo password x",
    "the password is set with nmcli later",
    "use nmcli and type the password when asked",  # no wifi command: prose
    "nmcli con up Home --ask password later",
], ids=["prompt", "delete", "stdin", "b-no-password", "nb-no-password", "next-command", "next-line", "longer-name",
        "prose", "no-password", "password-last", "psk-flags", "key-mgmt", "show-secrets", "after-and", "prose-nmcli",
        "prose-nmcli-password", "no-wifi"])
def test_a_positional_command_without_a_password_word_is_left(text: str) -> None:
    assert scrubbed(text) == text


@pytest.mark.parametrize(("args", "expected"), [
    (["htpasswd", "-b", "f", "bob", "X1"], ["htpasswd", "-b", "f", "bob", T]),
    (["/usr/bin/htpasswd", "-nbB", "bob", "X2"], ["/usr/bin/htpasswd", "-nbB", "bob", T]),
    (["sudo", "htpasswd", "-bc", "f", "bob", "X3"], ["sudo", "htpasswd", "-bc", "f", "bob", T]),
    (["nmcli", "device", "wifi", "connect", "Home", "password", "X4"],
     ["nmcli", "device", "wifi", "connect", "Home", "password", T]),
    (["nmcli", "connection", "modify", "Home", "wifi-sec.psk", "X5"],
     ["nmcli", "connection", "modify", "Home", "wifi-sec.psk", T]),
    (["nmcli", "c", "m", "W", "802-1x.password", "X6", "+wifi-sec.psk", "X7"],
     ["nmcli", "c", "m", "W", "802-1x.password", T, "+wifi-sec.psk", T]),
], ids=["htpasswd", "htpasswd-path-nbB", "sudo-htpasswd", "nmcli-connect", "nmcli-psk", "nmcli-two"])
def test_a_positional_password_in_an_argv_list_is_scrubbed(args: list[Any], expected: list[Any]) -> None:
    as_data, in_document, found = _as_data_and_document(args)
    assert as_data == expected
    assert in_document == expected
    assert found == sum(word == T for word in expected)


@pytest.mark.parametrize("args", [
    ["htpasswd", "-c", "f", "bob"],
    ["htpasswd", "-b", "f", "bob"],
    ["htpasswd", "-nb", "bob", 1234],  # not a string
    ["nmcli", "dev", "wifi", "connect", "password"],
    ["nmcli", "con", "mod", "Home", "wifi-sec.psk-flags", "0"],
], ids=["prompt", "missing", "number", "ssid-only", "psk-flags"])
def test_a_positional_command_list_without_a_password_is_left(args: list[Any]) -> None:
    as_data, in_document, found = _as_data_and_document(args)
    assert (as_data, in_document, found) == (args, args, 0)


# -- the rules version -------------------------------------------------------------------------------------------------


def test_the_rules_version_and_the_default_digest_name_these_rules() -> None:
    """The digest changes with the rules (docs/capture.md, Digest): a step scrubbed under these rules must not
    claim the digest of rules that let these values through; health still names the earlier ones."""
    policy = load_policy(env={})
    assert POLICY_VERSION >= 5
    assert policy.digest_under(5) == V5_DIGEST != policy.digest_under(POLICY_VERSION) == policy.digest
    assert policy.digest_under(4) == "a2f7b06db35e99da16be8ea5adb1f4a3ba27c4c267e06f1f4ae0df350338e657"
    assert len({policy.digest_under(version) for version in range(1, POLICY_VERSION + 1)}) == POLICY_VERSION


def test_a_recorded_step_keeps_none_of_them_anywhere_in_the_store(tmp_path: Path) -> None:
    secrets = ["argvFlagPw1", "docFlagPw2", "pathCmdPw3", "htpasswdPw4", "nmcliPw5", "argvNmcliPw6"]
    stored = recorded_in_store(tmp_path / "home", {
        "tool": "shell",
        "args": ["deploy", "--region", "eu", "--api-key", secrets[0]],
        "doc": json.dumps({"argv": ["tool", "--client-secret", secrets[1]]}, indent=2),
        "result": {"log": f"$ /usr/bin/mysql -uroot -p{secrets[2]} shop\n$ htpasswd -nb bob {secrets[3]}",
                   "wifi": f"nmcli dev wifi connect Home password {secrets[4]}",
                   "argv": ["nmcli", "con", "mod", "Home", "wifi-sec.psk", secrets[5]]},
    })
    assert [s for s in secrets if s in stored] == []


# -- what the review found --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("x;/usr/bin/mysql -pS1", f"x;/usr/bin/mysql -p{T}"),
    ("a&&/usr/bin/mysql -pS1", f"a&&/usr/bin/mysql -p{T}"),
    ("run `/usr/bin/mysql -pS1 db`", f"run `/usr/bin/mysql -p{T} db`"),
    ("cd x;/usr/bin/htpasswd -b f u S1", f"cd x;/usr/bin/htpasswd -b f u {T}"),
    ("sudo /usr/bin/mysql -pS1", f"sudo /usr/bin/mysql -p{T}"),
    ("env A=1 /usr/bin/sshpass -p S1 ssh h", f"env A=1 /usr/bin/sshpass -p {T} ssh h"),
    ('"htpasswd" -b f u S1', f'"htpasswd" -b f u {T}'),
    ("'htpasswd' -b f u S1", f"'htpasswd' -b f u {T}"),
    ('"/usr/bin/htpasswd" -b f u S1', f'"/usr/bin/htpasswd" -b f u {T}'),
    ("nmcli dev wifi connect connect password S1", f"nmcli dev wifi connect connect password {T}"),
    ("nmcli -w 10 device wifi connect Home password S1 ifname wlan0",
     f"nmcli -w 10 device wifi connect Home password {T} ifname wlan0"),
    ("nmcli c m id Home wifi-sec.psk S1", f"nmcli c m id Home wifi-sec.psk {T}"),
    ("nmcli connection add type wifi ssid H wifi-sec.key-mgmt wpa-psk wifi-sec.psk S1",
     f"nmcli connection add type wifi ssid H wifi-sec.key-mgmt wpa-psk wifi-sec.psk {T}"),
], ids=["after-semicolon", "after-and", "in-backticks", "htpasswd-after-semicolon", "after-sudo", "after-env",
        "quoted-name", "single-quoted-name", "quoted-path", "ssid-connect", "nmcli-wait-option", "nmcli-id",
        "nmcli-add"])
def test_the_forms_the_review_found_are_scrubbed(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize("text", [
    "find /var/lib/mysql -perm 600",
    "find /etc/mysql -printf %p",
    "ls /var/lib/mysql -pl",
    "file /usr/local/bin/redis-cli -a x",
    "Use htpasswd -b to pass the password on the command line",
    "htpasswd -b is insecure because the password shows in ps",
    "Syntax: htpasswd -b[cmBdpsDv] [-C cost] passwordfile username password",
    "nmcli -s -g 802-11-wireless-security.psk connection show Home",
    "nmcli docs: wifi-sec.psk is the preshared key and gsm.pin is the SIM's",
    "nmcli connection show Home",
], ids=["find-perm", "find-printf", "ls-pl", "file-path", "prose-use", "prose-insecure", "syntax-line",
        "nmcli-get-values", "nmcli-prose", "nmcli-show"])
def test_what_the_review_found_over_scrubbed_is_left(text: str) -> None:
    """A path given as an argument is no command, prose naming a command is no command line, and nmcli's field
    selector (``-g PROPERTY``) prints a secret rather than setting one."""
    assert scrubbed(text) == text
