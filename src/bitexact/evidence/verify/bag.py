"""BagIt provenance bags: files, graph, member runs, fork tree, listing, attestation (§10.3, §12.2).

Member bundles are JSON-form and are verified with the bag's pins; the bag
applies ``--require-sealed`` to its root run only.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Sequence
from typing import Any

from bitexact.canon import canonicalize, loads
from bitexact.evidence.verify.bag_files import check_files, inside, read
from bitexact.evidence.verify.bundle import verify_bundle_document
from bitexact.evidence.verify.dsse import open_envelope
from bitexact.evidence.verify.failure import CheckFailed
from bitexact.evidence.verify.pins import Pins
from bitexact.evidence.verify.verdict import (
    TSA_CAVEAT,
    ClauseProvider,
    ClauseProviderFactory,
    Verdict,
    ascii_line,
    failed,
    signature_word,
)
from bitexact.evidence.vocabulary import FORMAT_GRAPH, GENESIS, GRAPH_PREDICATE

GRAPH_PATH = "data/provenance-graph.json"
ATTESTATION_PATH = "data/attestations/provenance.dsse.json"


@dataclass(frozen=True)
class MemberRun:
    """A verified member bundle, with what the fork tree needs from it."""

    run_id: str
    entries: list[dict[str, Any]]
    head: str
    sealed: bool
    has_rfc3161: bool
    fork: dict[str, Any] | None  # data of the first fork entry

    def hash_before(self, at_step: int) -> str:
        return GENESIS if at_step == 0 else self.entries[at_step - 1]["hash"]


def load_graph(root: Path) -> dict[str, Any]:
    """§12.2 bag step 2."""
    path = root / GRAPH_PATH
    if not path.is_file():
        raise CheckFailed(f"missing {GRAPH_PATH}")
    graph = loads(read(path))
    if not isinstance(graph, dict):
        raise CheckFailed("provenance-graph.json is not a JSON object")
    if graph.get("format") != FORMAT_GRAPH:
        raise CheckFailed(f"unsupported provenance graph format {graph.get('format')!r}")
    return graph


def _nodes(graph: dict[str, Any]) -> list[dict[str, Any]]:
    nodes = graph.get("nodes")
    if not isinstance(nodes, list) or not all(isinstance(n, dict) for n in nodes):
        raise ValueError("graph nodes is not a JSON array of objects")
    return nodes


def verify_members(
    root: Path, nodes: list[dict[str, Any]], pins: Pins, providers: Sequence[ClauseProvider] = ()
) -> dict[str, MemberRun]:
    """§12.2 bag step 3: each node's bundle verifies, carries its run, and ends at its head.

    ``providers`` are shared by every member, so a clause counts the whole bag.
    """
    shared = [lambda provider=provider: provider for provider in providers]
    member_pins = dataclasses.replace(pins, require_sealed=False)
    runs: dict[str, MemberRun] = {}
    for node in nodes:
        rid = node.get("run_id")
        bundle_path = node.get("bundle")
        if not isinstance(bundle_path, str):
            raise ValueError(f"graph node {rid!r} names no bundle file")
        doc = loads(read(inside(root / "data", bundle_path)))
        verdict, summary = verify_bundle_document(doc, member_pins, clauses=shared)
        if summary is None:
            raise CheckFailed(f"run {rid!r}: {verdict.message}")
        if doc["run_id"] != rid:
            raise CheckFailed(
                f"graph node {rid!r} points at a bundle for run {doc['run_id']!r}"
                " - the graph renames the evidence it carries"
            )
        head = doc["chain"]["head_hash"]
        if node.get("head_hash") != head:
            raise CheckFailed(f"run {rid!r}: graph head does not match the bundle chain head")
        if rid in runs:
            raise ValueError(f"graph lists run {rid!r} twice")
        fork = next((e.get("data", {}) for e in doc["entries"] if e["kind"] == "fork"), None)
        runs[rid] = MemberRun(
            run_id=rid,
            entries=doc["entries"],
            head=head,
            sealed=summary.sealed,
            has_rfc3161=summary.rfc3161_anchors > 0,
            fork=fork,
        )
    return runs


def fork_parents(runs: dict[str, MemberRun]) -> dict[str, str]:
    """child -> in-bag source, from each run's first fork entry (§10.3 roles)."""
    parents = {}
    for rid, run in runs.items():
        source = run.fork.get("source_run") if run.fork is not None else None
        if isinstance(source, str) and source in runs:
            parents[rid] = source
    return parents


def check_fork_tree(root_id: object, runs: dict[str, MemberRun], parents: dict[str, str]) -> None:
    """§12.2 bag step 4."""
    if not isinstance(root_id, str) or root_id not in runs:
        raise CheckFailed(f"graph root {root_id!r} not present in the bag")
    for child in sorted(parents):
        source = runs[parents[child]]
        fork = runs[child].fork or {}
        at = fork.get("at_step")
        if type(at) is not int or not 0 <= at <= len(source.entries):
            raise CheckFailed(f"fork of {child!r} points at step {at} outside source {source.run_id!r}")
        if fork.get("source_prev_hash") != source.hash_before(at):
            raise CheckFailed(
                f"fork of {child!r} prefix hash does not match {source.run_id!r} at step {at}"
                " - the source was rewritten after forking"
            )
        if not runs[child].sealed:
            raise CheckFailed(
                f"fork {child!r} is not sealed - an unfinished fork cannot have its provenance certified"
            )
    if root_id in parents:
        raise CheckFailed(
            f"graph root {root_id!r} is forked from in-bag run {parents[root_id]!r}"
            " - a lineage cycle through the root"
        )
    for start in sorted(runs):
        seen: set[str] = set()
        current = start
        while current in parents:
            if current in seen:
                raise CheckFailed(f"fork ancestry cycles at {current!r}")
            seen.add(current)
            current = parents[current]
    for start in sorted(runs):
        current = start
        while current in parents:
            current = parents[current]
        if current != root_id:
            raise CheckFailed(f"run {start!r} is not connected to the root {root_id!r}")


def _external_identifier(root: Path) -> str | None:
    # BagIt lines end with LF, CR or CRLF only: str.splitlines would also cut a run id at U+2028, \x1c, ...
    for line in re.split(r"\r\n|\r|\n", read(root / "bag-info.txt").decode("utf-8")):
        label, colon, value = line.partition(":")
        if colon and label.strip(" \t") == "External-Identifier":
            return value.strip(" \t")  # BagIt's linear whitespace; str.strip() would also eat a trailing U+0085
    return None


def check_listing(
    root: Path, graph: dict[str, Any], root_id: str, runs: dict[str, MemberRun], parents: dict[str, str]
) -> None:
    """§12.2 bag step 5: bag-info root, node roles, edges."""
    declared = _external_identifier(root)
    if declared != root_id:
        raise CheckFailed(f"bag-info.txt External-Identifier {declared!r} is not the graph root {root_id!r}")
    for node in _nodes(graph):
        rid = node.get("run_id")
        expected = "fork" if rid in parents else "original"
        if node.get("role") != expected:
            raise CheckFailed(
                f"graph node {rid!r} declares role {node.get('role')!r} but its fork entry makes it {expected!r}"
            )
    edges = graph.get("edges", [])
    if not isinstance(edges, list):
        raise ValueError("graph edges is not a JSON array")
    if not all(isinstance(edge, dict) for edge in edges):
        raise CheckFailed("graph edges carry a non-object edge")
    listed = sorted(
        canonicalize([e.get("child"), e.get("source_run"), e.get("at_step"), e.get("source_prev_hash")])
        for e in edges
    )
    committed = sorted(
        canonicalize([child, parents[child], fork.get("at_step"), fork.get("source_prev_hash")])
        for child in parents
        if (fork := runs[child].fork) is not None
    )
    if listed != committed:
        raise CheckFailed("graph edges do not match the fork entries the bundles commit to")


def check_attestation(root: Path, graph: dict[str, Any], runs: dict[str, MemberRun], pins: Pins) -> bool:
    """§12.2 bag step 6; returns whether an attestation is present."""
    path = root / ATTESTATION_PATH
    if not path.is_file():
        if pins.bundle_pinned:
            raise CheckFailed("provenance bundle carries no graph attestation but a signing key was required")
        return False
    envelope = loads(read(path))
    if not isinstance(envelope, dict):
        raise ValueError("the attestation is not a JSON object")
    statement = loads(open_envelope(envelope, pins, prefix="attestation "))
    if not isinstance(statement, dict):
        raise ValueError("the attestation statement is not a JSON object")
    predicate_type = statement.get("predicateType")
    if predicate_type != GRAPH_PREDICATE:
        raise CheckFailed(f"attestation is not a provenance graph ({predicate_type!r})")
    if canonicalize(statement.get("predicate")) != canonicalize(graph):
        raise CheckFailed("attestation does not sign the provenance graph in the bag")
    subjects = statement.get("subject", [])
    if not isinstance(subjects, list) or not all(isinstance(s, dict) for s in subjects):
        raise ValueError("attestation subject is not a JSON array of objects")
    for subject in subjects:
        name = subject.get("name")
        if not isinstance(name, str) or name not in runs:
            raise CheckFailed(f"attestation names a run {name!r} not present in the bag")
        digest = subject.get("digest")
        if not isinstance(digest, dict) or digest.get("head") != runs[name].head:
            raise CheckFailed(f"attestation head for {name!r} does not match its verified chain")
    return True


def verify_bag(root: Path, pins: Pins, *, clauses: Sequence[ClauseProviderFactory] = ()) -> Verdict:
    """Verify a provenance bag directory; one verdict line for the whole bag.

    Extra ``clauses`` see every member's entries and speak for the bag once,
    after the signature word (and its TSA caveat).
    """
    root_id: object = None
    providers = [factory() for factory in clauses]
    try:
        check_files(root)
        graph = load_graph(root)
        runs = verify_members(root, _nodes(graph), pins, providers)
        parents = fork_parents(runs)
        root_id = graph.get("root")
        check_fork_tree(root_id, runs, parents)
        assert isinstance(root_id, str)
        check_listing(root, graph, root_id, runs, parents)
        signed = check_attestation(root, graph, runs, pins)
    except CheckFailed as failure:
        return failed(failure.message, form="bag", run_id=root_id if isinstance(root_id, str) else None)
    except Exception as exc:  # a verifier never crashes (§12.2)
        return failed(f"malformed provenance bundle: {exc!r}", form="bag")
    root_run = runs[root_id]
    if pins.require_sealed and not root_run.sealed:
        return failed(
            f"the bundle rooted at {root_id!r} is unsealed - its end is not attested and --require-sealed was given",
            form="bag",
            run_id=root_id,
            steps=len(root_run.entries),
        )
    text = (
        f"provenance bundle rooted at {root_id!r} - {len(runs)} run(s), {len(runs) - 1} fork edge(s),"
        f" graph verified, {signature_word(signed, pins)}"
    )
    if pins.tsa_cert is None and any(run.has_rfc3161 for run in runs.values()):
        text += TSA_CAVEAT
    for clause in (c for provider in providers if (c := provider.clause())):
        text += ", " + clause
    return Verdict(
        ok=True,
        line=ascii_line("OK: " + text),
        message=text,
        run_id=root_id,
        steps=len(root_run.entries),
        sealed=root_run.sealed,
        signed=signed,
        form="bag",
        scope_lines=tuple(line for provider in providers for line in provider.scope_lines()),
    )
