"""Ordinary text the markdown note reading of rules version 17 (session 30, test_leak_edges30) must leave, as e0fcbf8
did.

A configuration line's first word opens its line after a blockquote's marks or a list item's marker now
(``_first_word``). What that must not change:

1. A word before the name still opens no line: in a note as outside one, ``We never set masterauth anywhere`` is prose
   (its last word would be taken as the password if the line's start were not asked). Checked by letting
   ``_first_word`` answer True whatever stands before the name: these rows then fail (the shadow line's row when its
   rule skips ``_first_word`` for a name after a blank).
2. Only a list marker is a marker: a number with a dot inside it (``6.0``) is no ``1. ``. Checked by reading back over
   the marks' characters alone (digits, ``.``, ``-``, ``>``, blanks) without matching them as marks: these rows fail.
3. The rest of each rule reads the line as without the marks: a value that does not end the line, a heading's or a
   state's word, a type, a sentence after a capitalized sentinel name, a ``user`` line with another word, a ``#``
   comment, a .netrc head in prose. Checked by leaving ``_heading`` on ``_starts_a_line`` (``- Requirepass Basics``
   then fails: the heading rule must see the line's start where the password rule sees it).
"""

from __future__ import annotations

import pytest

from capture.support import scrubbed


@pytest.mark.parametrize("text", [
    # 1. a word before the name, its value ending the line
    "> We never set masterauth anywhere\n",
    "- Replicas read masterauth first\n",
    "1. Check requirepass first\n",
    "> > Then rotate the requirepass afterwards\n",
    "* Only the sentinel auth-pass mymaster matters\n",
    "- We connect scott/tiger@orcl\n",
    "> see root:$6$saltsalt$abcdefghijklmnopqrstuv:19000:\n",
    # 2. a number that is no list marker
    "- 6.0 masterauth behaviour\n",
    "> 7.0 requirepass changes\n",
    "2.5 requirepass timeouts\n",
    # 3. the rule's own reading, after the marks
    "> requirepass is the setting you want\n",
    "* masterauth must match requirepass on replicas.\n",
    "- Requirepass Basics\n",
    "> Masterauth configured\n",
    "- REQUIREPASS yes\n",
    "1. RequirePass *string\n",
    "> Sentinel auth-pass must match the master's requirepass.\n",
    "- user alice on the team\n",
    "> # requirepass foobared\n",
    "> machine learning password reset flow\n",
    "- the default password is printed\n",
    "> requirepass \"\"\n",
])
def test_prose_in_a_note_is_kept(text: str) -> None:
    assert scrubbed(text) == text
