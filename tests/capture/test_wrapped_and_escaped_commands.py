"""Passwords the default policy let through under rules version 4, scrubbed under version 5: a command written as a
path after a wrapper's options (``sudo -u root /usr/bin/mysql -pX``), after a variable (``$HOME/bin/mysql``), in a
directory named in any script, or as Windows names it (``mysql.exe``); a blank escaped inside a bare value
(``-pS3cret\\ Pw1`` kept `` Pw1``); an argv list written in text one item a line, or as a repr of bytes; jarsigner's
``-storepass`` and more commands' password flags (HTTPie's ``-a``, ``ssh-keygen -N``, ``useradd -p``...); rabbitmqctl's
positional password; a credential key assigned a literal by subscript (``os.environ['DB_PASSWORD'] = 'x'``). And one
over-scrub: a switch (``--no-password keep``) took the next word for its value.

Each form is scrubbed (only the secret), scrubbed again with nothing more declared, and set beside near-misses.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from capture.support import recorded_in_store, scrubbed

from bitexact.capture import apply_policy, load_policy
from bitexact.capture.apply import scrub_text

T = "[CREDENTIAL]"


def _stored(args: list[Any]) -> tuple[list[Any], list[Any]]:
    """``args`` stored as data and as a pretty-printed JSON document in a string."""
    data = apply_policy(load_policy(env={}), "tool_call",
                        {"args": args, "doc": json.dumps({"argv": args}, indent=2)}).data
    return data["args"], json.loads(data["doc"])["argv"]


# -- a command after a wrapper's options, a variable, any script's directory, Windows ------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("sudo -u root /usr/bin/mysql -pS1 shop", f"sudo -u root /usr/bin/mysql -p{T} shop"),
    ("sudo -E -u app /usr/bin/mysql -pS1", f"sudo -E -u app /usr/bin/mysql -p{T}"),
    ("sudo -- /usr/bin/mysql -pS1", f"sudo -- /usr/bin/mysql -p{T}"),
    ("env -i PATH=/bin /usr/bin/mysql -pS1", f"env -i PATH=/bin /usr/bin/mysql -p{T}"),
    ("nice -n 5 /usr/bin/mysql -pS1", f"nice -n 5 /usr/bin/mysql -p{T}"),
    ("timeout 10 /usr/bin/mysql -pS1", f"timeout 10 /usr/bin/mysql -p{T}"),
    ("timeout 2.5s ./bin/sshpass -p S1 ssh h", f"timeout 2.5s ./bin/sshpass -p {T} ssh h"),
    ("x=$(sudo -u root /usr/bin/mysql -pS1 -e 'select 1')", f"x=$(sudo -u root /usr/bin/mysql -p{T} -e 'select 1')"),
    ("sudo -u www-data /usr/bin/htpasswd -b f bob S1", f"sudo -u www-data /usr/bin/htpasswd -b f bob {T}"),
    ("$HOME/bin/mysql -pS1", f"$HOME/bin/mysql -p{T}"),
    ("${TOOLS}/bin/redis-cli -a S1 ping", f"${{TOOLS}}/bin/redis-cli -a {T} ping"),
    ("/opt/données/bin/mysql -pS1", f"/opt/données/bin/mysql -p{T}"),
    ("C:\\tools\\mysql.exe -uroot -pS1", f"C:\\tools\\mysql.exe -uroot -p{T}"),
    ("mysql.exe -pS1 shop", f"mysql.exe -p{T} shop"),
    ("mysql.EXE -pS1", f"mysql.EXE -p{T}"),
    ("htpasswd.exe -b f bob S1", f"htpasswd.exe -b f bob {T}"),
    ("jarsigner -storepass S1 app.jar key", f"jarsigner -storepass {T} app.jar key"),
], ids=["sudo-u", "sudo-flags", "sudo-dashes", "env-i", "nice-n", "timeout", "timeout-seconds", "in-subshell",
        "htpasswd-sudo", "home", "braced-variable", "non-ascii-dir", "windows-path", "exe", "exe-upper",
        "htpasswd-exe", "jarsigner"])
def test_a_wrapped_variable_or_windows_command_takes_its_password(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize("text", [
    "echo hello /usr/bin/mysql -pX",  # a word no option takes: echo's argument
    "sudo -u root echo /usr/bin/mysql -pX",
    "-u root /usr/bin/mysql -pX",  # options with no wrapper before them
    "find /var/lib/mysql -perm 600",  # a path given as an argument
    "ls $HOME/bin/mysql -p",
    "$HOME/bin/mysql.sock -pX",  # a longer name
    "mysql.exe -p shop",  # asks for the password
    "mysql.executor -pX",
    "https://example.test/$HOME/mysql -pX",
], ids=["echo-argument", "wrapped-echo", "no-wrapper", "find", "ls", "longer-name", "asks", "longer-exe", "url"])
def test_a_path_that_stands_where_no_command_does_is_left(text: str) -> None:
    assert scrubbed(text) == text


@pytest.mark.parametrize(("args", "expected"), [
    (["C:\\tools\\mysql.exe", "-pS1"], ["C:\\tools\\mysql.exe", f"-p{T}"]),
    (["sudo", "-u", "root", "/usr/bin/mysql", "-pS1"], ["sudo", "-u", "root", "/usr/bin/mysql", f"-p{T}"]),
    (["htpasswd.exe", "-b", "f", "bob", "S1"], ["htpasswd.exe", "-b", "f", "bob", T]),
    (["jarsigner", "-keypass", "S1", "app.jar"], ["jarsigner", "-keypass", T, "app.jar"]),
], ids=["windows", "sudo-u", "htpasswd-exe", "jarsigner"])
def test_the_same_commands_as_argv_lists(args: list[Any], expected: list[Any]) -> None:
    assert _stored(args) == (expected, expected)


# -- an escaped blank inside a bare value -----------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("mysql -pS3cret\\ Pw1 shop", f"mysql -p{T} shop"),
    ("sshpass -p S3cret\\ Pw1 ssh h", f"sshpass -p {T} ssh h"),
    ("myapp --password S3cret\\ Pw1 --verbose", f"myapp --password {T} --verbose"),
    ("password=S3cret\\ Pw1 next=1", f"password={T} next=1"),
    ("htpasswd -b f bob S3cret\\ Pw1", f"htpasswd -b f bob {T}"),
    ("mysql -pS3cret\\ \\ Pw1", f"mysql -p{T}"),
], ids=["mysql", "sshpass", "long-flag", "name-value", "htpasswd", "two-blanks"])
def test_an_escaped_blank_is_part_of_the_value(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


# -- argv lists written one item a line, or as bytes ----------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("['myapp',\n  '--password',\n  'S1']", f"['myapp',\n  '--password',\n  '{T}']"),
    ('[\n  "deploy",\n  "--api-key",\n  "S1",\n  "--region",\n  "eu"\n]',
     f'[\n  "deploy",\n  "--api-key",\n  "{T}",\n  "--region",\n  "eu"\n]'),
    ("argv: ['t', '--token',\r\n 'S1']", f"argv: ['t', '--token',\r\n '{T}']"),
    ("[b'myapp', b'--password', b'S1']", f"[b'myapp', b'--password', b'{T}']"),
    ("[b'sshpass', b'-p', b'S1', b'ssh', b'h']", f"[b'sshpass', b'-p', b'{T}', b'ssh', b'h']"),
], ids=["python-pprint", "json-indented", "crlf", "bytes-flag", "bytes-command"])
def test_an_argv_list_in_text_across_lines_or_as_bytes_is_read(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize("text", [
    "['myapp',\n  '--password',\n  '--verbose']",  # the next item is a flag
    "['myapp',\n  '--password-file',\n  '/run/x']",
    "[b'myapp', b'--password', b'-']",
], ids=["next-flag", "password-file", "stdin"])
def test_an_argv_list_in_text_without_a_secret_is_left(text: str) -> None:
    assert scrubbed(text) == text


# -- a switch takes no value ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("flag", ["--no-password", "--ask-password", "--prompt-password", "--skip-auth-token",
                                  "--without-password", "--disable-password", "--No-Password"])
def test_a_switch_takes_no_value(flag: str) -> None:
    assert scrubbed(f"myapp {flag} keep") == f"myapp {flag} keep"
    assert _stored(["myapp", flag, "keep"]) == (["myapp", flag, "keep"], ["myapp", flag, "keep"])


@pytest.mark.parametrize("flag", ["--show-password", "--new-password", "--admin-password", "--notify-token"])
def test_a_flag_that_is_no_switch_still_takes_its_value(flag: str) -> None:
    """Only the switch words open a switch: ``--notify-token`` opens with ``no`` but not ``no-``."""
    assert scrubbed(f"myapp {flag} S1") == f"myapp {flag} {T}"
    assert _stored(["myapp", flag, "S1"]) == (["myapp", flag, T], ["myapp", flag, T])


def test_a_recorded_step_keeps_none_of_them_anywhere_in_the_store(tmp_path: Path) -> None:
    secrets = ["wrappedPw1", "windowsPw2", "escapedPw3", "listedPw4", "bytesPw5", "variablePw6"]
    stored = recorded_in_store(tmp_path / "home", {
        "tool": "shell",
        "args": ["C:\\bin\\mysql.exe", f"-p{secrets[1]}"],
        "result": {"log": f"$ sudo -u root /usr/bin/mysql -p{secrets[0]} shop\n$ mysql -pS\\ {secrets[2]}",
                   "repr": f"['deploy',\n '--api-key',\n '{secrets[3]}']\n[b'x', b'--token', b'{secrets[4]}']",
                   "home": f"$HOME/bin/mysql -p{secrets[5]}"},
    })
    assert [s for s in secrets if s in stored] == []


# -- more commands' own password flags and positional passwords ----------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("http -a bob:S1 GET https://h", f"http -a bob:{T} GET https://h"),
    ("xh --auth bob:S1 https://h", f"xh --auth {T} https://h"),  # a credential flag's whole value
    ("https --auth=bob:S1 h", f"https --auth={T} h"),
    ("ssh-keygen -t ed25519 -N S1 -f k", f"ssh-keygen -t ed25519 -N {T} -f k"),
    ("ssh-keygen -p -P S1 -N S2 -f k", f"ssh-keygen -p -P {T} -N {T} -f k"),
    ("useradd -m -p S1 bob", f"useradd -m -p {T} bob"),
    ("usermod --password S1 bob", f"usermod --password {T} bob"),
    ("psexec \\\\h -u admin -p S1 cmd", f"psexec \\\\h -u admin -p {T} cmd"),
    ("rdesktop -u bob -p S1 h", f"rdesktop -u bob -p {T} h"),
    ("cqlsh -u bob -p S1 h", f"cqlsh -u bob -p {T} h"),
    ("influx -username bob -password S1", f"influx -username bob -password {T}"),
    ("ldappasswd -x -D cn=admin -w S1 -a S2 -s S3 uid=bob", f"ldappasswd -x -D cn=admin -w {T} -a {T} -s {T} uid=bob"),
    ("oc login -u bob -p S1 https://api", f"oc login -u bob -p {T} https://api"),
    ("cf login -u bob -p S1", f"cf login -u bob -p {T}"),
    ("rabbitmqctl add_user bob S1", f"rabbitmqctl add_user bob {T}"),
    ("sudo rabbitmqctl -n rabbit@h change_password bob 'S 1'",
     f"sudo rabbitmqctl -n rabbit@h change_password bob '{T}'"),
], ids=["httpie", "xh", "https-equals", "keygen-new", "keygen-old-and-new", "useradd", "usermod", "psexec",
        "rdesktop", "cqlsh", "influx", "ldappasswd", "oc-login", "cf-login", "rabbitmq-add", "rabbitmq-change"])
def test_more_commands_take_their_passwords(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize("text", [
    "ls -a -s /tmp",
    "curl -s -a ftp://h/f",  # curl's -a appends: no value of its own
    "ssh-keygen -t ed25519 -N '' -f k",  # no passphrase
    "rdesktop -p - h",  # read from stdin
    "rabbitmqctl add_user bob",  # asks for it
    "rabbitmqctl list_users",
    "ldapsearch -x -s sub -b dc=h",  # ldapsearch's -s is a scope
    "http GET https://h -a",
], ids=["ls", "curl-append", "keygen-empty", "rdesktop-stdin", "rabbitmq-prompt", "rabbitmq-list", "ldapsearch-scope",
        "httpie-no-value"])
def test_the_same_letters_elsewhere_are_left(text: str) -> None:
    assert scrubbed(text) == text


@pytest.mark.parametrize(("args", "expected"), [
    (["rabbitmqctl", "add_user", "bob", "S1"], ["rabbitmqctl", "add_user", "bob", T]),
    (["ssh-keygen", "-N", "S1", "-f", "k"], ["ssh-keygen", "-N", T, "-f", "k"]),
    (["http", "-a", "bob:S1", "h"], ["http", "-a", f"bob:{T}", "h"]),
], ids=["rabbitmq", "keygen", "httpie"])
def test_the_same_as_argv_lists(args: list[Any], expected: list[Any]) -> None:
    assert _stored(args) == (expected, expected)


# -- a credential key assigned by subscript ---------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("os.environ['DB_PASSWORD'] = 'S1'", f"os.environ['DB_PASSWORD'] = '{T}'"),
    ('ENV["API_KEY"]="S1"', f'ENV["API_KEY"]="{T}"'),
    ("$_ENV['SECRET'] = 'S1';", f"$_ENV['SECRET'] = '{T}';"),
    ("headers[ 'X-Api-Key' ] = `S1`", f"headers[ 'X-Api-Key' ] = `{T}`"),
], ids=["python", "ruby", "php", "backtick"])
def test_a_credential_key_assigned_by_subscript_is_scrubbed(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize("text", [
    "if cfg['password'] == 'x':",  # a comparison
    "cfg['password'] = read_password()",  # code: the value is no literal
    "cfg['user'] = 'bob'",
    "rows[0] = 'x'",
], ids=["comparison", "call", "other-key", "index"])
def test_a_subscript_that_assigns_no_credential_literal_is_left(text: str) -> None:
    assert scrubbed(text) == text


@pytest.mark.parametrize("text", ["mysql -u root --password S1", "psql -h db --password S1"])
def test_a_database_clients_password_flag_keeps_its_value_scrubbed(text: str) -> None:
    """mysql and psql read ``--password`` alone as "ask for it" and take the next word for a database; a password
    written there by mistake is the likelier reading of a record, and is scrubbed (docs/capture.md)."""
    assert scrubbed(text) == text.replace("S1", T)


# -- what the review found --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("sudo -u $USER /usr/bin/mysql -pS1", f"sudo -u $USER /usr/bin/mysql -p{T}"),
    ("sudo -u ${DB_USER} /usr/bin/mysql -pS1", f"sudo -u ${{DB_USER}} /usr/bin/mysql -p{T}"),
    ("timeout $T /usr/bin/mysql -pS1", f"timeout $T /usr/bin/mysql -p{T}"),
    ("env -i PATH=/bin HOME=$HOME /usr/bin/mysql -pS1", f"env -i PATH=/bin HOME=$HOME /usr/bin/mysql -p{T}"),
    ("sudo -u $USER htpasswd -b f bob S1", f"sudo -u $USER htpasswd -b f bob {T}"),
    ("timeout -s KILL 10 /usr/bin/mysql -pS1", f"timeout -s KILL 10 /usr/bin/mysql -p{T}"),
    ("timeout -k 5 1m30s /usr/bin/mysql -pS1", f"timeout -k 5 1m30s /usr/bin/mysql -p{T}"),
    ("sudo -u root -H /usr/bin/mysql -pS1", f"sudo -u root -H /usr/bin/mysql -p{T}"),
    ("useradd -p $(openssl passwd -1 S1) bob", f"useradd -p {T} bob"),
    ("[b'htpasswd', b'-b', b'f', b'bob', b'S1']", f"[b'htpasswd', b'-b', b'f', b'bob', b'{T}']"),
    ("rabbitmqctl authenticate_user bob S1", f"rabbitmqctl authenticate_user bob {T}"),
    ("os.environ['X_PASSWORD'] = b'S1'", f"os.environ['X_PASSWORD'] = b'{T}'"),
    ("cfg['token'] = rb'S1'", f"cfg['token'] = rb'{T}'"),
], ids=["sudo-variable", "sudo-braced-variable", "timeout-variable", "env-variable", "htpasswd-variable",
        "timeout-signal", "timeout-kill-after", "sudo-option-after-value", "command-output", "bytes-positional",
        "rabbitmq-authenticate", "subscript-bytes", "subscript-raw-bytes"])
def test_the_forms_the_review_found_are_scrubbed(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize("text", [
    "sudo -E find -L /var/lib/mysql -perm 600",  # find is the command, the path its argument
    "xargs -0 ls -d /usr/bin/mysql -perm",
    "usage: http [-a USER[:PASS]] URL",  # a synopsis's placeholders
    "ssh-keygen [-N new_passphrase] [-P old_passphrase] [-f file]",
    "usage: deploy [--password PASSWORD] [--region REGION]",
    "sudo " + "1" * 60 + "x /usr/bin/mysql -pX",  # a long word of digits, read once (a nested repeat was exponential)
], ids=["sudo-find", "xargs-ls", "http-synopsis", "keygen-synopsis", "argparse-usage", "digits-word"])
def test_what_the_review_found_over_scrubbed_is_left(text: str) -> None:
    assert scrubbed(text) == text


def test_a_command_named_inside_a_credential_flags_value_is_no_command() -> None:
    """The first pass read ``ssh-keygen`` (the ``--password`` value) as the command nearest ``-pS1``, and ssh-keygen
    takes no ``-p``: S1 was left until a second pass, the value replaced, found mysql's ``-p``."""
    assert scrubbed("mysql --password ssh-keygen -pS1") == f"mysql --password {T} -p{T}"


def test_a_line_of_escaped_blanks_after_a_flag_is_read_once() -> None:
    """``mysql -pa\\ -pa\\ ...`` is one word (each blank escaped): the flags inside the value found are part of it, not
    candidates whose values are read to the line's end again (quadratic: 32 KiB took 2.7 s). Counted, not timed:
    one finding for the whole line."""
    text = "mysql " + "-pa\\ " * 20_000
    out, found = scrub_text(load_policy(env={}), text)
    assert out == f"mysql -p{T}" and found == {"credentials": 1}


# -- a command's list written one item a line ---------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("['sshpass',\n '-p',\n 'S1',\n 'ssh',\n 'h']", f"['sshpass',\n '-p',\n '{T}',\n 'ssh',\n 'h']"),
    ("['mysql',\n '-h',\n 'db',\n '-pS1']", f"['mysql',\n '-h',\n 'db',\n '-p{T}']"),
    ('[\n  "mysql",\n  "-pS1"\n]', f'[\n  "mysql",\n  "-p{T}"\n]'),
    ("args: ['mysql', '-uroot',\n       '-pS1', 'shop']", f"args: ['mysql', '-uroot',\n       '-p{T}', 'shop']"),
    ("['sudo', '-u', 'root',\n '/usr/bin/mysql',\n '-pS1']", f"['sudo', '-u', 'root',\n '/usr/bin/mysql',\n '-p{T}']"),
    ("[b'sshpass',\n b'-p',\n b'S1']", f"[b'sshpass',\n b'-p',\n b'{T}']"),
    ("x = ['[a]', 'mysql',\n '-pS1']", f"x = ['[a]', 'mysql',\n '-p{T}']"),
    ("['ssh-keygen',\n '-N',\n 'S1']", f"['ssh-keygen',\n '-N',\n '{T}']"),
    ("['htpasswd',\n '-b',\n 'f',\n 'bob',\n 'S1']", f"['htpasswd',\n '-b',\n 'f',\n 'bob',\n '{T}']"),
    ("['rabbitmqctl',\r\n 'add_user',\r\n 'bob',\r\n 'S1']", f"['rabbitmqctl',\r\n 'add_user',\r\n 'bob',\r\n '{T}']"),
], ids=["sshpass", "mysql", "json-indented", "two-a-line", "after-sudo", "bytes", "bracket-in-an-item", "keygen",
        "htpasswd", "rabbitmq-crlf"])
def test_a_commands_list_written_one_item_a_line_is_read_as_the_list(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize("text", [
    "['mkdir',\n '-p',\n 'out']",
    "['ssh',\n '-p',\n '22',\n 'h']",
    "['mysql',\n '-p',\n 'shop']",  # -p then a word: asks for the password
    "  '-pS1',\n  'x'",  # items with no list and no command
], ids=["mkdir", "ssh-port", "mysql-asks", "no-list"])
def test_a_list_across_lines_without_a_commands_password_is_left(text: str) -> None:
    assert scrubbed(text) == text
