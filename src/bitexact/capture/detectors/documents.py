"""The names of the structured documents whose members the credentials rule reads by their place, not by their
key's name: a Kubernetes Secret (rules version 8, as data from version 9) and Terraform's sensitive values
(version 9), state instances (version 10) and ``terraform show -json``'s resources (version 11).

One spelling for the three readers of them: the data walk (:mod:`bitexact.capture.walk`), the JSON documents found
in text (:mod:`bitexact.capture.scan`) and JSON written inside text (:mod:`bitexact.capture.detectors.credentials`).
"""

from __future__ import annotations

from typing import Final

SECRET_KIND: Final[str] = "Secret"
"""A Kubernetes Secret's ``kind``."""
SECRET_MAPS: Final[tuple[str, ...]] = ("data", "stringData")
"""A Kubernetes Secret's (``kind: Secret``) maps: every value in them is a secret, whatever its key."""
SENSITIVE: Final[str] = "sensitive"
"""Terraform's flag (``terraform output -json``, a state file's ``outputs``): ``"sensitive": true`` beside
``"value": X`` makes X a secret, whatever its type (rules version 9)."""
SENSITIVE_ATTRIBUTES: Final[str] = "sensitive_attributes"
ATTRIBUTES: Final[str] = "attributes"
"""A Terraform state's resource instance (``resources[].instances[]``): its ``sensitive_attributes`` paths
(``[[{"type": "get_attr", "value": "password"}]]``) name the members of its ``attributes`` that are secrets, each
replaced whole by the first step of its path (rules version 10)."""

SENSITIVE_VALUES: Final[str] = "sensitive_values"
VALUES: Final[str] = "values"
BEFORE_SENSITIVE: Final[str] = "before_sensitive"
AFTER_SENSITIVE: Final[str] = "after_sensitive"
MIRRORED: Final[dict[str, str]] = {SENSITIVE_VALUES: VALUES, BEFORE_SENSITIVE: "before", AFTER_SENSITIVE: "after"}
"""``terraform show -json``'s mirrors, each beside the member it mirrors (rules version 11): a resource's
``sensitive_values`` beside its ``values`` (``values.root_module.resources[]``, a plan's ``planned_values`` and
``prior_state``), a plan's change's ``before_sensitive`` / ``after_sensitive`` beside its ``before`` / ``after``
(``resource_changes[].change``, ``output_changes``). A mirror's ``true`` leaf marks a sensitive attribute: each member
whose mirror is ``true`` or holds a ``true`` leaf is replaced whole, and a mirror that is ``true`` itself marks the
whole member it mirrors."""
MIRRORS: Final[frozenset[str]] = frozenset(MIRRORED)
MIRRORED_VALUES: Final[frozenset[str]] = frozenset(MIRRORED.values())


def quoted(name: str) -> str:
    """``name`` as a JSON string, as written: the literal a text must hold for a rule reading it to run."""
    return f'"{name}"'


QUOTED_SECRET_KIND: Final[str] = quoted(SECRET_KIND)
QUOTED_SECRET_MAPS: Final[tuple[str, ...]] = tuple(map(quoted, SECRET_MAPS))
QUOTED_SENSITIVE: Final[str] = quoted(SENSITIVE)
QUOTED_SENSITIVE_ATTRIBUTES: Final[str] = quoted(SENSITIVE_ATTRIBUTES)
QUOTED_SENSITIVE_VALUES: Final[str] = quoted(SENSITIVE_VALUES)
QUOTED_SENSITIVE_END: Final[str] = '_sensitive"'
"""The end of ``"before_sensitive"`` and ``"after_sensitive"`` as written: one search for both."""
