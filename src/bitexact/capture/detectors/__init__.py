"""The detectors: each reads text and names the spans it replaces.

``pan`` (card numbers), ``iban``, ``credentials``, ``us_ssn``, ``email`` and
``custom`` patterns. :func:`build` turns a policy's normalized detector
configuration into detector objects, in a fixed order (that order breaks
ties when two detectors claim the same span).
"""

from __future__ import annotations

import re

from typing import Any

from bitexact.capture.detectors.base import Detector, Finding, ascii_digits, ascii_lower
from bitexact.capture.detectors.credentials import (
    CREDENTIAL_KEYS,
    CredentialsDetector,
    holds_credential,
    is_credential_name,
)
from bitexact.capture.detectors.digits import PanIbanDetector
from bitexact.capture.detectors.custom import CustomDetector, PatternRefused, validate_name, validate_pattern
from bitexact.capture.detectors.email import EmailDetector
from bitexact.capture.detectors.iban import IbanDetector, iban_ok
from bitexact.capture.detectors.pan import PanDetector, is_pan, luhn_ok
from bitexact.capture.detectors.ssn import SsnDetector

BUILTIN = ("pan", "iban", "credentials", "us_ssn", "email")
ORDER = (*BUILTIN, "custom")


def build(config: dict[str, Any]) -> tuple[Detector, ...]:
    """Detector objects for a normalized configuration (see ``policy.normalize_detectors``)."""
    built: list[Detector] = []
    if "pan" in config and "iban" in config:
        # One pass finds the sites of both (see detectors/digits.py).
        built.append(PanIbanDetector(PanDetector(keep_last4=config["pan"]["keep_last4"]), IbanDetector()))
    elif "pan" in config:
        built.append(PanDetector(keep_last4=config["pan"]["keep_last4"]))
    elif "iban" in config:
        built.append(IbanDetector())
    if "credentials" in config:
        built.append(CredentialsDetector())
    if "us_ssn" in config:
        built.append(SsnDetector(require_context=config["us_ssn"]["require_context"]))
    if "email" in config:
        built.append(EmailDetector())
    customs = config.get("custom", [])
    # The tokens this policy writes: a custom pattern never reads inside one (see CustomDetector).
    names = ["PAN", "IBAN", "CREDENTIAL", "SSN", "EMAIL", *(entry["name"].upper() for entry in customs)]
    tokens = re.compile(rf"\[(?:PAN \*{{4}}\d{{4}}|{'|'.join(map(re.escape, names))})\]")
    for entry in customs:
        built.append(CustomDetector(entry["name"], entry["pattern"], tokens=tokens))
    return tuple(built)


__all__ = [
    "BUILTIN",
    "CREDENTIAL_KEYS",
    "ORDER",
    "CredentialsDetector",
    "CustomDetector",
    "Detector",
    "EmailDetector",
    "Finding",
    "IbanDetector",
    "PanDetector",
    "PanIbanDetector",
    "PatternRefused",
    "SsnDetector",
    "ascii_digits",
    "ascii_lower",
    "build",
    "holds_credential",
    "iban_ok",
    "is_credential_name",
    "is_pan",
    "luhn_ok",
    "validate_name",
    "validate_pattern",
]
