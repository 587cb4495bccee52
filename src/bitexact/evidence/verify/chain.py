"""What verification remembers while entries stream past (bundle spec §10.1, §12.1 steps 3-6).

Memory stays constant in the number of entries: the state keeps counts, the
hashes at the positions that checkpoints and anchors reference (known from
the header before the first entry), and the redaction markers and claim
tokens, which are as many as the run's redactions, not its entries.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from bitexact.evidence.verify.entries import check_entry
from bitexact.evidence.verify.failure import CheckFailed
from bitexact.evidence.verify.verdict import ClauseProvider
from bitexact.evidence.vocabulary import AUDIT_KINDS, GENESIS


def referenced_positions(*groups: Iterable[object]) -> set[int]:
    """Entry indices whose hash a checkpoint or anchor may compare (``steps - 1``)."""
    positions: set[int] = set()
    for group in groups:
        for item in group:
            steps = item.get("steps") if isinstance(item, dict) else None
            if type(steps) is int and steps > 0:
                positions.add(steps - 1)
    return positions


class ChainState:
    """Runs the per-entry checks in step order and keeps what later checks need."""

    def __init__(
        self,
        run_id: str,
        keep_positions: set[int],
        providers: Sequence[ClauseProvider] = (),
    ) -> None:
        self.run_id = run_id
        self.count = 0
        self.head = GENESIS
        self.sealed_at: int | None = None
        self.prov_counts = {"observed": 0, "asserted": 0, "synthetic": 0}
        self.injected = 0
        self.markers: dict[int, list[str]] = {}
        self.claims: list[tuple[int, str]] = []
        self._keep = keep_positions
        self._kept: dict[int, str] = {}
        self._providers = providers

    def add(self, entry: object) -> None:
        """Check the next entry; raises :class:`CheckFailed` on the first failing rule."""
        index = self.count
        facts = check_entry(index, entry, self.run_id, self.head)
        self._check_seal(index, facts.kind, entry)
        self.count = index + 1
        self.head = facts.hash
        if index in self._keep:
            self._kept[index] = facts.hash
        self.prov_counts[facts.prov] += 1
        if facts.kind == "injected":
            self.injected += 1
        if facts.redacted:
            self.markers[index] = facts.redacted
        for token in facts.claims:
            self.claims.append((index, token))
        for provider in self._providers:
            provider.observe(index, entry)  # type: ignore[arg-type]

    def _check_seal(self, index: int, kind: str, entry: Any) -> None:
        if self.sealed_at is not None and kind not in AUDIT_KINDS:
            raise CheckFailed(
                f"step {self.sealed_at}: run_end seal is not final - only redaction, repair,"
                " hold and hold_release audit entries may follow a seal"
            )
        if kind != "run_end":
            return
        steps = entry.get("data", {}).get("steps")
        if type(steps) is not int or steps != index + 1:
            raise CheckFailed(f"step {index}: run_end seal attests {steps} steps but was sealed at {index + 1}")
        self.sealed_at = index

    @property
    def sealed(self) -> bool:
        return self.sealed_at is not None

    @property
    def redacted_total(self) -> int:
        return sum(len(paths) for paths in self.markers.values())

    def hash_at(self, position: int) -> str | None:
        """The hash of entry ``position``, if it was referenced (or is the head)."""
        if position == self.count - 1:
            return self.head
        return self._kept.get(position)

    def check_claims(self) -> None:
        """§12.1 step 5: every well-formed claim token names an applied marker."""
        count = self.count
        width = len(str(count))
        for step, token in self.claims:
            target, _, path = token.partition(":")
            if not (target.isascii() and target.isdigit()) or len(target) > width:
                continue
            position = int(target)
            if position >= count:
                continue
            if path not in self.markers.get(position, ()):
                raise CheckFailed(
                    f"step {step}: redaction of {token} recorded but not applied"
                    " - the bundle's redaction claim is false"
                )

    def check_markers_claimed(self) -> None:
        """§12.1 step 6 (recorder tier): every marker has a claim token somewhere in the chain."""
        tokens = {token for _, token in self.claims}
        for step in sorted(self.markers):
            for path in self.markers[step]:
                if f"{step}:{path}" not in tokens:
                    raise CheckFailed(
                        f"step {step}: path {path} is marked redacted but no on-chain redaction"
                        " claim records it - an unaccountable redaction is not recorder-authenticated"
                    )

    def redactions_body(self) -> dict[str, list[str]]:
        """The ``redactions`` member of the signed body (§9): step string -> that entry's sorted markers
        (a ``redacted`` list written in another order still verifies: §4.2 asks nothing of its order)."""
        return {str(step): sorted(paths) for step, paths in self.markers.items()}
