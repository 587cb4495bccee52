"""Ordinary text the code span reading of rules version 17 (session 32, leaks32; test_leak_edges32) must leave, as
26a320a did (every row passes there too).

A configuration line's first word may stand after a markdown code span's opening backtick now, and the span's
closing backtick ends its line. What that must not change:

1. A name a span holds alone, or a span holding a sentence, is prose: the value must end at the closing backtick,
   as it must end a line. Checked by letting ``_span_value`` take the value whatever follows it: ``Run `requirepass
   foo bar` nowhere`` then fails (the sentences' ``is`` and ``must`` are left by ``_prose_after_name`` as well).
2. Only an opening backtick opens a span: one right after a word closes one (``a`requirepass x` ``). Checked by
   letting ``_opens_span`` answer True after any backtick: that row fails.
3. The rules' own readings hold in a span: a heading's or a state's word after a capitalized name (``_heading`` asks
   ``_opens_span`` too; checked by leaving it on ``_first_word`` alone: those rows fail), a reference
   (``${REDIS_PASSWORD}`` followed by the backtick; checked by taking the backtick out of ``_AFTER_REFERENCE``),
   sentinel's master name with no value, a sentence after sentinel's name in any case (a span is written by hand:
   ``_hand_written_words`` asked of the lower case too; checked by asking it as before: that row fails), a .netrc
   head in prose.
4. ``AUTH`` is read in a span in upper case only, a lone SMTP mechanism left: a lower-case ``auth`` is as often prose
   or a PAM line. Checked by searching ``auth`` too, and by dropping the mechanism test: those rows fail.
"""

from __future__ import annotations

import pytest

from capture.support import scrubbed


@pytest.mark.parametrize("text", [
    # 1. a name alone in its span, a span holding a sentence
    "The setting is `requirepass`, see docs.\n",
    "the `requirepass` directive sets it\n",
    "`requirepass` is off by default\n",
    "`requirepass is off by default`\n",
    "Note that `masterauth must match requirepass` on replicas.\n",
    "Run `requirepass foo bar` nowhere\n",
    "`machine h login u password` names the fields\n",
    "A `user alice` line with `user alice on` enables her\n",
    # 2. a backtick after a word closes a span
    "see a`requirepass hunter2` here\n",
    "and `x`requirepass hunter2` too\n",
    # 3. the rules' own readings, in a span
    "## `Requirepass Basics`\n",
    "Is `Masterauth configured` yet?\n",
    "`REQUIREPASS yes` is no password\n",
    "Set `requirepass ${REDIS_PASSWORD}` from the environment\n",
    "Use `sentinel auth-pass mymaster` to name the master\n",
    "lower-case `sentinel auth-pass must match the master's requirepass.` is read\n",
    "`machine learning` is fun, and so is `machine h`\n",
    # 4. AUTH: lower case, a mechanism's name alone
    "The `auth token` header and the `auth middleware`\n",
    "Add `auth required pam_unix.so` to /etc/pam.d/sshd\n",
    "The server offers `AUTH PLAIN` and `AUTH LOGIN`.\n",
    "The `AUTH` command takes a password\n",
])
def test_prose_around_a_code_span_is_kept(text: str) -> None:
    assert scrubbed(text) == text
