"""XML elements and attributes: a credential-named element's text or CDATA, name/value attributes.

docs/capture.md: "XML elements and attributes".
"""

from __future__ import annotations

import re
from typing import Final

from bitexact.capture.detectors.credentials.names import (
    ALREADY_TOKENS,
    VALUE_MEMBERS,
    _unless_reference,
    names_credential,
)


# An XML element named as a credential (<wsse:Password Type="...">x</wsse:Password>): its text.
_OPEN_TAG_PART = r"<((?:[A-Za-z_][\w.-]{0,40}:)?([A-Za-z_][\w.-]{0,95}))(?:[ \t\r\n][^<>\x00]{0,1024})?>"
_ELEMENT = re.compile(_OPEN_TAG_PART + r"([^<\x00]{1,4096})</\1>")
# ... or what its CDATA section holds (<password><![CDATA[x]]></password>), found from the section's start:
# the open tag just before it, read back from its ">". Not one pattern with _ELEMENT: a lazy search for
# "]]>" from every element's start read 4 KiB each time (1 MiB of "<password><![CDATA[": 2.2 s).
_CDATA = "<![CDATA["
_OPEN_TAG = re.compile(_OPEN_TAG_PART + r"\Z")
_MAX_OPEN_TAG: Final[int] = 1200
_MAX_CDATA: Final[int] = 4096
_XML_SPACE = " \t\r\n"


# Rules version 8: an XML element's attributes read as a name/value object (.NET's appSettings ``<add key="Password"
# value="x"/>``, Spring's and Ant's ``<property name="password" value="x"/>``, Java's properties XML ``<entry
# key="api_key">x</entry>``): the tag's name, then each attribute, its value quoted.
_TAG_NAME = re.compile(r"<([A-Za-z_][\w.:-]{0,95}+)[ \t\r\n]")
_ATTRIBUTE = re.compile(r"""[ \t\r\n]++([A-Za-z_][\w.:-]{0,95}+)[ \t\r\n]*+=[ \t\r\n]*+(?:"([^"<>\x00]*+)"|'([^'<>\x00]*+)')""")
_ELEMENT_TEXT = re.compile(r"[^<\x00]{1,4096}+")
_ATTRIBUTE_NAMES: Final[frozenset[str]] = frozenset({"name", "Name", "key", "Key"})
"""The attributes naming an element's variable (.NET's ``key``, Spring's and Ant's ``name``)."""


def _attribute_pair(text: str, start: int, at: int) -> tuple[int, tuple[int, int] | None] | None:
    """The attribute named at ``start`` (its ``=`` at ``at``) as a member of a name/value element: when its tag
    has a name attribute (:data:`_ATTRIBUTE_NAMES`) naming a credential (:func:`names_credential`), where the tag
    opens and the span of its value (the ``value`` attribute's, or, with none, the element's text up to its
    closing tag; ``None`` when that holds nothing to replace). ``None`` when the attribute is no part of such an
    element (``key="x"`` is then read as the table word it is). The tag is looked for back and forth within
    :data:`_MAX_OPEN_TAG` characters (two searches in C)."""
    if start == 0 or text[start - 1] not in _XML_SPACE:
        return None
    opened = text.rfind("<", max(0, start - _MAX_OPEN_TAG), start)
    if opened == -1 or text.find(">", opened, start) != -1:
        return None
    closed = text.find(">", at, opened + _MAX_OPEN_TAG)
    tag = _TAG_NAME.match(text, opened, closed) if closed != -1 else None
    if tag is None:
        return None
    named, value = False, None
    for attribute in _ATTRIBUTE.finditer(text, tag.end() - 1, closed):
        group = 2 if attribute.group(2) is not None else 3
        if attribute.group(1) in VALUE_MEMBERS:
            value = attribute.span(group)
        elif attribute.group(1) in _ATTRIBUTE_NAMES and names_credential(attribute.group(group)):
            named = True
    if not named:
        return None
    if value is None and text[closed - 1] != "/":  # <entry key="api_key">x</entry>: the element's text
        inner = _ELEMENT_TEXT.match(text, closed + 1)
        if inner is not None and text.startswith(f"</{tag.group(1)}>", inner.end()):
            value = inner.span()
        else:  # rules version 9: .NET's <setting name="Password" serializeAs="String"><value>x</value></setting>
            value = _value_element(text, closed + 1 if inner is None else inner.end())
    if value is None or value[0] == value[1] or text[value[0] : value[1]].strip() in ALREADY_TOKENS:
        return opened, None
    return opened, _unless_reference(text, value)


_VALUE_OPEN = re.compile(r"<([Vv]alue)(?:[ \t\r\n][^<>\x00]{0,1024}+)?(?<!/)>")
"""A setting's value element's open tag: ``<value>`` (applicationSettings) or, rules version 10, ``<Value
Profile="(Default)">`` (a Visual Studio ``.settings`` file)."""


def _value_element(text: str, at: int) -> tuple[int, int] | None:
    """The text's span of a ``<value>`` element opening at ``at`` (white space only before it), as .NET's
    applicationSettings write a setting's value (rules version 9), or a ``.settings`` file's ``<Value
    Profile="(Default)">`` (rules version 10); None when none opens there, or it holds another element. An empty
    one (``<value />``, ``<value></value>``) holds nothing to replace."""
    if text[at : at + 1] in _XML_SPACE:
        at = _past_space(text, at)
    opened = _VALUE_OPEN.match(text, at)
    if opened is None:
        return None
    inner = _ELEMENT_TEXT.match(text, opened.end())
    if inner is None or not text.startswith(f"</{opened.group(1)}>", inner.end()):
        return None
    return inner.span()


def _past_space(text: str, at: int) -> int:
    """The position after the XML white space at ``at`` (at most :data:`_MAX_OPEN_TAG` characters read)."""
    end = min(len(text), at + _MAX_OPEN_TAG)
    while at < end and text[at] in _XML_SPACE:
        at += 1
    return at
