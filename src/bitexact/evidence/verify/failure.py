"""The one exception a check raises: the first failing check decides (bundle spec §12).

Every check of the verifier is a small function that either returns or
raises :class:`CheckFailed` with the spec's message, byte for byte. The
entry points catch it once and turn it into a ``FAIL:`` verdict, so the
order of checks is simply the order of the calls.
"""

from __future__ import annotations


class CheckFailed(Exception):
    """A verification check failed; ``message`` is the exact §12 text."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def prefixed(self, prefix: str) -> CheckFailed:
        """The same failure with ``prefix`` put in front (``step 3: ``, ``run 'r': ``)."""
        return CheckFailed(prefix + self.message)


class MissingLibrary(CheckFailed):
    """A library a check needs is not installed; the message stands alone, unprefixed (§12.1)."""

    def prefixed(self, prefix: str) -> CheckFailed:
        return self


ASN1CRYPTO_MISSING = "verifying RFC 3161 anchors requires 'asn1crypto' - pip install asn1crypto"
CRYPTOGRAPHY_MISSING = "verifying signatures requires the 'cryptography' package - pip install cryptography"
