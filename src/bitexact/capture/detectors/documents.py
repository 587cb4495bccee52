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
"""A resource of ``terraform show -json`` (``values.root_module.resources[]``, a child module's too): its
``sensitive_values`` object mirrors its ``values`` object, a ``true`` leaf marking a sensitive attribute; each member
of ``values`` whose mirror is ``true`` or holds a ``true`` leaf is replaced whole (rules version 11)."""


def quoted(name: str) -> str:
    """``name`` as a JSON string, as written: the literal a text must hold for a rule reading it to run."""
    return f'"{name}"'


QUOTED_SECRET_KIND: Final[str] = quoted(SECRET_KIND)
QUOTED_SECRET_MAPS: Final[tuple[str, ...]] = tuple(map(quoted, SECRET_MAPS))
QUOTED_SENSITIVE: Final[str] = quoted(SENSITIVE)
QUOTED_SENSITIVE_ATTRIBUTES: Final[str] = quoted(SENSITIVE_ATTRIBUTES)
QUOTED_SENSITIVE_VALUES: Final[str] = quoted(SENSITIVE_VALUES)
