"""The capture policy: what the record keeps of each field, applied before anything is written.

The recording layer calls :func:`load_policy` once at start (a policy that
cannot be used raises :class:`PolicyError`, and the process refuses to
record) and :func:`apply_policy` for every step. See docs/capture.md.
"""

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bitexact.capture.apply import Captured, apply_policy, reassemble, scrub_stream, scrub_text
    from bitexact.capture.block import (
        HASH_ONLY_PLACEHOLDER,
        WITHHELD_KEY,
        WITHHELD_PLACEHOLDER,
        open_field,
        open_withheld,
        withheld_digest,
    )
    from bitexact.capture.errors import (
        CaptureInputError,
        CaptureKeyMismatchError,
        FieldNotOpenableError,
        HintError,
        PolicyError,
        ScrubFailedError,
    )
    from bitexact.capture.hints import check_source_fields, parse_custody
    from bitexact.capture.logs import CaptureLogFilter
    from bitexact.capture.policy import CapturePolicy, load_policy, parse_policy, read_policy_file
    from bitexact.capture.rules import GOVERNED_KINDS
    from bitexact.capture.urls import redact_headers, redact_query, redact_url

__all__ = [
    "GOVERNED_KINDS",
    "HASH_ONLY_PLACEHOLDER",
    "WITHHELD_KEY",
    "WITHHELD_PLACEHOLDER",
    "CaptureInputError",
    "CaptureKeyMismatchError",
    "CaptureLogFilter",
    "CapturePolicy",
    "Captured",
    "FieldNotOpenableError",
    "HintError",
    "PolicyError",
    "ScrubFailedError",
    "apply_policy",
    "check_source_fields",
    "load_policy",
    "open_field",
    "open_withheld",
    "parse_custody",
    "parse_policy",
    "read_policy_file",
    "reassemble",
    "redact_headers",
    "redact_query",
    "redact_url",
    "scrub_stream",
    "scrub_text",
    "withheld_digest",
]

# Submodules load on first use of one of their names: the detectors compile their patterns
# on import (about 0.1 s), which a verifier reading the capture clause never needs.
_HOMES: dict[str, str] = {
    name: module
    for module, names in {
        "apply": ("Captured", "apply_policy", "reassemble", "scrub_stream", "scrub_text"),
        "block": ("HASH_ONLY_PLACEHOLDER", "WITHHELD_KEY", "WITHHELD_PLACEHOLDER", "open_field", "open_withheld",
                  "withheld_digest"),
        "errors": ("CaptureInputError", "CaptureKeyMismatchError", "FieldNotOpenableError", "HintError",
                   "PolicyError", "ScrubFailedError"),
        "hints": ("check_source_fields", "parse_custody"),
        "logs": ("CaptureLogFilter",),
        "policy": ("CapturePolicy", "load_policy", "parse_policy", "read_policy_file"),
        "rules": ("GOVERNED_KINDS",),
        "urls": ("redact_headers", "redact_query", "redact_url"),
    }.items()
    for name in names
}


def __getattr__(name: str) -> object:
    module = _HOMES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # the next lookup is a plain attribute
    return value
