"""Credential shapes: secrets recognized by their own form, wherever they stand, with no name beside them.

One table for the capture policy's credentials detector and the session artifact's redaction
(:mod:`bitexact.sessions.unify.redact`): tokens a vendor issues with a fixed prefix, and PEM
private keys. A shape starts at a word boundary (``task-`` holds no ``sk-`` key) and is long
enough that ordinary text does not take its form.
"""

from __future__ import annotations

from typing import Final

SEPARATED_SHAPES: Final[tuple[str, ...]] = (
    # GitHub: personal, OAuth, user, server and refresh tokens; fine-grained tokens. GitLab tokens.
    r"g(?:h[pousr]_[A-Za-z0-9]{36,255}+|ithub_pat_[A-Za-z0-9_]{22,255}+|lpat-[A-Za-z0-9_-]{20,}+)",
    # Anthropic and OpenAI API keys; Stripe secret keys.
    r"sk(?:-(?:ant-|proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}+|_(?:live|test)_[A-Za-z0-9]{16,}+)",
    r"rk_(?:live|test)_[A-Za-z0-9]{16,}+",  # Stripe restricted keys
    r"xox[abposr]-[A-Za-z0-9-]{10,}+",  # Slack tokens
    r"hf_[A-Za-z0-9]{30,}+",  # Hugging Face access tokens
)
"""Shapes whose every token holds a literal ``_`` or ``-`` (in its prefix): a text holding neither
holds none of them."""
SEPARATOR_FREE_SHAPES: Final[tuple[str, ...]] = (
    r"A(?:KIA[0-9A-Z]{16}|SIA[0-9A-Z]{16}|Iza[0-9A-Za-z_-]{35})",  # AWS access key ids, Google API keys
    r"hv[sbr]\.[A-Za-z0-9_-]{24,}+",  # HashiCorp Vault service, batch and recovery tokens
    # A JSON Web Token: base64url of '{"' opens its header and payload; the signature may be empty (alg none).
    # Its word boundary is checked right after "eyJ" and every run is possessive, so 1 MiB of "eyJeyJ..." is
    # not read to its end from each "eyJ" (a quadratic search; a boundary checked after the match was too late).
    r"eyJ(?:(?<![A-Za-z0-9_-]eyJ)|(?<=\\[nrtbf]eyJ))[A-Za-z0-9_-]{8,256}+\.eyJ[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]*+",
)
TOKEN_SHAPES: Final[tuple[str, ...]] = SEPARATED_SHAPES + SEPARATOR_FREE_SHAPES
"""Whole tokens, each replaced whole; grouped by first letter. Each starts with literal text, so a
regex search for it skips through text that holds none (0.3-0.8 ms/MiB a pattern; one alternation
of them all took 11)."""

BOUNDARY: Final[str] = r"(?:(?<![A-Za-z0-9_-])|(?<=\\[nrtbf]))"
"""What must stand before a shape: no letter, digit, ``_`` or ``-`` (it would be the tail of a longer
word), or a written escape (``\\n``, as a log line or a repr writes a newline)."""

PEM_BEGIN: Final[str] = r"-----BEGIN [A-Z ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
PEM_END: Final[str] = r"-----END [A-Z ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
"""A private key's armour lines: PEM's (``-----BEGIN RSA PRIVATE KEY-----``) and OpenPGP's, whose armour says
``BLOCK`` (``-----BEGIN PGP PRIVATE KEY BLOCK-----``, what ``gpg --export-secret-keys --armor`` prints)."""
PEM_PRIVATE_KEY: Final[str] = PEM_BEGIN + r"(?:[^-]|-(?!----BEGIN ))*?" + PEM_END
"""A PEM private key block, armour lines included. Its body never runs past another BEGIN line: 1 MiB
of BEGIN lines with no END, each read to the end of the text, took quadratic time (9 s for 200 KB)."""
