"""Credential shapes: secrets recognized by their own form, wherever they stand, with no name beside them.

One table for the capture policy's credentials detector and the session artifact's redaction
(:mod:`bitexact.sessions.unify.redact`): tokens a vendor issues with a fixed prefix, and PEM
private keys. A shape starts at a word boundary (``task-`` holds no ``sk-`` key) and is long
enough that ordinary text does not take its form.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True)
class Shape:
    """A token shape, written as the literal character every token of it holds (its *mark*), what stands
    before that character and what follows it: ``ghp_…`` is ``gh[pousr]``, ``_``, ``[A-Za-z0-9]{36,255}+``.

    A search opening with a rare literal character skips through text in C; one opening with a common letter
    (``n`` of ``npm_``, ``s`` of ``sk-``) stops at every such letter (about 1 ms/MiB of prose each). The
    detector searches each mark's shapes as one pattern opening with the mark, ``before`` read as a
    look-behind (:attr:`search`), and skips the pattern when the text holds no such character."""

    before: str
    """A pattern of fixed width: what stands before the mark (``gh[pousr]``, ``sk``, or nothing)."""
    mark: str
    """The one literal character (``_``, ``-``, ``.``, ``A``, ``J``)."""
    rest: str
    """The pattern after the mark."""
    width: int
    """How many characters ``before`` matches (tests/capture/test_shape_tables.py checks it against ``before``)."""
    keep: str | None = None
    """For a token that stands inside a longer form (a webhook URL's last part, a Telegram bot's token after
    the bot's id), what of the form stays as written: a pattern (no capturing group) matched right after the mark,
    the token being what ``rest`` matches after it; or, empty, what ``before`` matched, the token opening at the
    mark. The form itself stands for the word boundary, which is not checked."""

    @property
    def pattern(self) -> str:
        """The whole token, from its first character: what the session redaction searches for."""
        return self.before + re.escape(self.mark) + (self.keep or "") + self.rest

    @property
    def kept(self) -> str:
        """For a shape with :attr:`keep`, the pattern of the form's part that stays (the session redaction keeps
        it before its mask)."""
        return self.before + (re.escape(self.mark) + self.keep if self.keep else "")

    @property
    def token(self) -> str:
        """For a shape with :attr:`keep`, the pattern of the token after :attr:`kept`."""
        return (self.rest if self.keep else re.escape(self.mark) + self.rest)

    @property
    def search(self) -> str:
        """The token from its mark, ``before`` a look-behind: the match opens at the mark, ``width`` past the
        token's start."""
        lookbehind = f"(?<={self.before}{re.escape(self.mark)})" if self.before else ""
        return lookbehind + (self.keep or "") + self.rest


SHAPES: Final[tuple[Shape, ...]] = (
    # GitHub: personal, OAuth, user, server and refresh tokens; fine-grained tokens.
    Shape("gh[pousr]", "_", r"[A-Za-z0-9]{36,255}+", 3),
    Shape("github", "_", r"pat_[A-Za-z0-9_]{22,255}+", 6),
    Shape("[sr]k", "_", r"(?:live|test)_[A-Za-z0-9]{16,}+", 2),  # Stripe secret and restricted keys
    Shape("hf", "_", r"[A-Za-z0-9]{30,}+", 2),  # Hugging Face access tokens
    Shape("npm", "_", r"[A-Za-z0-9]{36}(?![A-Za-z0-9])", 3),  # npm access tokens: exactly 36 after npm_
    Shape("glpat", "-", r"[A-Za-z0-9_-]{20,}+", 5),  # GitLab personal access tokens
    # Anthropic and OpenAI API keys.
    Shape("sk", "-", r"(?:ant-|proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}+", 2),
    Shape("xox[abposr]", "-", r"[A-Za-z0-9-]{10,}+", 4),  # Slack tokens
    Shape("hv[sbr]", ".", r"[A-Za-z0-9_-]{24,}+", 3),  # HashiCorp Vault service, batch and recovery tokens
    # Google OAuth access tokens: base64url, a dot between parts (ya29.c.…, a service account's) but not last.
    Shape("ya29", ".", r"[A-Za-z0-9_-](?:[A-Za-z0-9_-]|\.(?=[A-Za-z0-9_-])){29,}+", 4),
    Shape("SG", ".", r"[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])", 2),  # SendGrid API keys
    Shape("", "A", r"(?:KIA[0-9A-Z]{16}|SIA[0-9A-Z]{16}|Iza[0-9A-Za-z_-]{35})", 0),  # AWS key ids, Google API keys
    # A JSON Web Token: base64url of '{"' opens its header and payload; the signature may be empty (alg none).
    # Its word boundary is checked right after "eyJ" and every run is possessive, so 1 MiB of "eyJeyJ..." is
    # not read to its end from each "eyJ" (a quadratic search; a boundary checked after the match was too late).
    Shape("ey", "J", r"(?:(?<![A-Za-z0-9_-]eyJ)|(?<=\\[nrtbf]eyJ))[A-Za-z0-9_-]{8,256}+\.eyJ[A-Za-z0-9_-]{8,}+"
          r"\.[A-Za-z0-9_-]*+", 2),
    # Rules version 7: the vendors' documented forms, each long enough that no prose takes it.
    Shape("gsk", "_", r"[A-Za-z0-9]{48,}+", 3),  # Groq API keys: gsk_ + 52
    Shape("tvly", "-", r"(?:dev-|prod-)?[A-Za-z0-9]{30,}+", 4),  # Tavily API keys: tvly-[dev-] + 32
    Shape("r8", "_", r"[A-Za-z0-9]{32,}+", 2),  # Replicate API tokens: r8_ + 37
    Shape("pplx", "-", r"[A-Za-z0-9]{40,}+", 4),  # Perplexity API keys: pplx- + 48
    Shape("xai", "-", r"[A-Za-z0-9]{70,}+", 3),  # xAI API keys: xai- + 80
    Shape("lsv2", "_", r"(?:pt|sk)_[A-Za-z0-9]{32}_[A-Za-z0-9]{10}(?![A-Za-z0-9])", 4),  # LangSmith: lsv2_pt_ / lsv2_sk_
    Shape("pcsk", "_", r"[A-Za-z0-9_]{40,}+", 4),  # Pinecone API keys: pcsk_ + id _ + secret
    Shape("whsec", "_", r"[A-Za-z0-9+/]{24,}+={0,2}", 5),  # Stripe (and Svix) webhook signing secrets
    Shape("xapp", "-", r"[0-9]-[A-Z0-9]{8,}+-[0-9]{10,}+-[a-f0-9]{32,}+", 4),  # Slack app-level tokens
    Shape("pypi", "-", r"AgE[A-Za-z0-9_-]{50,}+", 4),  # PyPI API tokens: a macaroon, pypi-AgEIcHlwaS5vcmc…
    Shape("do[por]", "_", r"v1_[a-f0-9]{64}(?![A-Za-z0-9])", 3),  # DigitalOcean: dop_v1_ / doo_v1_ / dor_v1_ + 64
    Shape("shp(?:at|ss|ca|pa)", "_", r"[a-fA-F0-9]{32}(?![A-Za-z0-9])", 5),  # Shopify access tokens: + 32 hex
    Shape("glrt", "-", r"[A-Za-z0-9_-]{20,}+", 4),  # GitLab runner authentication tokens
    Shape("figd", "_", r"[A-Za-z0-9_-]{38,}+", 4),  # Figma personal access tokens
    Shape("", "A", r"TATT3[A-Za-z0-9_=-]{100,}+", 0),  # Atlassian API tokens: ATATT3xFfGF0… (about 190)
    Shape("lin", "_", r"api_[A-Za-z0-9]{32,}+", 3),  # Linear API keys: lin_api_ + 40
    Shape("ntn", "_", r"[A-Za-z0-9]{46}(?![A-Za-z0-9])", 3),  # Notion integration tokens: ntn_ + 46 (50 in all)
    Shape("secret", "_", r"[A-Za-z0-9]{43}(?![A-Za-z0-9])", 6),  # Notion's older form: secret_ + 43 (50 in all)
    # Webhook URLs whose last part is the secret: Slack's incoming webhooks, Discord's (the host and the ids stay).
    Shape(r"hooks\.slack\.com/services", "/", r"[A-Za-z0-9]{20,}+", 24,
          keep=r"T[A-Z0-9]{6,12}/B[A-Z0-9]{6,12}/"),
    Shape("webhooks", "/", r"[A-Za-z0-9_-]{40,}+", 8, keep=r"[0-9]{17,20}/"),
    # A Telegram bot's token: the bot's id, a colon, 34 or 35 base64url characters opening "AA" (the id stays;
    # Telegram's own documentation writes 34, BotFather issues 35).
    # Searched from its first "A", a rarer character than JSON's ":" (a colon per key cost 0.6 ms/MiB of JSON).
    Shape("[0-9]{6}:", "A", r"A[A-Za-z0-9_-]{32,33}(?![A-Za-z0-9_-])", 7, keep=""),
)
"""Whole tokens, each replaced whole, by the character every token of the shape holds."""
TOKEN_SHAPES: Final[tuple[str, ...]] = tuple(shape.pattern for shape in SHAPES)
"""Each shape as one pattern from the token's first character (the session redaction's alternation)."""
MARKS: Final[tuple[str, ...]] = tuple(dict.fromkeys(shape.mark for shape in SHAPES))
"""The marks, in the table's order: a text holding none of one is searched for none of its shapes."""

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
