"""BagIt provenance bags with forks (§10.3, §12.2): files, graph, members, fork tree, listing, attestation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bitexact.crypto import SigningKey
from bitexact.evidence.verify import Pins, verify_path

from .conftest import sample_run
from .producer import GRAPH_PREDICATE, Run, dumps, envelope, fork_run, graph_of, write_bag, write_manifests
from .tsa import LocalTSA


def verdict_line(bag: Path, pins: Pins = Pins()) -> str:
    return verify_path(bag, pins).line


def family(recorder: SigningKey | None = None) -> dict[str, Run]:
    """root, a fork of it at step 3, and a fork of the fork at step 0; all sealed."""
    root = sample_run(recorder, run_id="root")
    child = fork_run(root, "child", 3, recorder=recorder)
    child.append("injected", {"source_step": 3, "response": {"status": 500}, "replaced_response": {"status": 200}})
    child.seal()
    grandchild = fork_run(child, "grandchild", 0, recorder=recorder)
    grandchild.seal()
    return {"root": root, "child": child, "grandchild": grandchild}


def bundles(runs: dict[str, Run], key: SigningKey | None) -> dict[str, dict[str, Any]]:
    return {rid: run.bundle(key) for rid, run in runs.items()}


@pytest.fixture
def bag(tmp_path: Path, bundle_key: SigningKey) -> Path:
    return write_bag(tmp_path / "bag", bundles(family(), bundle_key), "root", bundle_key)


def rewrite(bag: Path, relative: str, value: Any) -> None:
    """Change a payload file and refresh the manifests, as a careful forger would."""
    (bag / relative).write_bytes(value if isinstance(value, bytes) else dumps(value))
    write_manifests(bag)


def load(bag: Path, relative: str) -> Any:
    return json.loads((bag / relative).read_bytes())


def test_bag_verifies(bag: Path, bundle_key: SigningKey) -> None:
    assert verdict_line(bag) == (
        "OK: provenance bundle rooted at 'root' - 3 run(s), 2 fork edge(s), graph verified,"
        " signed (signing key not pinned - pass --expect-key to know whose signature it is)"
    )
    verdict = verify_path(bag, Pins.from_options(expect_key=bundle_key.public_hex, require_sealed=True))
    assert verdict.line == (
        "OK: provenance bundle rooted at 'root' - 3 run(s), 2 fork edge(s), graph verified, signed"
    )
    assert verdict.form == "bag" and verdict.run_id == "root" and verdict.sealed


def test_unsigned_bag(tmp_path: Path, bundle_key: SigningKey) -> None:
    bag = write_bag(tmp_path / "b", bundles(family(), None), "root")
    assert verdict_line(bag).endswith("graph verified, unsigned")
    assert verdict_line(bag, Pins.from_options(expect_key="ab" * 32)) == (
        "FAIL: run 'root': bundle is unsigned but a trusted key was required - refusing to verify"
    )
    bag = write_bag(tmp_path / "c", bundles(family(), bundle_key), "root")  # signed members, no attestation
    assert verdict_line(bag, Pins.from_options(expect_key=bundle_key.public_hex)) == (
        "FAIL: provenance bundle carries no graph attestation but a signing key was required"
    )


# --- files -----------------------------------------------------------------------


@pytest.mark.parametrize("content", [None, b"BagIt-Version: 0.97\nTag-File-Character-Encoding: UTF-8\n",
                                     b"BagIt-Version: 1.0\r\nTag-File-Character-Encoding: UTF-8\r\n"])
def test_bagit_txt(bag: Path, content: bytes | None) -> None:
    if content is None:
        (bag / "bagit.txt").unlink()
    else:
        (bag / "bagit.txt").write_bytes(content)
    assert verdict_line(bag) == "FAIL: not a BagIt bag - missing or malformed bagit.txt"


def test_missing_manifest(bag: Path) -> None:
    (bag / "manifest-sha256.txt").unlink()
    assert verdict_line(bag) == "FAIL: missing manifest-sha256.txt"


@pytest.mark.parametrize("bad", ["abc  data/x", "A" * 64 + "  data/x", "a" * 64 + " data/x", "a" * 64 + "  "])
def test_malformed_manifest_line(bag: Path, bad: str) -> None:
    text = (bag / "manifest-sha256.txt").read_text()
    lines = text.splitlines()
    lines.insert(1, bad)
    (bag / "manifest-sha256.txt").write_text("\n".join(lines) + "\n")
    assert verdict_line(bag) == (
        "FAIL: manifest-sha256.txt line 2 is malformed - expected '<sha256>  <path>'"
    )


def test_payload_added_or_removed(bag: Path) -> None:
    (bag / "data" / "extra.txt").write_text("smuggled")
    assert verdict_line(bag) == "FAIL: bag payload does not match manifest-sha256.txt - files were added or removed"
    (bag / "data" / "extra.txt").unlink()
    (bag / "data" / "runs" / "grandchild.bundle.json").unlink()
    assert verdict_line(bag) == "FAIL: bag payload does not match manifest-sha256.txt - files were added or removed"


def test_payload_checksum(bag: Path) -> None:
    path = bag / "data" / "provenance-graph.json"
    path.write_bytes(path.read_bytes() + b" ")
    assert verdict_line(bag) == "FAIL: payload file data/provenance-graph.json fails its sha256 checksum"


def test_tag_manifest(bag: Path) -> None:
    (bag / "bag-info.txt").write_text("External-Identifier: root\n")
    assert verdict_line(bag) == "FAIL: tag file bag-info.txt fails its sha256 checksum"
    (bag / "tagmanifest-sha256.txt").write_text("nonsense\n")
    assert verdict_line(bag) == (
        "FAIL: tagmanifest-sha256.txt line 1 is malformed - expected '<sha256>  <path>'"
    )
    (bag / "tagmanifest-sha256.txt").unlink()
    assert verdict_line(bag) == "FAIL: missing tagmanifest-sha256.txt"


def test_tag_manifest_cannot_reach_outside_the_bag(bag: Path) -> None:
    (bag / "tagmanifest-sha256.txt").write_text("0" * 64 + "  ../outside.txt\n")
    assert verdict_line(bag) == "FAIL: tag file ../outside.txt fails its sha256 checksum"


def test_unreadable_file_is_named_by_basename(bag: Path) -> None:
    (bag / "bag-info.txt").unlink()
    assert verdict_line(bag) == "FAIL: cannot read bag-info.txt: No such file or directory"


# --- graph ------------------------------------------------------------------------


def test_missing_graph(bag: Path) -> None:
    (bag / "data" / "provenance-graph.json").unlink()
    write_manifests(bag)
    assert verdict_line(bag) == "FAIL: missing data/provenance-graph.json"


def test_graph_must_be_an_object_with_the_format(bag: Path) -> None:
    rewrite(bag, "data/provenance-graph.json", [1])
    assert verdict_line(bag) == "FAIL: provenance-graph.json is not a JSON object"
    rewrite(bag, "data/provenance-graph.json", {"format": "other/1"})
    assert verdict_line(bag) == "FAIL: unsupported provenance graph format 'other/1'"


def test_graph_with_a_duplicate_key_is_malformed(bag: Path) -> None:
    rewrite(bag, "data/provenance-graph.json", b'{"format":"x","format":"y"}')
    assert verdict_line(bag) == "FAIL: malformed provenance bundle: StrictJSONError(\"duplicate key 'format'\")"


# --- members ------------------------------------------------------------------------


def test_member_bundle_failure_names_the_run(bag: Path) -> None:
    bundle = load(bag, "data/runs/child.bundle.json")
    bundle["entries"][1]["data"]["source_step"] = 2
    rewrite(bag, "data/runs/child.bundle.json", bundle)
    assert verdict_line(bag) == (
        "FAIL: run 'child': step 1: data hash mismatch at path source_step - value tampered or corrupted"
    )


def test_members_use_the_bag_pins(bag: Path, other_key: SigningKey) -> None:
    assert verdict_line(bag, Pins.from_options(expect_key=other_key.public_hex)) == (
        "FAIL: run 'root': signature public_key is not the trusted key"
    )


def test_graph_renaming_a_bundle(tmp_path: Path, bundle_key: SigningKey) -> None:
    members = bundles(family(), bundle_key)
    graph = graph_of(members, "root")
    graph["nodes"][2]["bundle"] = "runs/child.bundle.json"
    bag = write_bag(tmp_path / "b", members, "root", bundle_key, graph=graph)
    assert verdict_line(bag) == (
        "FAIL: graph node 'grandchild' points at a bundle for run 'child' - the graph renames the evidence it carries"
    )


def test_graph_head_must_be_the_bundle_head(tmp_path: Path, bundle_key: SigningKey) -> None:
    members = bundles(family(), bundle_key)
    graph = graph_of(members, "root")
    graph["nodes"][1]["head_hash"] = members["child"]["entries"][0]["hash"]
    bag = write_bag(tmp_path / "b", members, "root", bundle_key, graph=graph)
    assert verdict_line(bag) == "FAIL: run 'child': graph head does not match the bundle chain head"


def test_node_naming_a_missing_bundle(tmp_path: Path, bundle_key: SigningKey) -> None:
    members = bundles(family(), bundle_key)
    graph = graph_of(members, "root")
    graph["nodes"][0]["bundle"] = "runs/nowhere.bundle.json"
    bag = write_bag(tmp_path / "b", members, "root", bundle_key, graph=graph)
    assert verdict_line(bag) == "FAIL: cannot read nowhere.bundle.json: No such file or directory"


# --- fork tree ------------------------------------------------------------------------


def bag_of(tmp_path: Path, runs: dict[str, Run], root: str, key: SigningKey, **graph_changes: Any) -> Path:
    members = bundles(runs, key)
    graph = graph_of(members, root) | graph_changes
    return write_bag(tmp_path / "b", members, root, key, graph=graph)


def test_root_must_be_in_the_bag(tmp_path: Path, bundle_key: SigningKey) -> None:
    bag = bag_of(tmp_path, family(), "nobody", bundle_key)
    assert verdict_line(bag) == "FAIL: graph root 'nobody' not present in the bag"


def test_fork_step_outside_the_source(tmp_path: Path, bundle_key: SigningKey) -> None:
    runs = family()
    runs["child"] = fork_run(runs["root"], "child", 3)
    runs["child"].entries[0]["data"]["at_step"] = 7
    runs["child"] = _rebuilt(runs["child"], {"source_run": "root", "at_step": 7, "source_prev_hash": "0" * 64})
    bag = bag_of(tmp_path, runs, "root", bundle_key)
    assert verdict_line(bag) == "FAIL: fork of 'child' points at step 7 outside source 'root'"


def _rebuilt(run: Run, fork: dict[str, Any], *, seal: bool = True) -> Run:
    new = Run(run.run_id, alg=run.alg)
    new.append("fork", fork)
    if seal:
        new.seal()
    return new


def test_fork_prefix_hash_must_match_the_source(tmp_path: Path, bundle_key: SigningKey) -> None:
    runs = family()
    runs["child"] = _rebuilt(runs["child"], {"source_run": "root", "at_step": 3, "source_prev_hash": "1" * 64})
    bag = bag_of(tmp_path, runs, "root", bundle_key)
    assert verdict_line(bag) == (
        "FAIL: fork of 'child' prefix hash does not match 'root' at step 3 - the source was rewritten after forking"
    )


def test_in_bag_fork_must_be_sealed(tmp_path: Path, bundle_key: SigningKey) -> None:
    runs = family()
    prefix = runs["root"].entries[2]["hash"]
    runs["child"] = _rebuilt(runs["child"], {"source_run": "root", "at_step": 3, "source_prev_hash": prefix}, seal=False)
    runs["grandchild"] = fork_run(runs["child"], "grandchild", 0)
    runs["grandchild"].seal()
    bag = bag_of(tmp_path, runs, "root", bundle_key)
    assert verdict_line(bag) == (
        "FAIL: fork 'child' is not sealed - an unfinished fork cannot have its provenance certified"
    )


def test_root_forked_from_an_in_bag_run(tmp_path: Path, bundle_key: SigningKey) -> None:
    bag = bag_of(tmp_path, family(), "child", bundle_key)
    assert verdict_line(bag) == (
        "FAIL: graph root 'child' is forked from in-bag run 'root' - a lineage cycle through the root"
    )


def test_fork_ancestry_cycle(tmp_path: Path, bundle_key: SigningKey) -> None:
    root = sample_run(None, run_id="root")
    a = Run("a")
    b = Run("b")
    a.append("fork", {"source_run": "b", "at_step": 0, "source_prev_hash": "0" * 64})
    a.seal()
    b.append("fork", {"source_run": "a", "at_step": 0, "source_prev_hash": "0" * 64})
    b.seal()
    bag = bag_of(tmp_path, {"root": root, "a": a, "b": b}, "root", bundle_key)
    assert verdict_line(bag) == "FAIL: fork ancestry cycles at 'a'"


def test_every_run_connects_to_the_root(tmp_path: Path, bundle_key: SigningKey) -> None:
    runs = family()
    runs["stray"] = sample_run(None, run_id="stray")
    bag = bag_of(tmp_path, runs, "root", bundle_key)
    assert verdict_line(bag) == "FAIL: run 'stray' is not connected to the root 'root'"


def test_fork_of_a_run_outside_the_bag_is_an_original(tmp_path: Path, bundle_key: SigningKey) -> None:
    runs = family()
    del runs["root"]
    bag = bag_of(tmp_path, runs, "child", bundle_key)
    assert verdict_line(bag).startswith("OK: provenance bundle rooted at 'child' - 2 run(s), 1 fork edge(s)")


# --- listing -------------------------------------------------------------------------


def test_bag_info_names_the_root(bag: Path) -> None:
    (bag / "bag-info.txt").write_text("External-Identifier: child\nBag-Software-Agent: BitExact\n")
    write_manifests(bag)
    assert verdict_line(bag) == "FAIL: bag-info.txt External-Identifier 'child' is not the graph root 'root'"
    (bag / "bag-info.txt").write_text("Bag-Software-Agent: BitExact\n")
    write_manifests(bag)
    assert verdict_line(bag) == "FAIL: bag-info.txt External-Identifier None is not the graph root 'root'"


def test_declared_role_must_follow_the_fork_entry(tmp_path: Path, bundle_key: SigningKey) -> None:
    members = bundles(family(), bundle_key)
    graph = graph_of(members, "root")
    graph["nodes"][1]["role"] = "original"
    bag = write_bag(tmp_path / "b", members, "root", bundle_key, graph=graph)
    assert verdict_line(bag) == (
        "FAIL: graph node 'child' declares role 'original' but its fork entry makes it 'fork'"
    )


def test_edges_must_be_objects(tmp_path: Path, bundle_key: SigningKey) -> None:
    bag = bag_of(tmp_path, family(), "root", bundle_key, edges=[["child", "root"]])
    assert verdict_line(bag) == "FAIL: graph edges carry a non-object edge"


@pytest.mark.parametrize("change", ["drop", "at_step", "extra"])
def test_edges_must_match_the_fork_entries(tmp_path: Path, bundle_key: SigningKey, change: str) -> None:
    members = bundles(family(), bundle_key)
    graph = graph_of(members, "root")
    if change == "drop":
        graph["edges"].pop()
    elif change == "at_step":
        graph["edges"][0]["at_step"] = 2
    else:
        graph["edges"].append(dict(graph["edges"][0]))
    bag = write_bag(tmp_path / "b", members, "root", bundle_key, graph=graph)
    assert verdict_line(bag) == "FAIL: graph edges do not match the fork entries the bundles commit to"


def test_edge_order_does_not_matter(tmp_path: Path, bundle_key: SigningKey) -> None:
    members = bundles(family(), bundle_key)
    graph = graph_of(members, "root")
    graph["edges"].reverse()
    bag = write_bag(tmp_path / "b", members, "root", bundle_key, graph=graph)
    assert verdict_line(bag).startswith("OK: ")


# --- attestation ------------------------------------------------------------------------


ATTESTATION = "data/attestations/provenance.dsse.json"


def attest(bag: Path, statement: dict[str, Any], key: SigningKey) -> None:
    rewrite(bag, ATTESTATION, envelope(statement, key))


def statement(bag: Path) -> dict[str, Any]:
    import base64

    return json.loads(base64.b64decode(load(bag, ATTESTATION)["payload"]))


def test_attestation_envelope_messages(bag: Path, bundle_key: SigningKey, other_key: SigningKey) -> None:
    env = load(bag, ATTESTATION)
    rewrite(bag, ATTESTATION, env | {"payloadType": "text/plain"})
    assert verdict_line(bag) == "FAIL: attestation unsupported payloadType 'text/plain'"
    rewrite(bag, ATTESTATION, env | {"payload": "***"})
    assert verdict_line(bag) == "FAIL: attestation payload is not valid base64"
    rewrite(bag, ATTESTATION, env | {"signatures": [env["signatures"][0] | {"keyid": "00" * 8}]})
    assert verdict_line(bag) == "FAIL: attestation signature keyid does not match its public_key"
    rewrite(bag, ATTESTATION, env)
    assert verdict_line(bag, Pins.from_options(trust=(frozenset({bundle_key.public_hex, other_key.public_hex}), None))).startswith("OK: ")
    attest(bag, statement(bag), other_key)
    assert verdict_line(bag, Pins.from_options(expect_key=bundle_key.public_hex)) == (
        "FAIL: attestation signature verification failed - no acceptable signature over the payload"
    )


def test_attestation_must_be_a_provenance_graph(bag: Path, bundle_key: SigningKey) -> None:
    attest(bag, statement(bag) | {"predicateType": "https://bitexact.dev/run/v1"}, bundle_key)
    assert verdict_line(bag) == "FAIL: attestation is not a provenance graph ('https://bitexact.dev/run/v1')"


def test_attestation_must_sign_the_graph_in_the_bag(bag: Path, bundle_key: SigningKey) -> None:
    signed = statement(bag)
    signed["predicate"]["excluded"] = [{"run_id": "x", "reason": "unsealed"}]
    attest(bag, signed, bundle_key)
    assert verdict_line(bag) == "FAIL: attestation does not sign the provenance graph in the bag"


def test_attestation_subjects(bag: Path, bundle_key: SigningKey) -> None:
    signed = statement(bag)
    signed["subject"].append({"name": "ghost", "digest": {"head": "0" * 64}})
    attest(bag, signed, bundle_key)
    assert verdict_line(bag) == "FAIL: attestation names a run 'ghost' not present in the bag"
    signed = statement(bag)
    signed["subject"] = [signed["subject"][0], {"name": "child", "digest": {"head": "0" * 64}}]
    attest(bag, signed, bundle_key)
    assert verdict_line(bag) == "FAIL: attestation head for 'child' does not match its verified chain"
    assert signed["predicateType"] == GRAPH_PREDICATE


# --- pins and caveats ------------------------------------------------------------------


def test_require_sealed_checks_the_root(tmp_path: Path, bundle_key: SigningKey) -> None:
    runs = family()
    unsealed = sample_run(None, run_id="root", seal=False)
    child = runs["child"]
    prefix = unsealed.entries[2]["hash"]
    runs = {"root": unsealed, "child": _rebuilt(child, {"source_run": "root", "at_step": 3, "source_prev_hash": prefix})}
    bag = bag_of(tmp_path, runs, "root", bundle_key)
    assert verdict_line(bag).startswith("OK: provenance bundle rooted at 'root' - 2 run(s), 1 fork edge(s)")
    assert verdict_line(bag, Pins(require_sealed=True)) == (
        "FAIL: the bundle rooted at 'root' is unsealed - its end is not attested and --require-sealed was given"
    )


def test_bag_tsa_caveat(tmp_path: Path, bundle_key: SigningKey, tsa: LocalTSA) -> None:
    runs = family()
    runs["grandchild"].rfc3161_anchor(tsa.stamp(runs["grandchild"].head, nonce=7), nonce=7)
    bag = write_bag(tmp_path / "b", bundles(runs, bundle_key), "root", bundle_key)
    assert verdict_line(bag).endswith(
        "graph verified, signed (signing key not pinned - pass --expect-key to know whose signature it is)"
        " (RFC 3161 timestamps not pinned - pass --expect-tsa to trust the time)"
    )
    assert verdict_line(bag, Pins(tsa_cert=tsa.ca_pem)).endswith("it is)")


def test_bag_recorder_tier_applies_to_members(tmp_path: Path, bundle_key: SigningKey, recorder_key: SigningKey) -> None:
    bag = write_bag(tmp_path / "b", bundles(family(recorder_key), bundle_key), "root", bundle_key)
    line = verdict_line(bag, Pins.from_options(expect_recorder_key=recorder_key.public_hex))
    assert line.startswith("OK: provenance bundle rooted at 'root' - 3 run(s)") and "recorder" not in line
    bag = write_bag(tmp_path / "c", bundles(family(), bundle_key), "root", bundle_key)
    assert verdict_line(bag, Pins.from_options(expect_recorder_key=recorder_key.public_hex)) == (
        "FAIL: run 'root': a recorder key was required but the bundle carries no checkpoints or worm anchors"
        " for it to have signed"
    )
