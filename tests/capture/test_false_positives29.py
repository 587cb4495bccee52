"""Ordinary text the blockquote reading of rules version 16 (session 29, test_leak_edges29) must leave, as bb92ba2 did.

A reply quoted in a markdown blockquote is read after its quote's marks. What a quote's marks must not change:

1. A numbered list in prose of quoted field names keeps its field names when quoted (``> 1) "password"`` / ``> 2)
   "email"``): a quoted reply is a paste, never redis-cli's own print, so the prose-list rule (``_names_another_field``)
   applies to it whatever follows it, a quoted sentence included (``> Both are required.`` opens with ``>``, not a
   letter, and would pass redis-cli's shape check, which takes every value under a credential name).
2. A list of members quoted under the quoted line of the command that printed it (``> 127.0.0.1:6379> LRANGE fields
   0 -1``) names no value, as unquoted (fp26).
3. redis-cli's prompt ends in ``> `` too: a line where it stands before ``1) "`` is no quote (its marks must open the
   line, ``>`` and blanks only). Checked by reading any text before a ``>`` as a quote's marks: these rows then fail.
   Rows 1 fail when a quoted reply may be in redis-cli's shape, rows 2 when the line above is read with its marks.
"""

from __future__ import annotations

import pytest

from capture.support import scrubbed


@pytest.mark.parametrize("text", [
    # 1. a prose list of field names, quoted: a sentence after it in the quote, none, outside it, nested, a code block
    '> The sign-up form asks for:\n> 1) "password"\n> 2) "email"\n> Both are required.\n',
    '> 1) "password"\n> 2) "email"\n',
    '> 1) "password"\n> 2) "email"\n\nBoth are required.\n',
    '> > 1) "password"\n> > 2) "password_confirmation"\n> > Both must match.\n',
    '>1) "token"\n>2) "expires_in"\n>as JSON.\n',
    '> Fields:\n>\n>     1) "api_key"\n>     2) "client_secret"\n>     3) "redirect_uri"\n>\n> That is the form.\n',
    '> 1) "Password"\n> 2) "Email"\n> 3) "Username"\n',
    # fp26's shapes, quoted: a name holding a blank, a first string opening "user " that is no ACL LIST line
    '> 1) "Use an API key"\n> 2) "Use OAuth"\n',
    '> 1) "user guide >= v2"\n> 2) "faq"\n',
    # 2. members under their quoted command's line
    '> 127.0.0.1:6379> LRANGE fields 0 -1\n> 1) "password"\n> 2) "hunter"\n> 3) "token"\n> 4) "blue"\n',
    '> $ redis-cli --no-raw smembers names\n> 1) "secret"\n> 2) "ocean"\n',
    # 3. a prompt's "> " is no quote mark
    '127.0.0.1:6379> 1) "password"\n2) "ocean"\n',
    'redis /tmp/redis.sock> 1) "secret"\n2) "ocean"\n',
    # a quote's mark is no prompt: a command quoted in prose, with no HOST:PORT, names nothing typed at redis-cli
    '> AUTH is sent first\n> AUTH default\n', '>> HSET h password field\n',
])
def test_quoted_prose_is_kept(text: str) -> None:
    assert scrubbed(text) == text
