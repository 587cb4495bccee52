"""The credentials detector on hostile text: 1 MiB of one short pattern repeated, against agent text.

    .venv/bin/python benchmarks/capture_hostile.py [--mib 1]

Each row repeats a fragment that opens a candidate for one of the detector's
rules (``password=[``, ``%3D``, a PEM BEGIN line...) until the text is
``--mib`` MiB, and prints the detector's time per MiB (best of 3, no
deadline) and its ratio to the same detector on mixed agent text of the
same size (the baseline, measured in the same run). A rule that reads the
same text again for every candidate shows as a row many times the baseline;
the policy's budget (1,000 ms per MiB by default) would withhold such a step.

Then the same for lists, through ``apply_policy`` (the walk reads an argv list whole): a list of ``--mib``
MiB of one short run of items repeated, against a list of as many agent words; and each list as a JSON
document held in a string (the document path reads it whole too); and objects the walk reads by their members
(a Kubernetes Secret's maps, Terraform's ``"sensitive": true``, a state's ``sensitive_attributes``, ``terraform
show -json``'s ``sensitive_values``), as data and as a document.

Then the scanner (every default detector, ``Scanner.scrub_text``) on text holding terminal codes, against the
scanner on mixed agent text (``--terminal`` runs these rows alone): a text holding ESC is read twice, as written and
as a terminal shows it.

Then the URL rule (``--urls`` runs these rows alone, session 25): ``redact_url`` (the request URL, a ``Location``)
and another header's value through ``redact_headers``, on a URL whose query is ``--mib`` MiB of one fragment
repeated - ``?next=`` nested as deep as it goes, ``%3F`` and ``%253F`` repeated (decoded and read again at each
level) - against the same URL holding ordinary parameters; and a path of ``--mib`` MiB holding URLs, plain or
percent-encoded (session 26; in another header's value, session 28), and a text holding URLs percent-encoded
outside any absolute URL (read in another header's value since session 28). A third pair of columns (session 30)
reads each as a URL-named header's value (``X-Original-URL``: one URL read by ``redact_url`` and as free text), and
rows of a relative URL's query, a nested URL's user info in a query, and an escape before a scheme's ``:`` are added.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

from bitexact.capture import apply_policy, load_policy
from bitexact.capture.budget import Deadline
from bitexact.capture.detectors import CredentialsDetector
from bitexact.capture.urls import redact_headers, redact_url

sys.path.insert(0, str(Path(__file__).resolve().parent))
from capture_scan import mixed_text  # noqa: E402 - the agent text the scan benchmark uses

FRAGMENTS = ("password=[", "'password': [", "{password: [", ",password:(", "password => [", "%3D", "a%3D",
             "-----BEGIN PRIVATE KEY-----\n", "<a ", "<password>", ",x", ",a:", "a=", "--a ", "-u ", "-u a:b ", "-H 'a: ",
             "ghp_", "eyJ", "sk-", "curl -u a:b ", "mysql -pa ", "-p ", "machine a login b ", "default login ",
             "<password><![CDATA[", "sqlplus a/b ", "\nconn a/b ", "userid=a/b ", "git config a.token b ",
             "poetry config ", "mysql -px\n", "a/b@ ", ".pnpm/lodash@4.17.21/", "sshpass -p a ",
             'mysql -px "\\', '"--password", "', "--password ", "/usr/bin/mysql -pa ", "/a", "./a/mysql ",
             "/usr/bin/mysql -pa\n", "htpasswd -b a b c\n", "htpasswd -b ", "htpasswd ", "nmcli ",
             "nmcli wifi password b\n", "nmcli c m a wifi-sec.psk b ", "password ",
             "sudo -u a /usr/bin/mysql -pa\n", "-a -a -a -a -a -a /usr/bin/mysql -pa\n", "$A/mysql -pa\n",
             "/é/mysql -pa\n", "mysql.exe -pa ", "mysql -pa\\ ", "--password a\\ ", "[b'--password', b'",
             "'--password',\n '", "--password a ",
             "x['password'] = 'a'\n", "a['b'] = ", "] = '", "rabbitmqctl add_user a b\n",
             "ssh-keygen -N a ", "-s ", "-a ",
             "timeout " + "1" * 200 + "x /a/mysql -pa\n", "'-p',\n", "['htpasswd',\n", "['mysql',\n '-pa',\n 'b'],\n",
             "echo 'a:b' | chpasswd\n", "echo 'chpasswd ", "echo a | chpasswd ", "chpasswd <<< a:b\n", ";PWD=a;", "PWD=a ",
             "a_pass=b ", "db_pwd=", "PASSWORD '", "PASSWORD 'a' ", "IDENTIFIED BY a ", "identified by a\n",
             "create user a identified by b\n", "SET PASSWORD ", "SET PASSWORD = 'a';", "%B4111111111111111^",
             "-----BEGIN PGP PRIVATE KEY BLOCK-----\n", "echo a | docker login --password-stdin\n",
             "echo a | docker login ", "a:$6$aaaaaaaa:\n", ":$6$",
             "a:1:b:c:d\n", ":1:b:c:", ":1:", ":*:a:", "a\\:1:b:c:d ", "'a:1:b:c:d' > ", "'a:1:b:c:d'>", "a:1:b:c:d'",
             "a password: b ", "password:", "Password: ", "a pwd :", "a Password:(", "**Password:** ", "a passwd: `",
             "a Password: a(", "a Password: a)", "a Password: 'a' ", "a Password: %s ", "a Password: a.", "a password:a*",
             "ya29.", "ya29.a.", "SG.", "SG." + "a" * 22 + ".", "npm_", "npm_" + "a" * 36, "_", "eyJ", "AKIA",
             "net user ", "net user a b\n", "net user a b c ", "NET USER ", "; net user a ", "x net user a b\n",
             "('password', ", "('password', '", "[\"password\", ", "{'name': 'password', ", "{'name': 'password', 'a': [",
             "{'name': 'password', 'a': 1, ", "{'value': 'a', ", "{'value': 'a', 'name': '", "name='token', ",
             "value='a', ", "Field(name='token', x=1, ", "'key': 'token', 'value': [",
             # rules version 7: more token shapes, webhook URLs, a bot token, names with blanks, references
             "gsk_", "tvly-", "tvly-dev-", "pplx-", "xai-", "r8_", "lsv2_pt_", "lsv2_pt_" + "a" * 32 + "_", "pcsk_",
             "whsec_", "xapp-1-", "xapp-1-A0000000-", "pypi-AgE", "dop_v1_", "shpat_", "glrt-", "figd_", "ATATT3",
             "lin_api_", "ntn_", "ntn_" + "1" * 46, "secret_", "secret_" + "a" * 43, "/", "//", "services/",
             "hooks.slack.com/services/", "hooks.slack.com/services/T0000000/B0000000/", "webhooks/",
             "webhooks/" + "1" * 18 + "/", "123456:", "1234567:AA", "1:AA", ":", "'API Key': ", '"a b c d": ',
             '"a a a a a a a a a a a a a a a a a a a a a a a a a a a a a":', "X-Amz-Signature=", "TOKEN=${A} ",
             "TOKEN=${A", "TOKEN=${{ a ", "token=$A ", "password: {{ .a ", "password: {{ .a | b | c ",
             "password: false\n", "\npassword: ${{ a }} ", "$A",
             # rules version 8: a URL's token user, XML name/value attributes, labels of words, Redis, htpasswd,
             # PuTTY key files, Kubernetes Secrets
             "://" + "a1" * 10 + "@", "://" + "a1" * 10, "://a@", '<add key="password" ', '<a key="password" value="',
             ' key="a"', '<entry key="password">', '<add key="password" value="a"/>', "API Key: ", " Key:", "A B C D Key: ",
             "A Key:", "requirepass a\n", "requirepass ", "CONFIG SET requirepass a ",
             "a:$apr1$aaaaaaaa\n", ":$apr1$aaaaaaaa", ":{SHA}", "a" * 300 + ":{SHA}" + "a" * 27 + "=\n",
             "Private-Lines: 9\n", "Private-Lines: 9\naaaa\n", "kind: Secret\n", "kind: Secret\ndata:\n",
             "  kind: Secret\n", "- kind: Secret\n  data:\n    a: b\n", "data:\n  a: b\n", "kind: Secret\n---\n",
             '{"kind":"Secret","data":{"a":"', '{"kind":"Secret","data":{', '"Secret" "data" {',
             # rules version 9: YAML flow mappings of a Secret, .NET settings, CSV tables, URL-encoded JSON
             "kind: Secret\ndata: {", "kind: Secret\ndata: {a: b, ", "kind: Secret\ndata: {a: \"", "{a: b, ",
             '<setting name="password">', '<setting name="password"><value>', '<a name="password"> <value>a',
             "password,a\n", "password,\"a\n", "\x00a,password\n", "\x00a,password\na,b", "a,b,c,d,password\n",
             "%22password%22%3A%22", "%22password%22%3A", "%22a%22%3A", "%22%3A", "%22password%22%3A1", "%253D",
             "password%253D", "a%253Da%2526", "password%3D", '"sensitive": true, ', '{"sensitive": true, "value": {',
             '{"value": 1, "sensitive": true}', '"sensitive": true, "value": "a", ')
# Rules version 10: a CSV header below a text's first line, pipe tables (markdown, psql, mysql), a state's
# sensitive_attributes in text, a JSON member encoded twice, .settings values, AUTH at redis-cli's prompt.
FRAGMENTS += (
    "a\nid,password\n", "a\n", "a,b\n", "a b, c\n", "\x00a\na,password\n1,b\n", "$ a\na,password\n",
    "| a | password |\n|---|---|\n", "|---|---|\n", "+---+---+\n", "---|", "| a |\n", "a | password\n---+---\n",
    "| a | password |\n|---|---|\n| b |\n", "| a | password |\n", "-" * 5000 + "|\n", "a" * 5000 + "\n---|---\n",
    "| a | password |\n|---|---|\n| b | c |\n", "|" + "a |" * 2000 + "\n|" + "---|" * 2000 + "\n",
    '"sensitive_attributes": [', '"sensitive_attributes": [[', '{"attributes": {', '{"attributes": {"a": [',
    '{"attributes": {"a": "b"}, "sensitive_attributes": [[{"type": "get_attr", "value": "a"}]]}',
    '{"sensitive_attributes": [{"attributes": {"a": [', '[{"type": "get_attr", "value": "a"}',
    "%2522password%2522%253A", "%2522a%2522%253A%2522", "%2522%253A", "%2522password%2522%253A%2522%255C%2522",
    "%2522password%2522%253A%2520", '<Setting Name="Password"><Value Profile="a">', '<Value Profile="a">',
    '<Setting Name="Password">', '<Setting Name="Password"> <Value a="b">a</Value>', "> AUTH ", "a:1> AUTH a\n",
    "127.0.0.1:6379> AUTH a b\n", "> AUTH a", "a" * 200 + ":1> AUTH a\n", ">", "\n1:1> AUTH ",
    "|-[ RECORD ", "|\n-[ RECORD 1 ]\npassword | a\n", "-[ RECORD 1 ]|\n" + "a | b\n" * 8, "-[ RECORD 1 ]\n|\n | a\n",
    "|\n-[ RECORD 1 ]\n" + "password | a+\n | b\n" * 4)
# Rules version 11: terraform show -json's sensitive_values in text, a header cell in markdown's marks, an escaped
# pipe in a markdown cell, redis-cli's other prompts, a URL-encoded JSON member with %5C-escaped quotes, a CSV header
# looked for in a text's first 64 lines.
FRAGMENTS += (
    '"sensitive_values": {', '"sensitive_values": {"a": [', '"sensitive_values": {"a": {"values": {',
    '{"values": {"a": "b"}, "sensitive_values": {"a": true}}', '{"sensitive_values": {"a": [true, ', "[true, ",
    '{"values": {"a": {', '{"values": {"a": [', '{"sensitive_values": {"a": true}, "values": {"a": [',
    "| **password** | a |\n|---|---|\n| b | c |\n", "| **a** | `password` |\n|---|---|\n", "| **",
    "| _" + "_" * 70 + "password |\n|---|---|\n", "|" + " **a** |" * 2000 + "\n|" + "---|" * 2000 + "\n",
    "| " + "*" * 63 + "a" + "*" * 62 + " | password |\n|---|---|\n", "\\|", "| a | password |\n|---|---|\n| \\| | b |\n",
    "| a | password |\n|---|---|\n" + "| \\|\\| | b \\| |\n" * 4, "redis /a> AUTH a\n", "redis /a> AUTH ",
    "not connected> AUTH a\n", "not connected> AUTH ", "redis " + "/a" * 100 + "> AUTH a\n", "(TX)> AUTH ",
    "a:1(TX)> AUTH a\n", "%5C%22password%5C%22%3A%5C%22", "%5C%22password%5C%22%3A", "%5C%22a%5C%22%3A%5C%22",
    "%5C%22%3A", "%5C%22password%5C%22%3A%5C%22%5C%5C%5C%22", "%5C%22password%5C%22%3A%5C%22%5C%5C",
    "%5C%22password%5C%22%3A1", "\x00" + "a\n" * 70, "\x00" + "a\n" * 63 + "a,password\n1,b\n",
    '{"after": "a", "after_sensitive": true}', '{"after_sensitive": true, "after": {"a": [',
    '{"after": {"a": "b"}, "after_sensitive": {"a": true}, "before": {', '"after_sensitive": [', '"after": {"after": {')
# Rules version 12 (``--latest`` runs these rows alone, beside the baselines): a table's header cell holding an HTML
# element or a link, a markdown cell that is one element, a %255C-escaped JSON member encoded twice (and one after an
# encoded +), a CSV header under a line printing a .csv file or psql's COPY ... TO STDOUT ... HEADER; completed
# (session 21): an upper-case .CSV, a pipeline through head, sqlite3's, mysql's and psql's lines and sqlite> sessions.
LATEST_FRAGMENTS = (
    "| <b>password</b> | a |\n|---|---|\n| b | c |\n", "| <b>", "| <b>a</b> | [password](#a) |\n|---|---|\n",
    "| <" + "b" * 16 + " " + "a" * 256 + ">password</" + "b" * 16 + "> | a |\n|---|---|\n",
    "| <a>" + "a" * 63 + "</b> | password |\n|---|---|\n", "| <a><a><a><a>password</a></a></a></a> | b |\n|---|---|\n",
    "| [", "| [" + "a" * 64 + "](" + "a" * 256, "| [password][" + "a" * 64 + "] | b |\n|---|---|\n",
    "| [**<code>password</code>**](#a \"" + "a" * 200 + "\") | b |\n|---|---|\n",
    "|" + " <b>a</b> |" * 2000 + "\n|" + "---|" * 2000 + "\n", "</b> |",
    "| a | password |\n|---|---|\n" + "| b | <code>c</code> |\n" * 8,
    "| a | password |\n|---|---|\n" + "| b | <code>c d</code> |\n" * 8,
    "| a | password |\n|---|---|\n| b | <code>" + "a" * 4000 + " |\n", "<code>",
    "%255C%2522password%255C%2522%253A%255C%2522", "%255C%2522password%255C%2522%253A", "%255C%2522%253A",
    "%255C%2522a%255C%2522%253A%255C%2522", "%255C%2522password%255C%2522%253A%255C%2522%255C%255C%255C%2522",
    "%255C%2522password%255C%2522%253A%255C%2522%255C%255C", "%255C%2522password%255C%2522%253A%2520%2B",
    "%2522password%2522%253A%2B", "%2522password%2522%253A%2B%2522", "%255C",
    ".csv", ".csv\n", "cat a.csv\n", "cat a.csv\na,password\n", "cat a.csv\na,password\n1,b\n",
    "cat a,b.csv\na,password\n",
    "cat " + "-a " * 50 + "a.csv\n", "cat " + "a.csv " * 50 + "\n", "$ cat a.csv\n" + "a,b\n", "a.tsv\n" + "a" * 5000,
    "COPY a TO STDOUT HEADER\n", "COPY", "\\copy", "\\copy to stdout header\na,password\n",
    "COPY TO STDOUT HEADER\n" + "a" * 5000, "copy to stdout header\na,password\n",
    "\x00cat a.csv\na,password\n1,b\n",
    # completed: an upper-case file, a pipeline, a database client's line, sqlite3's session
    "cat A.CSV\na,password\n1,b\n", "cat a.csv | head -n 5\na,password\n", "cat a.csv" + " | head -n 1" * 300 + "\n",
    "sql", "sql ", "sql\n", "$ mysql -e a\na\tpassword\n1\tb\n", "$ mysql" + " -B" * 500 + "\n",
    "$ sqlite3 -csv -header a\na,password\n1,b\n", "$ psql --csv -c a\na,password\n",
    "$ psql -c 'copy a to stdout header'\na,password\n", "sqlite> a\n", "sqlite> .mode csv\nsqlite> .headers on\n",
    "sqlite> .mode csv\nsqlite> .headers on\nsqlite> a\na,password\n1,b\n",
    "sqlite> .mode csv\nsqlite> .headers on\nsqlite> a\n" + "   ...> a\n" * 8, "sqlite> a\n" + " " * 5000,
    "sqlite> .mode csv\nsqlite> .headers on\nsqlite> a\n" + " " * 5000,
    "=# copy to stdout header\na,password\n1,b\n", "=# copy\n", "=> copy", "=", "=" * 4000 + "\n",
    "\x00sqlite> .mode csv\n", "sqlite> .mode csv\nsqlite> .headers on\n" + "a\n" * 500 + "\x00")
FRAGMENTS += LATEST_FRAGMENTS
V12_FRAGMENTS = LATEST_FRAGMENTS
# Rules version 13 (``--latest`` runs these rows alone): mysql's authentication_string (a table's column, a \\G line),
# MariaDB's client, sqlite3's list and line modes, box-drawn tables, a client's row holding "|" (split at the rule's
# joints), redis-cli's replies (CONFIG GET, HGETALL, ACL GETUSER's nested array, ACL LIST), ACL SETUSER, HSET, HGET.
LATEST_FRAGMENTS = (
    "authentication_string: a\n", "authentication_string:\n ", "a\tauthentication_string\n",
    "| a | authentication_string |\n|---|---|\n| b | c |\n",
    "b", "mariadb", "mariadb\n", "$ mariadb -B -e a\na\tpassword\n1\tb\n", "$ mariadb" + " -B" * 500 + "\n",
    "mariadb " + "a" * 5000, "| mariadb -B\n",
    "$ sqlite3 -header a\na|password\n1|b\n", "$ sqlite3 -header a\na|password\n" + "1|b|c|d|e\n" * 20,
    "sqlite> .headers on\nsqlite> a\na|password\n1|b\n", "sqlite> .mode line\nsqlite> a\n",
    "sqlite> .mode line\nsqlite> a\npassword = b\n\n", "sqlite> .mode line\nsqlite> a\n" + "a = b\n" * 50,
    "sqlite> .mode line\nsqlite> a\n" + " " * 5000 + " = b\n", "$ sqlite3 -line a\n" + "\n" * 500,
    "│", "│ a │ password │\n├───┼───┤\n│ b │ c │\n", "├───┼───┤\n", "║", "═" * 100 + "│\n",
    "+---+---+\n| a | password |\n+---+---+\n| b|c | d|e |\n", "+---+---+\n| a | password |\n+---+---+\n" + "|" * 200
    + "\n", "a | password\n--+--\n" + "b | c|d\n" * 50, "|" + "---+" * 1000 + "\n| a " * 1000 + "\n",
    "> ", "a:1> CONFIG GET a\n", 'a:1> CONFIG GET a\n1) "password"\n2) "b"\n',
    'a:1> HGETALL a\n' + '1) "password"\n2) "b"\n' * 50, 'a:1> HGETALL a\n' + ' 1) 2) 3) "a"\n' * 50,
    'a:1> ACL GETUSER a\n1) "passwords"\n2) 1) "a"\n' + '   2) "b"\n' * 50, "> ACL LIST\n",
    'a:1> ACL LIST\n' + '1) "user a on #' + "a" * 64 + ' >b"\n' * 20, "a:1> ACL SETUSER a" + " >a" * 500 + "\n",
    "a:1> HSET a" + " password b" * 500 + "\n", 'a:1> HGET a password\n"b"\n', "> HSET ", "> HGET a\n",
    "> CONFIG GET a\n", "> HGETALL\n", "a:1> HGETALL a\n" + "1) " * 2000 + "\n",
    # redis-cli on a shell's line, its reply to a pipe
    "-cli", "s-cli\n", "redis-cli\n", "$ redis-cli config get a\n", "$ redis-cli config get a\npassword\nb\n",
    "$ redis-cli hgetall a\n" + "password\nb\n" * 50, "$ redis-cli hget a password\nb\n",
    "$ redis-cli acl getuser a\npasswords\n" + "a" * 64 + "\n", "$ redis-cli acl list\n" + "user a >b #c\n" * 50,
    "$ redis-cli" + " -h a" * 500 + " config get a\n", "$ redis-cli config get a\n" + "a" * 5000 + "\n",
    "$ redis-cli acl getuser a\n" + "a\n" * 100, "$ redis-cli --no-raw config get a\n1) \"password\"\n2) \"b\"\n",
    # SHOW CREATE USER's AS / USING, and a lower-case "identified by" with no newline (quadratic at 0de516f)
    "identified by a ", "identified via a using ", "IDENTIFIED WITH 'a' AS 'b' ", "create user a identified by b ",
    # sqlite3's column mode
    "sqlite> .mode column\nsqlite> a\na  password\n-  --------\n" + "b  c\n" * 50,
    "sqlite> .mode column\nsqlite> a\na  b\n" + "-  " * 1000 + "\n", "$ sqlite3 -column -header a\n" + "a  password\n" * 2,
    "sqlite> .mode column\nsqlite> a\n" + "a  password\n-  --------\nb  c\n",
    # leaks23: authentication_string a credential name, a Redis ACL file's lines (a finding a line, a long line of
    # rules, one failing at its end, a selector or a quote never closed, a long indent, a line start that is no user)
    "authentication_string=a\n", '{"authentication_string": "a"}', "user a on >b ~* +@all\n",
    "user a" + " +a" * 2000 + "\n", "user a" + " +a" * 2000 + " x\n", "user a" + " >a" * 2000 + "\n",
    "user a (" + "b " * 2000 + "\n", 'user a "<' + "b " * 2000 + "\n", "\n" + " " * 5000 + "user a >b\n",
    "\nuser", "\nuser a b\n", "\x00user a >b",
    # leaks23: terminal codes read past before sqlite3's prompt and a client's first printed line
    "\x1b[?2004hsqlite> .headers on\r\n\x1b[?2004l\r\x1b[?2004hsqlite> a\r\n\x1b[?2004l\ra|password\r\n1|b\r\n",
    "$ sqlite3 -header a\n" + "\x1b[0m" * 1000 + "\n", "$ sqlite3 -header a\n\x1b]" + "a" * 5000 + "\n",
    "sqlite> a\n" + "\x1b[?2004h\r" * 500 + "   ...> a\n", "$ cat a.csv\n\x1b[?2004l\ra,password\r\r\n1,b\r\r\n",
    "$ cat a.csv\na,password\n" + "1,b" + "\r" * 5000 + "\n",
    # leaks24: redis.conf's tls-*-pass, sentinel.conf's auth-pass / sentinel-pass (the rest of the line read once)
    "tls-key-file-pass a\n", "tls-key-file-pass ", "-pass ", "--pass a ", "sentinel auth-pass a b\n",
    "sentinel sentinel-pass ", "sentinel" + " " * 5000 + "auth-pass ", "\nsentinel sentinel-pass" + " a" * 2000,
    "\nsentinel auth-pass " + "a" * 5000 + "\n", "sentinel auth-pass m \"" + "\\\"" * 2000 + "\n", "SENTINEL SET a auth-pass ",
    "SENTINEL CONFIG SET sentinel-pass a ", "sentinel set a auth-pass a\n")
FRAGMENTS += LATEST_FRAGMENTS
V13_FRAGMENTS = LATEST_FRAGMENTS
# Rules version 14 (``--latest`` runs these rows alone): redis-cli's numbered replies with no command line (a reply a
# finding, one long reply, replies numbered 1 again and again, right-aligned first items, a first item not opening its
# line), RESP3's maps to a pipe, SENTINEL SET's options before auth-pass (read back 256 characters), the names in upper
# case or capitalized, a note after sentinel's value, sqlite3's list mode with another separator.
LATEST_FRAGMENTS = (
    '1) "', '\n1) "', '1) "requirepass"\n2) "a"\n', '1) "password"\n' + '2) "a"\n3) "password"\n' * 50,
    '1) "a"\n' * 50, ' ' * 8 + '1) "a"\n', ' ' * 5000 + '1) "a"\n', 'a 1) "', '1) "' + 'a' * 5000 + '\n',
    "$ redis-cli -3 hgetall a\n" + "password a\n" * 50, "$ redis-cli -3 config get a\n" + "a" * 5000 + "\n",
    '# "passwords" => ', '# "passwords" => 1) "' + "a" * 64 + '"\n', '# "passwords" => \n' + ' 1) "' + "a" * 64 + '"\n' * 50,
    "$ redis-cli -3 acl getuser a\npasswords " + "a" * 64 + "\n" + ("a" * 64 + "\n") * 50,
    "SENTINEL SET a" + " b c" * 100 + " auth-pass a\n", "SENTINEL SET a" + " b" * 200 + " auth-pass ", "a-PASS ",
    "-Pass ", "SENTINEL AUTH-PASS a b\n", "Sentinel Sentinel-Pass a\n", "REQUIREPASS a\n", "Masterauth ",
    "\nsentinel auth-pass a b # c\n", "\nsentinel auth-pass a" + " #" * 2000 + "\n",
    "sentinel auth-pass a b" + " -- c" * 1000 + "\n",
    'sqlite> .headers on\nsqlite> .separator ":"\nsqlite> a\na:password\n1:b\n',
    'sqlite> .headers on\nsqlite> .separator ";"\nsqlite> a\na;password\n' + "1;b;c;d\n" * 50,
    "sqlite> .separator a\n" * 100, '$ sqlite3 -header -separator ";" a\na;password\n' + "1;b\n" * 50,
    # sqlite3's quote and insert modes: a finding a row, a long row of literals, a row failing at its end
    "sqlite> .headers on\nsqlite> .mode quote\nsqlite> a\n'a','password'\n" + "1,'b'\n" * 50,
    "sqlite> .headers on\nsqlite> .mode quote\nsqlite> a\n'a','password'\n" + "1," * 3000 + "\n",
    "sqlite> .headers on\nsqlite> .mode quote\nsqlite> a\n'a','password'\n'" + "''" * 3000 + "\n",
    "sqlite> .headers on\nsqlite> .mode insert\nsqlite> a\n" + "INSERT INTO t(a,password) VALUES(1,'b');\n" * 50,
    "sqlite> .headers on\nsqlite> .mode insert\nsqlite> a\nINSERT INTO t(" + "a," * 3000 + "password) VALUES(1\n",
    "sqlite> .headers on\nsqlite> .mode insert\nsqlite> a\nINSERT INTO t(a,password) VALUES(" + "1," * 3000 + "\n",
    # sqlite3's html mode: a finding a row, a long header, rows of cells never closed
    "sqlite> .headers on\nsqlite> .mode html\nsqlite> a\n<TR><TH>password</TH>\n</TR>\n" + "<TR><TD>b</TD>\n</TR>\n" * 50,
    "sqlite> .headers on\nsqlite> .mode html\nsqlite> a\n<TR><TH>a</TH>\n" + "<TH>password</TH>\n" * 2000,
    "sqlite> .headers on\nsqlite> .mode html\nsqlite> a\n<TR><TH>x</TH>\n" + "<TH>token</TH>\n" * 255 + "</TR>\n",
    "sqlite> .headers on\nsqlite> .mode insert\nsqlite> a\nINSERT INTO t(x" + ",token" * 2000 + ") VALUES(1);\n",
    "sqlite> .headers on\nsqlite> .mode quote\nsqlite> a\n'x'" + ",'token'" * 2000 + "\n",
    # insert mode by a table's schema: a finding a row, a long definition, .schema's many lines, many sessions' tables
    "sqlite> create table t(a, password);\nsqlite> .mode insert t\nsqlite> a\n" + "INSERT INTO t VALUES(1,'b');\n" * 50,
    "sqlite> create table t(" + "a decimal(1,2), " * 2000 + "password);\n",
    "sqlite> .schema\n" + "CREATE TABLE t(a, password);\n" * 500, "sqlite> create table t(a" + "(" * 3000 + "\n",
    "sqlite> .mode insert t\nsqlite> create table t(a, password);\n",
    "sqlite> .headers on\nsqlite> .mode html\nsqlite> a\n<TR><TH>password</TH>\n</TR>\n<TR><TD>b</TD>\n"
    + "<TD>b</TD>\n" * 2000)
FRAGMENTS += LATEST_FRAGMENTS
V14_FRAGMENTS = LATEST_FRAGMENTS
# Rules version 15 (``--latest`` runs these rows alone): sqlite3's tcl mode (a finding a row, a long row, an escape
# repeated, a cell never closed) and ascii mode (a finding a record, a long record, unit separators with no record's
# end, records of another width), list mode's separator of many characters (a row of them, a cell holding a part of
# it), a CREATE TABLE over many lines (a finding a row, notes, one never closed, typed over ...> lines), redis's names
# in a mixed case at each line (a value a line, no value), CONFIG SET's many pairs, prose lists after bare replies.
_TCL = "sqlite> .headers on\nsqlite> .mode tcl\nsqlite> a\n"
_ASCII = "sqlite> .headers on\nsqlite> .mode ascii\nsqlite> a\n"
LATEST_FRAGMENTS = (
    _TCL + '"a" "password"\n' + '"1" "b"\n' * 50, _TCL + '"a" "password"\n' + '"1" ' * 3000 + "\n",
    _TCL + '"a" "password"\n"' + "\\\"" * 3000 + "\n", _TCL + '"a" "password"\n"' + "a" * 5000 + "\n",
    _ASCII + "a\x1fpassword\x1e" + "1\x1fb\x1e" * 50, _ASCII + "a\x1fpassword\x1e" + "1\x1f" * 3000 + "\x1e",
    _ASCII + "a\x1fpassword\x1e" + "1\x1f" * 3000 + "\n", _ASCII + "a\x1fpassword\x1e" + "1\x1e" * 100,
    _ASCII + "a" + "\x1fpassword" * 2000 + "\x1e", "$ sqlite3 -ascii -header a\n" * 50,
    'sqlite> .headers on\nsqlite> .separator " | "\nsqlite> a\na | password\n' + "1 | b\n" * 50,
    'sqlite> .headers on\nsqlite> .separator " | "\nsqlite> a\na | password\n' + "1 |" * 3000 + "\n",
    "$ sqlite3 -header -separator '::' a\na::password\n" + "1::b:" * 1000 + "\n",
    'sqlite> .separator "' + " " * 3000 + '"\n',
    "sqlite> .schema\nCREATE TABLE t (\n  a TEXT,\n  password TEXT\n);\nsqlite> .mode insert t\nsqlite> a\n"
    + "INSERT INTO t VALUES(1,'b');\n" * 50,
    "sqlite> .schema\nCREATE TABLE t (\n" + "  a TEXT, -- (x, y)\n" * 300 + ");\n",
    "sqlite> .schema\nCREATE TABLE t (\n" + "  a TEXT,\n" * 3000,
    "sqlite> CREATE TABLE t (\n" + "   ...>   a TEXT,\n" * 300 + "   ...> );\n",
    "rEquirepass a\n", "\nMasterAuth a", "\nsEntinel auth-pAss a b\n", "\nrEquirepass\n", "\nTls-Key-File-PaSS a\n",
    "127.0.0.1:6379> CONFIG SET" + " a b" * 1000 + " MasterAuth c\n", "$ redis-cli config set" + " a b" * 1000 + "\n",
    '1) "password"\n2) "a"\nb\n', '1) "password"\n2) "a"\n3) "b"\n', '  1) "password"\n  2) "a"\n',
    '1) "password"\n' + '2) "a"\n3) "b"\n' * 50 + "c\n")
FRAGMENTS += LATEST_FRAGMENTS
V15_FRAGMENTS = LATEST_FRAGMENTS
# Rules version 16 (``--latest`` runs these rows alone): bare replies not in redis-cli's shape read again (indented, a
# sentence after: a finding every pair, a long reply of them, a field's name after each name, a nested array; 16
# blanks before a first item, more than are read back, a first item that opens none), an empty value, a sentence's
# word after CONFIG SET's name, NAME::VALUE lines.
LATEST_FRAGMENTS = (
    '    1) "password"\n    2) "a1"\nb\n', '  1) "password"\n' + '  2) "a1"\n  3) "password"\n' * 2000 + "b\n",
    '  1) "password"\n  2) "email"\nb\n', '  1) "password"\n' + '  2) "refresh_token"\n  3) "password"\n' * 2000 + "b\n",
    '  1) "token"\n  2) 1) "a1"\n' + '     2) "b2"\n' * 2000 + "c\n",
    " " * 16 + '1) "password"\n' + " " * 16 + '2) "a1"\nb\n', " " * 20 + '1) "a"\n', " " * 16 + '1) "\n',
    'requirepass ""\n', "\nCONFIG SET requirepass with the a\n", "\npassword::a\n", "\nkey::" + ":" * 3000 + "\n",
    # session 29: a reply quoted in a markdown blockquote (a finding every pair, nested, a code block in the quote, a
    # long reply, a prose list's field name, a quoted command line above, a first item opening none, marks past what
    # is read back, a prompt's "> " before a first item, a lazy line every other)
    '> 1) "password"\n> 2) "a1"\n', '> 1) "\n', '> > 1) "password"\n> > 2) "a1"\nb\n',
    '>     1) "password"\n>     2) "a1"\n>\n', '> 1) "password"\n' + '> 2) "a1"\n> 3) "password"\n' * 2000 + "> b\n",
    '> 1) "password"\n> 2) "email"\n> b\n', '> a:1> LRANGE a\n> 1) "password"\n> 2) "a1"\n',
    ">" * 5000 + ' 1) "a"\n', "> " * 8 + " " * 16 + '1) "a"\n', 'a:1> 1) "password"\n2) "a1"\n',
    '> 1) "password"\n' + '2) "a1"\n> 3) "password"\n' * 2000 + "b\n",
    # session 29: 64 blanks read back before a first item (16 before): 64 blanks before one, more, a first item opening
    # none after 64 blanks, a reply of them
    " " * 64 + '1) "a"\n', " " * 80 + '1) "a"\n', " " * 64 + '1) "\n',
    " " * 64 + '1) "password"\n' + " " * 64 + '2) "a1"\nb\n',
    # session 29: redis-cli's prompt after a quote's marks (a finding a line: AUTH, HGET's reply), a quote's mark alone
    "> a:1> AUTH a\n", '> a:1> HGET a password\n> "b"\n', "> > > AUTH a\n", "> " * 8 + "a:1> AUTH a\n",
    # session 29: redis-cli's reply to a pipe under a quoted shell line (a finding every pair, HGET's one line)
    "> $ redis-cli config get a\n" + "> password\n> a\n" * 500, "> $ redis-cli hget a password\n> b\n")
FRAGMENTS += LATEST_FRAGMENTS
V16_FRAGMENTS = LATEST_FRAGMENTS
# Rules version 17 (``--latest`` runs these rows alone): a configuration line after a markdown note's marks (a finding
# a line: redis.conf's names in each case, sentinel's, an ACL file's, a .netrc's, htpasswd, .pgpass), nested marks,
# marks past what is read back, a word or a number before the name (read back, then refused), a newline and a marker
# with nothing after them (the ACL line search's marks at every line), a .netrc entry over many quoted lines, a shadow
# line after a note's mark, one after a word (read, then refused), words after blanks in a text holding ":$".
LATEST_FRAGMENTS = (
    "> requirepass a\n", "- masterauth a\n", "1. REQUIREPASS a\n", "> rEquirepass a\n", "> tls-key-file-pass a\n",
    "- sentinel auth-pass m a\n", "> > user a on >b ~* +@all\n", "1. machine a login b password c\n",
    "> a:$apr1$aaaaaaaa\n", "- a:1:b:c:d\n", "> - > 1. * requirepass a\n", ">" * 40 + " requirepass a\n",
    "- - - - - - - - - - requirepass a\n", "1234567890. requirepass a\n", "> We set requirepass a\n",
    "- 6.0 requirepass a\n", "\n- ", "\n> > > > > > > > ", "\n1. ", "\n" + "1" * 9,
    "> machine a\n" + "> login b\n" * 2000 + "> password c\n", "machine a" + "\n>" * 5000 + " password c\n",
    "> a:$6$aaaaaaaa:\n", "b a:$6$aaaaaaaa:", "a a a a a a a a a a :$",
    # session 32 (leaks32): a configuration line as a markdown code span's only words (a finding a span: redis.conf's
    # names, sentinel's, .netrc, AUTH, an ACL file's and an htpasswd line), spans opened and never closed (each
    # search for the closing backtick stops at the next), a backtick alone, a value read into a span's closing
    # backtick on one long line (the line's backticks counted back for each), after thousands of backticks.
    "`requirepass a` ", "`", "`requirepass a ", "`masterauth a`. ", "`sentinel auth-pass m a` ", "`sentinel auth-pass m ",
    "`machine a login b password c` ", "`machine a ", "`AUTH a` ", "`AUTH ", "`user a on >b ~* +@all` ", "`user a on ",
    "`a:$apr1$aaaaaaaa` ", "`PASSWORD=a` ", "PASSWORD=a` ", "`PASSWORD=a`. ", "`" * 3000 + "PASSWORD=a` ")
FRAGMENTS += LATEST_FRAGMENTS
# ansi23: terminal codes, through the scanner (a text holding ESC is read as written and as a terminal shows it):
# ESC[ repeated (an unfinished CSI), a code between every character, codes whose screen holds a finding every few
# characters (each mapped back), a credential's every character coloured, OSC bodies unterminated before a line's
# end or the next ESC, a CSI's long parameters with no final; and agent text coloured word by word.
TERMINAL_FRAGMENTS = (
    "\x1b[", "\x1b", "a\x1b[0m", "\x1b[1mpassword\x1b[0m: a\n", "".join(c + "\x1b[m" for c in "password=a "),
    "\x1b]" + "a" * 5000 + "\n", "\x1b]0;" + "a" * 100, "\x1b[" + "1;" * 1000, "\x1b(B\x1b7\x1bM", "\x1bP\x1b\\",
    "4\x1b[1m1\x1b[0m", "\x1b[01;31m\x1b[Kghp_\x1b[m\x1b[K" + "a" * 36 + "\n")
# Lists read whole: every item a credential flag (no value), flags and values, a positional command's words.
LISTS: tuple[tuple[object, ...], ...] = (("--password",), ("--password", "x"), ("--api-key", "x", "--region", "eu"),
                                         ("htpasswd", "-b", "f", "u", "p"), ("--verbose", 1.5))
# Objects the walk and a document's walk read by their members (rules version 9): each a secret to replace, or its
# look-alike (a Service's data, "sensitive": false), repeated.
OBJECTS: tuple[tuple[object, ...], ...] = (
    ({"kind": "Secret", "data": {"a": "b"}},), ({"kind": "Service", "data": {"a": "b"}},),
    ({"sensitive": True, "value": "a"},), ({"sensitive": False, "value": "a"},), ({"kind": "Secret"}, {"data": {}}))
# Rules version 10: a Terraform state's instances, their sensitive_attributes naming an attribute, naming none, and
# a long list of paths.
OBJECTS += (
    ({"attributes": {"a": "b"}, "sensitive_attributes": [[{"type": "get_attr", "value": "a"}]]},),
    ({"attributes": {"a": "b"}, "sensitive_attributes": []},),
    ({"sensitive_attributes": [[{"type": "get_attr", "value": "a"}]] * 50, "attributes": {"a": "b"}},))
# Rules version 11: terraform show -json's resources, their sensitive_values marking a member, marking none, a mirror
# nested 40 deep (past what the data walk reads), a mirror holding resources of its own, and a plan's change.
_DEEP: object = False
for _ in range(40):
    _DEEP = {"a": _DEEP}
OBJECTS += (
    ({"values": {"a": "b"}, "sensitive_values": {"a": True}},),
    ({"values": {"a": "b", "c": [1]}, "sensitive_values": {"a": False, "c": [False]}},),
    ({"values": {"a": "b"}, "sensitive_values": {"a": _DEEP}},),
    ({"values": {"a": "b"}, "sensitive_values": {"a": {"values": {"a": "b"}, "sensitive_values": {"a": _DEEP}}}},),
    ({"before": "a", "after": {"a": "b"}, "before_sensitive": True, "after_sensitive": {"a": True}},))
# Rules version 14: a coloured token beside a logprob (a model's output token), one beside none, an object of many
# coloured token keys (each would read the object's keys: bounded to small objects).
LATEST_OBJECTS: tuple[tuple[object, ...], ...] = (
    ({"\x1b[1mtoken\x1b[0m": "a", "logprob": -0.5},), ({"\x1b[1mtoken\x1b[0m": "a", "\x1b[1mlogprob\x1b[0m": -0.5},),
    ({"\x1b[1mtoken\x1b[0m": "a", "b": 1},),
    ({f"\x1b[{n}mtoken\x1b[0m": "a" for n in range(2000)},))
OBJECTS += LATEST_OBJECTS
V14_OBJECTS = LATEST_OBJECTS
LATEST_OBJECTS = ()  # rules version 15 adds no object's row, nor do 16 and 17


# Session 25: a URL nested in a query value (plain, encoded, encoded twice) and a "?" inside a query.
URL_FRAGMENTS = ("?next=https://h/x", "next=https://h/x?", "%3F", "%253F", "%25", "%3Fa=", "a=1?", "?a=%3F", "?a=1?",
                 "next=https%3A%2F%2Fh%2F%3F", "next=https%253A%252F%252Fh%252F%253F", "%3Ftoken%3D", "?token=a?",
                 "next=//u:p@h/?", "a=%2F%2Fu%3Ap%40h%2F%3F&", "?a=%25", "a=%25?")
# Session 26: a URL written in the path (an archive's /web/2020/https://u:p@h2/), plain or encoded, and marks that
# start none (no scheme letter before them).
PATH_FRAGMENTS = ("https://h/", "https://u:p@h/", "a:/", "1://", "https%3A%2F%2Fh%2F", "x%253A%252F%252F", "%3A//")
# Session 28: the same in another header's value, where each URL's path is read to the header's own grammar: a list
# of URLs each holding an encoded one, a path's bare "//" between them, an escape in each of many plain URLs, a URL in
# a query value holding one, and marks that start none.
PATH_FRAGMENTS += ("https://p/r/https%3A%2F%2Fu%3Ap%40h%2F,", "https://h/a//b/%3A", "https://h/%25",
                   "?next=https://h/r/https%3A%2F%2Fh%2F&", "https:%2F%2F", "x%3A%2F%2Fu%3Ap%40")
# ... and outside any absolute URL (a relative X-Original-URL's path, free text): the value holds no "//".
TEXT_FRAGMENTS = ("/r/https%3A%2F%2Fu%3Ap%40h%2F ", "a%3A%2F%2F", "1%3A%2F%2F", "%3A%2F%2F", "x%3A%2F%2Fa%2Fx%3A%2F%2F",
                  "a%25", "/r/https%3A%2F%2Fh%2Fcb%3Ftoken%3Da.")
# Session 30: a relative URL (read by redact_url too in a URL-named header), a nested URL's user info in a query
# (ending with its parameter), and an escape before a scheme's ":" (whose hex digits start none).
RELATIVE_FRAGMENTS = ("token=a&", "token&", "a=1;token=", "next=/r?token=a&", "next=https://u:p@h%2F&x=a@",
                      "next=//u:p&", "a=%2F1%3A%2F%2Fu%3Ap%40&", "%2F1://u:p@h/")


def _best_ms_per_mib(call: Callable[[], object], mib: float) -> float:
    """The best of three runs of ``call``, in ms per MiB of its input."""
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - start)
    return best * 1000 / mib


def _url_ms_per_mib(redact: Callable[[str], object], url: str, mib: float) -> float:
    return _best_ms_per_mib(lambda: redact(url), mib)


def _url_rows(size: int, mib: float) -> None:
    """The URL rule on hostile queries, against the same URL holding ordinary parameters."""
    def header(value: str) -> str:  # free text (x-callback-url was read so until session 30)
        return str(redact_headers({"x-debug": value})["x-debug"])

    def named(value: str) -> str:  # a URL-named header: one URL read by redact_url and as free text (session 30)
        return str(redact_headers({"x-original-url": value})["x-original-url"])

    def url_of(fragment: str, start: str = "https://h/x?") -> str:
        return start + (fragment * (size // len(fragment) + 1))[:size]

    baseline = url_of("page=2&q=a%20b&")
    url_base, header_base = _url_ms_per_mib(redact_url, baseline, mib), _url_ms_per_mib(header, baseline, mib)
    named_base = _url_ms_per_mib(named, baseline, mib)
    print(f"{'URL rule':<40} {'redact_url ms/MiB':>18} {'x':>6} {'header ms/MiB':>14} {'x':>6} "
          f"{'URL-named ms/MiB':>17} {'x':>6}")
    print(f"{'ordinary parameters (baseline)':<40} {url_base:>18.1f} {1.0:>6.2f} {header_base:>14.1f} {1.0:>6.2f} "
          f"{named_base:>17.1f} {1.0:>6.2f}")
    rows = [(repr(fragment), url_of(fragment)) for fragment in URL_FRAGMENTS]
    rows += [(f"path {fragment!r}", url_of(fragment, "https://h/")) for fragment in PATH_FRAGMENTS]
    rows += [(f"text {fragment!r}", url_of(fragment, "")) for fragment in TEXT_FRAGMENTS]
    rows += [(f"relative {fragment!r}", url_of(fragment, "/cb?")) for fragment in RELATIVE_FRAGMENTS]
    rows += [(f"absolute {fragment!r}", url_of(fragment, "https://h/x?")) for fragment in RELATIVE_FRAGMENTS[4:]]
    for name, url in rows:
        ms, header_ms = _url_ms_per_mib(redact_url, url, mib), _url_ms_per_mib(header, url, mib)
        named_ms = _url_ms_per_mib(named, url, mib)
        print(f"{name[:40]:<40} {ms:>18.1f} {ms / url_base:>6.2f} {header_ms:>14.1f} "
              f"{header_ms / header_base:>6.2f} {named_ms:>17.1f} {named_ms / named_base:>6.2f}")


def _ms_per_mib(text: str, mib: float) -> float:
    detector = CredentialsDetector()
    return _best_ms_per_mib(lambda: detector.find(text, Deadline.unlimited()), mib)


def _scanner_ms_per_mib(text: str, mib: float) -> float:
    scanner = load_policy("default").scanner
    return _best_ms_per_mib(lambda: scanner.scrub_text(text, Deadline.unlimited()), mib)


def _coloured(text: str) -> str:
    """Agent text as a coloured tool's output: each word in one of four colours, reset after it."""
    colours = ("\x1b[32m", "\x1b[1m", "\x1b[33m", "\x1b[01;34m")
    return " ".join(colours[i % 4] + word + "\x1b[0m" for i, word in enumerate(text.split(" ")))


def _list_ms_per_mib(items: list[object] | str, mib: float) -> float:
    policy = load_policy("default")
    return _best_ms_per_mib(lambda: apply_policy(policy, "tool_call", {"args": items}), mib)


def _list_of(run: tuple[object, ...], size: int) -> list[object]:
    """``run`` repeated until the list's JSON is about ``size`` bytes."""
    per_run = len(json.dumps(list(run))) - 1
    return list(run) * (size // per_run + 1)


def _terminal_rows(size: int, mib: float) -> None:
    """The scanner (every default detector) on terminal codes, against the scanner on mixed agent text."""
    scan_baseline = _scanner_ms_per_mib(mixed_text(size), mib)
    print(f"{'scanner: mixed agent text (baseline)':<40} {scan_baseline:>9.1f} {1.0:>13.2f}")
    ms = _scanner_ms_per_mib(_coloured(mixed_text(size))[:size], mib)
    print(f"{'scanner: agent text coloured by word':<40} {ms:>9.1f} {ms / scan_baseline:>13.2f}")
    # a step's list of short lines (joined by the scanner), each coloured, against the same lines plain
    agent = mixed_text(size)
    lines: list[object] = [agent[at : at + 64] for at in range(0, size, 64)]
    plain = _list_ms_per_mib(lines, mib)
    print(f"{'list of 64-character lines (baseline)':<40} {plain:>9.1f} {1.0:>13.2f}")
    ms = _list_ms_per_mib([f"\x1b[32m{line}\x1b[0m" for line in lines], mib)
    print(f"{'list of the lines, each coloured':<40} {ms:>9.1f} {ms / plain:>13.2f}")
    for fragment in TERMINAL_FRAGMENTS:
        text = (fragment * (size // len(fragment) + 1))[:size]
        ms = _scanner_ms_per_mib(text, mib)
        label = "scanner: " + (repr(fragment) if len(repr(fragment)) <= 31 else repr(fragment)[:28] + "...")
        print(f"{label:<40} {ms:>9.1f} {ms / scan_baseline:>13.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=float, default=1.0)
    parser.add_argument("--latest", action="store_true", help="only the latest rules version's rows (and baselines)")
    parser.add_argument("--terminal", action="store_true", help="only the scanner's rows on terminal codes (ansi23)")
    parser.add_argument("--urls", action="store_true", help="only the URL rule's rows (session 25)")
    args = parser.parse_args()
    if args.urls:
        _url_rows(int(args.mib * (1 << 20)), args.mib)
        return
    if args.terminal:
        _terminal_rows(int(args.mib * (1 << 20)), args.mib)
        return
    fragments, lists, objects = (LATEST_FRAGMENTS, (), LATEST_OBJECTS) if args.latest else (FRAGMENTS, LISTS, OBJECTS)
    size = int(args.mib * (1 << 20))
    baseline = _ms_per_mib(mixed_text(size), args.mib)
    print(f"{'text (repeated to ' + str(args.mib) + ' MiB)':<40} {'ms/MiB':>9} {'x agent text':>13}")
    print(f"{'mixed agent text (baseline)':<40} {baseline:>9.1f} {1.0:>13.2f}")
    for fragment in fragments:
        text = (fragment * (size // len(fragment) + 1))[:size]
        ms = _ms_per_mib(text, args.mib)
        label = repr(fragment) if len(repr(fragment)) <= 64 else repr(fragment)[:61] + "..."  # a long run's start
        print(f"{label:<40} {ms:>9.1f} {ms / baseline:>13.2f}")
    _terminal_rows(size, args.mib)
    _url_rows(size, args.mib)
    words = mixed_text(size).split(" ")
    list_baseline = _list_ms_per_mib(_list_of(tuple(words), size), args.mib)
    print(f"{'list of agent words (baseline)':<40} {list_baseline:>9.1f} {1.0:>13.2f}")
    for run in lists:
        ms = _list_ms_per_mib(_list_of(run, size), args.mib)
        print(f"{'list ' + repr(list(run)):<40} {ms:>9.1f} {ms / list_baseline:>13.2f}")
    document_baseline = _list_ms_per_mib(json.dumps(_list_of(tuple(words), size)), args.mib)
    print(f"{'document of agent words (baseline)':<40} {document_baseline:>9.1f} {1.0:>13.2f}")
    for run in lists:
        ms = _list_ms_per_mib(json.dumps(_list_of(run, size)), args.mib)
        print(f"{'document ' + json.dumps(list(run)):<40} {ms:>9.1f} {ms / document_baseline:>13.2f}")
    for run in objects:  # rules version 9 to 11: a Secret's maps, Terraform's sensitive values, as data and documents
        ms = _list_ms_per_mib(_list_of(run, size), args.mib)
        print(f"{'list ' + json.dumps(list(run))[:35]:<40} {ms:>9.1f} {ms / list_baseline:>13.2f}")
        ms = _list_ms_per_mib(json.dumps(_list_of(run, size)), args.mib)
        print(f"{'document ' + json.dumps(list(run))[:31]:<40} {ms:>9.1f} {ms / document_baseline:>13.2f}")


if __name__ == "__main__":
    main()
