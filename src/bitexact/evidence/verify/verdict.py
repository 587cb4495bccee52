"""The verdict: one ``OK:``/``FAIL:`` line and the facts behind it (bundle spec §12.3, §12.4).

The success line is assembled from clauses. The spec's clauses come from a
:class:`RunSummary`; further clauses (a capture-policy clause, say) plug in
as :class:`ClauseProvider` objects that see every verified entry and add a
clause to the end of the line and, optionally, scope lines printed after it.
No check has to change for that.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from bitexact.evidence.verify.pins import Pins

TSA_CAVEAT = " (RFC 3161 timestamps not pinned - pass --expect-tsa to trust the time)"
SIGNED_CAVEAT = "signed (signing key not pinned - pass --expect-key to know whose signature it is)"


class ClauseProvider(Protocol):
    """Adds to the success line. One instance serves one verification."""

    def observe(self, step: int, entry: Mapping[str, Any]) -> None:
        """Called with each entry after it passed its checks, in step order."""

    def clause(self) -> str | None:
        """Text appended to the OK line as ``, <text>``, or ``None`` for nothing."""

    def scope_lines(self) -> Sequence[str]:
        """Extra lines a caller may print after the verdict line."""


ClauseProviderFactory = Callable[[], ClauseProvider]


@dataclass(frozen=True)
class Verdict:
    """The outcome of one verification.

    ``line`` is exactly what the verifier prints (ASCII, ``backslashreplace``);
    ``message`` is the same text without ``OK: ``/``FAIL: `` and unescaped.
    """

    ok: bool
    line: str
    message: str
    run_id: str | None = None
    steps: int = 0
    sealed: bool = False
    signed: bool = False
    redacted: int = 0
    prov_counts: dict[str, int] = field(default_factory=dict)
    form: str = "json"
    scope_lines: tuple[str, ...] = ()

    def exit_code(self) -> int:
        """0 for a pass, 1 for a failure (§12.3)."""
        return 0 if self.ok else 1


_LINE_BREAKS = str.maketrans({"\n": "\\n", "\r": "\\r"})
"""A message's ``{x}`` is ``str(x)`` (§0), so a bundle's own string can carry a line break into it: written as
``\\n`` / ``\\r``, so that the output is one line (§12.3) and a second line can never read ``OK:``."""


def ascii_line(text: str) -> str:
    """The printed form: one line, anything outside ASCII escaped as ``backslashreplace`` does."""
    return text.translate(_LINE_BREAKS).encode("ascii", "backslashreplace").decode("ascii")


def failed(message: str, *, form: str, run_id: str | None = None, steps: int = 0) -> Verdict:
    """A ``FAIL:`` verdict carrying the spec message."""
    return Verdict(
        ok=False,
        line=ascii_line("FAIL: " + message),
        message=message,
        run_id=run_id,
        steps=steps,
        form=form,
    )


@dataclass(frozen=True)
class RunSummary:
    """Everything the success line of one bundle says (§12.4)."""

    run_id: str
    steps: int
    prov_counts: dict[str, int]
    injected: int
    sealed: bool
    signed: bool
    redacted: int
    worm_anchors: int
    rfc3161_anchors: int
    form: str
    extra_clauses: tuple[str, ...] = ()
    scope_lines: tuple[str, ...] = ()


def signature_word(signed: bool, pins: Pins) -> str:
    """``unsigned``, plain ``signed`` under a bundle pin, or the caveat form."""
    if not signed:
        return "unsigned"
    return "signed" if pins.bundle_pinned else SIGNED_CAVEAT


def bundle_ok_text(summary: RunSummary, pins: Pins) -> str:
    """The text after ``OK: `` for a JSON, JSONL or DSSE bundle."""
    counts = summary.prov_counts
    parts = [
        f"{summary.run_id} - {summary.steps} steps (observed {counts.get('observed', 0)}"
        f" / asserted {counts.get('asserted', 0)} / synthetic {counts.get('synthetic', 0)})"
    ]
    if summary.injected:
        parts.append(f"{summary.injected} injected response(s) - a counterfactual, not recorded traffic")
    parts.append("chain verified")
    parts.append("sealed" if summary.sealed else "unsealed - end not attested")
    parts.append(signature_word(summary.signed, pins))
    if pins.recorder_pinned:
        parts.append("recorder-attested")
    if summary.redacted:
        redacted = f"{summary.redacted} field(s) redacted"
        if not summary.signed and not pins.recorder_pinned:
            redacted += " (unsigned redaction - demand a signed bundle)"
        parts.append(redacted)
    if summary.worm_anchors:
        parts.append(f"{summary.worm_anchors} worm anchor(s)")
    if summary.rfc3161_anchors:
        parts.append(f"{summary.rfc3161_anchors} RFC 3161 timestamp(s)")
    text = ", ".join(parts)
    if summary.rfc3161_anchors and pins.tsa_cert is None:
        text += TSA_CAVEAT
    if summary.form == "jsonl":
        text += " (jsonl, streamed)"
    for clause in summary.extra_clauses:
        text += ", " + clause
    return text


def passed(text: str, summary: RunSummary) -> Verdict:
    """An ``OK:`` verdict for a bundle form."""
    return Verdict(
        ok=True,
        line=ascii_line("OK: " + text),
        message=text,
        run_id=summary.run_id,
        steps=summary.steps,
        sealed=summary.sealed,
        signed=summary.signed,
        redacted=summary.redacted,
        prov_counts=dict(summary.prov_counts),
        form=summary.form,
        scope_lines=summary.scope_lines,
    )


def finish(summary: RunSummary, pins: Pins) -> Verdict:
    """Apply ``--require-sealed`` (§12.3 step 3) and build the final verdict."""
    if pins.require_sealed and not summary.sealed:
        message = "bundle is unsealed - its end is not attested and --require-sealed was given"
        verdict = failed(message, form=summary.form, run_id=summary.run_id, steps=summary.steps)
        return replace(
            verdict,
            signed=summary.signed,
            redacted=summary.redacted,
            prov_counts=dict(summary.prov_counts),
        )
    return passed(bundle_ok_text(summary, pins), summary)
