"""One bundle, checked in the order of bundle spec §12.1.

:class:`BundleCheck` runs the container-level checks over a header (the
JSON-form bundle itself, or a JSONL header line) and an iterable of entries,
so the JSON form and the streamed JSONL form share every rule.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from bitexact.evidence.verify.anchors import check_anchors, is_rfc3161, is_worm, worm_covers_head
from bitexact.evidence.verify.chain import ChainState, referenced_positions
from bitexact.evidence.verify.checkpoints import check_checkpoints, covers_head
from bitexact.evidence.verify.failure import CheckFailed
from bitexact.evidence.verify.pins import Pins
from bitexact.evidence.verify.signature import check_signature
from bitexact.evidence.verify.verdict import (
    ClauseProviderFactory,
    RunSummary,
    Verdict,
    failed,
    finish,
)
from bitexact.evidence.vocabulary import FORMAT_JSON

EMPTY_CHAIN = "bundle carries no entries - an empty chain is not evidence of a run"

_KIND_WORDS = ((bool, "a boolean"), (int, "a number"), (float, "a number"), (str, "a string"), (list, "an array"))


def document_kind(doc: object) -> str:
    """How ``not a bundle: the document is {kind}`` names a non-object."""
    if doc is None:
        return "null"
    for python_type, word in _KIND_WORDS:
        if isinstance(doc, python_type):
            return word
    return f"a {type(doc).__name__}"


def check_format(doc: dict[str, Any], expected: str, missing_message: str) -> None:
    """§12.1 step 1: a missing or null format, then a wrong one."""
    fmt = doc.get("format")
    if fmt is None:
        raise CheckFailed(missing_message)
    if fmt != expected:
        raise CheckFailed(f"unsupported format {fmt!r}")


def check_header_shape(header: dict[str, Any]) -> None:
    """§12.1 step 2, up to (not including) the ``entries`` checks."""
    if not isinstance(header.get("run_id"), str):
        raise CheckFailed("bundle run_id is not a string")
    if not isinstance(header.get("chain"), dict):
        raise CheckFailed("chain is not a JSON object")
    for key, item in (("checkpoints", "checkpoint"), ("anchors", "anchor")):
        if key not in header:
            continue
        values = header[key]
        if not isinstance(values, list):
            raise CheckFailed(f"{key} is not a JSON array")
        for index, value in enumerate(values):
            if not isinstance(value, dict):
                raise CheckFailed(f"{item} {index} is not a JSON object")
    signature = header.get("signature")
    if signature is not None and not isinstance(signature, dict):
        raise CheckFailed("signature is not a JSON object")


class BundleCheck:
    """The container checks of one bundle; ``state`` shows how far it got."""

    def __init__(self, header: dict[str, Any], pins: Pins, form: str,
                 clauses: Sequence[ClauseProviderFactory] = ()) -> None:
        self.header = header
        self.pins = pins
        self.form = form
        self._clauses = clauses
        self.state: ChainState | None = None

    @property
    def run_id(self) -> str | None:
        run_id = self.header.get("run_id")
        return run_id if isinstance(run_id, str) else None

    def run(self, entries: Iterable[object]) -> RunSummary:
        """Steps 3-12 of §12.1 over ``entries``; raises :class:`CheckFailed`.

        The header's ``chain.head_hash`` and ``signature`` are read only after the last entry: a stored
        run's header is completed as its entries stream (:func:`bitexact.evidence.export.streamed_bundle`).
        """
        header, pins = self.header, self.pins
        run_id: str = header["run_id"]
        checkpoints: list[dict[str, Any]] = header.get("checkpoints", [])
        anchors: list[dict[str, Any]] = header.get("anchors", [])
        providers = [factory() for factory in self._clauses]
        state = self.state = ChainState(run_id, referenced_positions(checkpoints, anchors), providers)
        for entry in entries:
            state.add(entry)
        if state.count == 0:
            raise CheckFailed(EMPTY_CHAIN)
        count = state.count
        if header["chain"].get("head_hash") != state.head:
            raise CheckFailed("chain head_hash does not match the final entry")
        state.check_claims()
        if pins.recorder_pinned:
            state.check_markers_claimed()
            if not checkpoints and not any(is_worm(a) for a in anchors):
                raise CheckFailed(
                    "a recorder key was required but the bundle carries no checkpoints"
                    " or worm anchors for it to have signed"
                )
        check_checkpoints(checkpoints, run_id, count, state.hash_at, pins)
        check_anchors(anchors, run_id, count, state.hash_at, pins)
        head_checkpointed = any(covers_head(cp, count) for cp in checkpoints)
        if pins.recorder_pinned and not (
            head_checkpointed or any(worm_covers_head(a, count) for a in anchors)
        ):
            raise CheckFailed(
                "a recorder key was required but no checkpoint or worm anchor covers the bundle head"
                " - an unsigned tail is not recorder-authenticated"
            )
        if state.sealed and checkpoints and not head_checkpointed:
            raise CheckFailed(
                "sealed run has entries past its last recorder checkpoint"
                " - the tail is not recorder-attested (no checkpoint covers the head)"
            )
        signed = check_signature(header, state.redactions_body(), pins)
        return RunSummary(
            run_id=run_id,
            steps=count,
            prov_counts=dict(state.prov_counts),
            injected=state.injected,
            sealed=state.sealed,
            signed=signed,
            redacted=state.redacted_total,
            worm_anchors=sum(1 for a in anchors if is_worm(a)),
            rfc3161_anchors=sum(1 for a in anchors if is_rfc3161(a)),
            form=self.form,
            extra_clauses=tuple(c for p in providers if (c := p.clause())),
            scope_lines=tuple(line for p in providers for line in p.scope_lines()),
        )

    def failure(self, message: str) -> Verdict:
        """A ``FAIL:`` verdict with whatever this check had learnt."""
        steps = self.state.count if self.state is not None else 0
        return failed(message, form=self.form, run_id=self.run_id, steps=steps)


def check_document_header(doc: object) -> dict[str, Any]:
    """§12.1 steps 1-2 for a JSON-form bundle, up to (not including) its ``entries``."""
    if not isinstance(doc, dict):
        raise CheckFailed(f"not a bundle: the document is {document_kind(doc)}, not an object")
    check_format(doc, FORMAT_JSON, "the document carries no format field")
    check_header_shape(doc)
    return doc


def check_bundle_document(doc: object) -> dict[str, Any]:
    """§12.1 steps 1-2 for a JSON-form bundle; returns it as a header with an entries list."""
    doc = check_document_header(doc)
    entries = doc.get("entries")
    if not isinstance(entries, list):
        raise CheckFailed("entries is not a JSON array")
    if not entries:
        raise CheckFailed(EMPTY_CHAIN)
    return doc


def verify_bundle_document(
    doc: object, pins: Pins, *, form: str = "json", clauses: Sequence[ClauseProviderFactory] = ()
) -> tuple[Verdict, RunSummary | None]:
    """Verify a parsed JSON-form bundle; the summary is ``None`` on failure."""
    check: BundleCheck | None = None
    try:
        header = check_bundle_document(doc)
        check = BundleCheck(header, pins, form, clauses)
        summary = check.run(header["entries"])
    except CheckFailed as failure:
        return _fail(check, failure.message, form), None
    except Exception as exc:  # a verifier never crashes (§12.1)
        return _fail(check, f"malformed bundle: {exc!r}", form), None
    return finish(summary, pins), summary


def _fail(check: BundleCheck | None, message: str, form: str) -> Verdict:
    if check is None:
        return failed(message, form=form)
    return check.failure(message)
