"""Passwords the default policy let through (rules version 3): a command's own password flag (mysql -pX,
sshpass -p X, openssl -passin pass:X, ...), a secret store's set command, a tool's "config set NAME VALUE",
Oracle's USER/PASSWORD, a .netrc entry, and an XML element's CDATA section.

Each test drives ``scrub_text`` under the shipped default; one records through a real SDK run and reads
every store row back. Every scrubbed text is scrubbed again to prove that a second pass declares nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from capture.support import recorded_in_store, scrubbed

from bitexact.capture import apply_policy, load_policy
from bitexact.capture.policy import POLICY_VERSION


@pytest.mark.parametrize(("text", "expected"), [
    ("mysql -u root -phunter2 shop", "mysql -u root -p[CREDENTIAL] shop"),
    ("mysqldump -uroot -p'pa ss' db > out.sql", "mysqldump -uroot -p'[CREDENTIAL]' db > out.sql"),
    ("mkdir -p out && mariadb -pS3cret", "mkdir -p out && mariadb -p[CREDENTIAL]"),
    ("sshpass -p 's3 cret' ssh deploy@host", "sshpass -p '[CREDENTIAL]' ssh deploy@host"),
    ("sshpass -pabc123 scp a b", "sshpass -p[CREDENTIAL] scp a b"),
    ("redis-cli -h cache -a s3cret ping", "redis-cli -h cache -a [CREDENTIAL] ping"),
    ("redis-cli --pass s3cret ping", "redis-cli --pass [CREDENTIAL] ping"),
    ("docker login -u bob -p pw1 registry.example.test", "docker login -u bob -p [CREDENTIAL] registry.example.test"),
    ("az login --service-principal -u app -p c1ient --tenant t",
     "az login --service-principal -u app -p [CREDENTIAL] --tenant t"),
    ("sqlcmd -S db -U sa -P 'Pa55w0rd!' -Q x", "sqlcmd -S db -U sa -P '[CREDENTIAL]' -Q x"),
    ("zip -r -P zipPw out.zip dir", "zip -r -P [CREDENTIAL] out.zip dir"),
    ("7z a -pArch1ve x.7z f", "7z a -p[CREDENTIAL] x.7z f"),
    ("ldapsearch -x -D cn=admin -w adm1n -b dc=example", "ldapsearch -x -D cn=admin -w [CREDENTIAL] -b dc=example"),
    ("keytool -importcert -storepass changeit -keypass k2 -file c.pem",
     "keytool -importcert -storepass [CREDENTIAL] -keypass [CREDENTIAL] -file c.pem"),
    ("openssl pkcs12 -export -passout pass:hunter2 -out k.p12",
     "openssl pkcs12 -export -passout pass:[CREDENTIAL] -out k.p12"),
    ("openssl enc -aes-256-cbc -k s3cret -in f", "openssl enc -aes-256-cbc -k [CREDENTIAL] -in f"),
    ("smbclient //fs/share -U bob%pw1", "smbclient //fs/share -U bob%[CREDENTIAL]"),
    ("lftp -u bob,pw1 ftp://files.example.test", "lftp -u bob,[CREDENTIAL] ftp://files.example.test"),
    ("mongosh --host db -u admin -p pw1", "mongosh --host db -u admin -p [CREDENTIAL]"),
    ("mosquitto_pub -u dev -P pw1 -t a/b -m on", "mosquitto_pub -u dev -P [CREDENTIAL] -t a/b -m on"),
    ("curl --user 'svc:pa ss' x", "curl --user 'svc:[CREDENTIAL]' x"),
    ("wget --user=bob:pw1 https://x", "wget --user=bob:[CREDENTIAL] https://x"),
    ('$ docker login -u bob -p "pw 1" r\\n', '$ docker login -u bob -p "[CREDENTIAL]" r\\n'),
    ('"argv": ["mysql", "-pS3cret"]', '"argv": ["mysql", "-p[CREDENTIAL]"]'),
], ids=lambda value: value.split()[0] if " " in value else value)
def test_a_commands_password_flag_is_scrubbed(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize("text", [
    "mysql -u root -p shop",  # -p then a word: the password is asked for, "shop" is the database
    "mysql -p",
    "mkdir -p out/logs",
    "ssh -p 2222 deploy@host",
    "docker run -p 8080:80 -u 1000:1000 nginx",  # run, not login: a port and a user
    "mysql -e 'select 1' && mkdir -pv out",  # the -p belongs to mkdir, after "&&"
    "mysql -e 'select 1'\nmkdir -pv out",  # ... or on the next line
    "curl https://example.test | grep -u x:y",
    "openssl rsa -passin env:KEY_PASS -in k.pem",  # names where the password is, not the password
    "openssl rsa -passin file:/run/secrets/pass -in k.pem",
    "zip -P -r out.zip dir",  # the next word is a flag
    "find . -name '*.py' -print",
    "a well-known -p flag",
    "the mysql-pool -p x",  # a longer word than the command
    "cat /etc/mysql.cnf -p x",
])
def test_the_same_letters_elsewhere_are_left(text: str) -> None:
    assert scrubbed(text) == text


@pytest.mark.parametrize(("text", "expected"), [
    ("machine api.example.test login bob password hunter2", "machine api.example.test login bob password [CREDENTIAL]"),
    ("machine git.example.test\n  login bob\n  password ghx1234\n\nmachine b login c password d\n",
     "machine git.example.test\n  login bob\n  password [CREDENTIAL]\n\nmachine b login c password [CREDENTIAL]\n"),
    ("machine h password p1 login u", "machine h password [CREDENTIAL] login u"),
    ("default login anonymous password me@example.test", "default login anonymous password [CREDENTIAL]"),
    ('machine h login u password "two \\"words\\""', 'machine h login u password "[CREDENTIAL]"'),
    ("machine h login default password x1", "machine h login default password [CREDENTIAL]"),
    ("machine h account acct port 21 password x1", "machine h account acct port 21 password [CREDENTIAL]"),
], ids=["one-line", "several", "password-first", "default", "quoted", "login-default", "account-port"])
def test_a_netrc_entrys_password_is_scrubbed(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize("text", [
    "a state machine learns the password policy",
    "the default password is printed on the label",
    "machine h login bob",  # no password in the entry
    "default login default login default",
])
def test_prose_about_machines_and_passwords_is_left(text: str) -> None:
    assert scrubbed(text) == text


@pytest.mark.parametrize(("text", "expected"), [
    ("<password><![CDATA[hunt<er&2]]></password>", "<password><![CDATA[[CREDENTIAL]]]></password>"),
    ("<wsse:Password Type='t'><![CDATA[x1]]></wsse:Password>",
     "<wsse:Password Type='t'><![CDATA[[CREDENTIAL]]]></wsse:Password>"),
    ("<Key><![CDATA[photos/cat.jpg]]></Key>", "<Key><![CDATA[photos/cat.jpg]]></Key>"),  # the bare word key: an S3 name
    ("<note><![CDATA[the password]]></note>", "<note><![CDATA[the password]]></note>"),
])
def test_an_xml_elements_cdata_section_is_read_as_its_text(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


def test_the_rules_version_names_these_rules() -> None:
    """The digest changes with the rules (docs/capture.md, Digest): a step scrubbed under these rules must
    not claim the digest of rules that let these values through."""
    assert POLICY_VERSION >= 3


def test_a_recorded_step_keeps_none_of_them_anywhere_in_the_store(tmp_path: Path) -> None:
    secrets = ["myS3cretPw", "sshpassPw1", "netrcPw22", "cdataPw33", "p12Pw44"]
    stored = recorded_in_store(tmp_path / "home", {
        "tool": "shell",
        "args": [f"mysql -uroot -p{secrets[0]} shop && sshpass -p {secrets[1]} ssh h"],
        "result": {"netrc": f"machine h\n login bob\n password {secrets[2]}\n",
                   "soap": f"<wsse:Password><![CDATA[{secrets[3]}]]></wsse:Password>",
                   "cmd": f"openssl pkcs12 -export -passout pass:{secrets[4]} -out k.p12"},
    })
    assert [s for s in secrets if s in stored] == []


@pytest.mark.parametrize(("text", "expected"), [
    # (a whole JSON document is read as data, its strings one by one: see the argv tests below)
    ('exec: ["sshpass", "-p", "s3cret", "ssh", "h"]', 'exec: ["sshpass", "-p", "[CREDENTIAL]", "ssh", "h"]'),
    ("['openssl', 'rsa', '-passin', 'pass:x1']", "['openssl', 'rsa', '-passin', 'pass:[CREDENTIAL]']"),
    ('["mysql", "-p", "shop"]', '["mysql", "-p", "shop"]'),  # a database, as on a command line
    ('["mysql", "-p"], "next": "value"', '["mysql", "-p"], "next": "value"'),  # the quote ends the flag
    ('mysql -p"S3 cret" shop', 'mysql -p"[CREDENTIAL]" shop'),
], ids=["sshpass", "openssl-single-quotes", "mysql-database", "mysql-flag-alone", "mysql-quoted-attached"])
def test_an_argv_list_written_as_text_is_read_as_a_command_line(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("ls\n  machine h login u password x1\n", "ls\n  machine h login u password [CREDENTIAL]\n"),
    ('{"netrc": "machine h\\nlogin u\\npassword x1"}', '{"netrc": "machine h\\nlogin u\\npassword [CREDENTIAL]"}'),
    ("the machine root password is x", "the machine root password is x"),  # not at a line's start: prose
], ids=["indented", "escaped-newlines", "prose-mid-line"])
def test_a_netrc_entry_starts_a_line(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


def _stored(data: dict[str, object]) -> str:
    return json.dumps(apply_policy(load_policy(env={}), "tool_call", data).data)


@pytest.mark.parametrize(("args", "expected"), [
    (["sshpass", "-p", "s3cretA", "ssh", "-p", "2222", "host"],
     ["sshpass", "-p", "[CREDENTIAL]", "ssh", "-p", "2222", "host"]),
    (["/usr/bin/mysql", "-uroot", "-ps3cretB", "shop"], ["/usr/bin/mysql", "-uroot", "-p[CREDENTIAL]", "shop"]),
    (["openssl", "pkcs12", "-passout", "pass:s3cretC"], ["openssl", "pkcs12", "-passout", "pass:[CREDENTIAL]"]),
    (["curl", "-u", "bob:s3cretD", "https://x"], ["curl", "-u", "bob:[CREDENTIAL]", "https://x"]),
    (["docker", "login", "-u", "bob", "-p", "s3 cret", "r"],
     ["docker", "login", "-u", "bob", "-p", "[CREDENTIAL]", "r"]),
    (["gh", "secret", "set", "K", "--body=v1"], ["gh", "secret", "set", "K", "--body=[CREDENTIAL]"]),
], ids=["sshpass", "mysql-path", "openssl", "curl", "docker-login", "gh-secret"])
def test_an_argv_list_is_read_as_the_command_line_it_is(args: list[str], expected: list[str]) -> None:
    """A tool's argv as a list (subprocess.run(["sshpass", "-p", ...])): the walk reads the list whole, as it
    reads a [name, value] pair, and replaces the password in its word; the same list held in a string as a
    JSON document is read the same way; a second pass finds nothing."""
    policy = load_policy(env={})
    stored = apply_policy(policy, "tool_call", {"tool": "run", "args": [args], "doc": json.dumps({"argv": args})})
    assert stored.data["args"] == [expected]
    assert json.loads(stored.data["doc"]) == {"argv": expected}
    assert stored.block is not None and stored.block["fields"]["args"]["found"] == {"credentials": 1}
    assert apply_policy(policy, "tool_call", stored.data).block is None


@pytest.mark.parametrize("data", [
    {"tool": "run", "args": [["mysql", "-u", "root", "-p", "shop"]]},  # -p, then the database
    {"tool": "run", "args": [["docker", "run", "-p", "8080:80", "nginx"]]},
    {"tool": "run", "args": ["curl https://example.test", "docker run -u 1000:1000 img"]},  # a command in a text
    {"scheme": "http", "cmd": "docker run -u 1000:1000 img"},  # "http" is a whole text, not a command line
    {"tool": "zip", "flags": "-P 8080"},
    {"db": "mysql", "args": ["mkdir", "-pv", "out"]},
    {"tool": "run", "args": [["7z", "a", "-p-", "x.7z"]]},
    {"doc": '["mysql", "-p", "db"]'},
], ids=["mysql-database", "docker-port", "two-texts", "http-value", "zip-value", "mysql-value", "7z-dash",
        "document-database"])
def test_an_argv_list_without_a_password_is_left(data: dict[str, object]) -> None:
    """No rule reads across a record's texts: a command in one text takes no flag from the next."""
    assert "[CREDENTIAL]" not in _stored(data)


@pytest.mark.parametrize(("text", "expected"), [
    ("gh secret set API_KEY --body s3cret", "gh secret set API_KEY --body [CREDENTIAL]"),
    ("gh secret set API_KEY -b's3 cret'", "gh secret set API_KEY -b'[CREDENTIAL]'"),
    ("az keyvault secret set --vault-name v --name n --value s3cret",
     "az keyvault secret set --vault-name v --name n --value [CREDENTIAL]"),
    ("""aws secretsmanager create-secret --name n --secret-string '{"a":1}'""",
     "aws secretsmanager create-secret --name n --secret-string '[CREDENTIAL]'"),
    ("aws configure set aws_secret_access_key wJalrXUtnFEMI --profile p",
     "aws configure set aws_secret_access_key [CREDENTIAL] --profile p"),
    ("git config --global github.token ghx123abc", "git config --global github.token [CREDENTIAL]"),
    ("npm config set //registry.npmjs.org/:_authToken abc123",
     "npm config set //registry.npmjs.org/:_authToken [CREDENTIAL]"),
    ("poetry config pypi-token.pypi pypi-AgEIabc", "poetry config pypi-token.pypi [CREDENTIAL]"),
    ("poetry config http-basic.private bob pw3", "poetry config http-basic.private bob [CREDENTIAL]"),
    ("sqlplus scott/tiger@orcl", "sqlplus scott/[CREDENTIAL]@orcl"),
    ("sqlplus -s -L system/Manager1@//db:1521/XE", "sqlplus -s -L system/[CREDENTIAL]@//db:1521/XE"),
    ("expdp userid=system/pw1 directory=d", "expdp userid=system/[CREDENTIAL] directory=d"),
    ("rman target sys/pw2@db", "rman target sys/[CREDENTIAL]@db"),
    ("SET ECHO ON\n  CONNECT hr/hr_pw@pdb1\n", "SET ECHO ON\n  CONNECT hr/[CREDENTIAL]@pdb1\n"),
], ids=["gh-body", "gh-b-attached", "az-keyvault", "aws-secretsmanager", "aws-configure", "git-config", "npm-config",
        "poetry-token", "poetry-basic", "sqlplus", "sqlplus-flags", "expdp-userid", "rman", "sql-connect"])
def test_a_secret_stores_set_a_tools_config_and_oracles_login_are_scrubbed(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize("text", [
    "git config user.name 'Bob B'",
    "git config --get github.token",  # a read: no value
    "git config --global --unset github.token",
    "poetry config virtualenvs.in-project true",
    "gh variable set REGION --body eu-west-1",
    "sqlplus /nolog",
    "sqlplus / as sysdba",
    "Connect via HTTP/2 and TLS/1.3",  # prose at a line's start
    "the connect a/b test",
    "see docs/api/v1 and the config file at etc/app.conf",
])
def test_settings_and_paths_that_hold_no_secret_are_left(text: str) -> None:
    assert scrubbed(text) == text


@pytest.mark.parametrize(("text", "expected"), [
    # A shell operator inside quotes ends no command (found by the session's review).
    ("curl -H 'Content-Type: application/json; charset=utf-8' -u bob:pw https://x",
     "curl -H 'Content-Type: application/json; charset=utf-8' -u bob:[CREDENTIAL] https://x"),
    ("curl -H 'Cookie: a=1; b=2' -u bob:pw https://x", "curl -H 'Cookie: [CREDENTIAL]' -u bob:[CREDENTIAL] https://x"),
    ("keytool -storepass 'a; b' -keypass k2", "keytool -storepass '[CREDENTIAL]' -keypass [CREDENTIAL]"),
    # sshpass runs another command: its options end at that command's name.
    ("sshpass -p pw ssh -p 2222 host", "sshpass -p [CREDENTIAL] ssh -p 2222 host"),
    ('run: ["sshpass", "-p", "pw", "ssh", "-p", "2222"]',
     'run: ["sshpass", "-p", "[CREDENTIAL]", "ssh", "-p", "2222"]'),
    # Oracle's quoted password; git config with its file; CDATA with white space around it.
    ('sqlplus scott/"p@ss w"@orcl', 'sqlplus scott/"[CREDENTIAL]"@orcl'),
    ("git config -f x.cfg github.token X1", "git config -f x.cfg github.token [CREDENTIAL]"),
    ("git config --file=x.cfg github.token X1", "git config --file=x.cfg github.token [CREDENTIAL]"),
    ("<password>\n  <![CDATA[x1]]>\n</password>", "<password>\n  <![CDATA[[CREDENTIAL]]]>\n</password>"),
    ("expdp system/pw1@db dumpfile=x", "expdp system/[CREDENTIAL]@db dumpfile=x"),
], ids=["quoted-semicolon", "cookie-semicolon", "keytool-quoted", "sshpass-wrapped-port", "sshpass-argv-text",
        "oracle-quoted", "git-config-f", "git-config-file", "cdata-spaced", "expdp-remote"])
def test_what_the_review_found_missed(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize("text", [
    "mysql -e x\\nmkdir -pv out",  # a newline written in a string ends the command too
    "unrar x -p- a.rar",  # -p-: asks for no password
    "7z a -p- x.7z f",
    "default password is printed on the label",  # prose at a line's start is no .netrc entry
    "machine learning password reset flow",
    "node_modules/.pnpm/lodash@4.17.21/node_modules/lodash/index.js",  # a path's /name@version
    "expdp system/pw1 dumpfile=x",  # expdp's login counts with its @database only (the docs say why)
    "mysql -u root -p db; ls -pv",
], ids=["written-newline", "unrar-dash", "7z-dash", "netrc-prose-default", "netrc-prose-machine", "pnpm-path",
        "expdp-local", "after-semicolon"])
def test_what_the_review_found_over_scrubbed_is_left(text: str) -> None:
    assert scrubbed(text) == text


class _Word(str):
    """A str subclass, as an agent's own string type would be."""


@pytest.mark.parametrize(("args", "expected"), [
    # The rest of a word the password was replaced in is scanned as any text (a card number before the colon).
    (["curl", "-u", "4111111111111111:pw", "https://x"],
     ["curl", "-u", "[PAN ****1111]:[CREDENTIAL]", "https://x"]),
    # Other scalars are words, neither flag nor value.
    (["mysql", "-pS3cret", "-P", 3306], ["mysql", "-p[CREDENTIAL]", "-P", 3306]),
    (["mysql", "-pS3cret", None, True], ["mysql", "-p[CREDENTIAL]", None, True]),
    # A command run by a wrapper: found among the first words, as a command line's is anywhere on its line.
    (["sudo", "mysql", "-pS3cret"], ["sudo", "mysql", "-p[CREDENTIAL]"]),
    (["docker", "exec", "db", "mysql", "-uroot", "-pS3cret"],
     ["docker", "exec", "db", "mysql", "-uroot", "-p[CREDENTIAL]"]),
    (["kubectl", "exec", "pod", "--", "mysql", "-pS3cret"],
     ["kubectl", "exec", "pod", "--", "mysql", "-p[CREDENTIAL]"]),
    (["env", "A=1", "sshpass", "-p", "S3cret", "ssh", "h"],
     ["env", "A=1", "sshpass", "-p", "[CREDENTIAL]", "ssh", "h"]),
    # sshpass's options that take a value: the value is no command.
    (["sshpass", "-P", "Password:", "-p", "S3cret", "ssh", "host"],
     ["sshpass", "-P", "Password:", "-p", "[CREDENTIAL]", "ssh", "host"]),
    (["/opt/My Tools/mysql", "-pS3cret"], ["/opt/My Tools/mysql", "-p[CREDENTIAL]"]),
], ids=["pan-in-the-word", "a-number", "null-and-bool", "sudo", "docker-exec", "kubectl-exec", "env-sshpass",
        "sshpass-prompt", "path-with-spaces"])
def test_an_argv_list_as_the_review_found_it(args: list[object], expected: list[object]) -> None:
    """Found by the session's second review: each as data and as a JSON document in a string, in one pass."""
    policy = load_policy(env={})
    stored = apply_policy(policy, "tool_call", {"args": [args], "doc": json.dumps({"argv": args})})
    assert stored.data["args"] == [expected]
    assert json.loads(stored.data["doc"]) == {"argv": expected}
    assert apply_policy(policy, "tool_call", stored.data).block is None


def test_an_argv_word_of_a_str_subclass_is_read_as_its_text() -> None:
    stored = apply_policy(load_policy(env={}), "tool_call", {"args": [["mysql", _Word("-pS3cret")]]})
    assert stored.data["args"] == [["mysql", "-p[CREDENTIAL]"]]
