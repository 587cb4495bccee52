"""An independent, test-side producer of ``bitexact-bundle/1`` bundles, written from the spec alone.

It plays "any conforming producer" (bundle spec §13): entries with salted
commitments, checkpoints, WORM and RFC 3161 anchors, store and export-time
redaction, the detached signature, JSONL, DSSE and BagIt bags with forks.
It uses only ``bitexact.canon`` and ``bitexact.crypto``, never the verifier.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import shutil
from collections.abc import Iterable, Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from bitexact.canon import canonicalize
from bitexact.crypto import GENESIS, SigningKey, chain_hash, commitment, new_salt

FORMAT = "bitexact-bundle/1"
FORMAT_JSONL = "bitexact-bundle-jsonl/1"
PAYLOAD_TYPE = "application/vnd.in-toto+json"
RUN_PREDICATE = "https://bitexact.dev/run/v1"
GRAPH_PREDICATE = "https://bitexact.dev/provenance-graph/v1"

#: The provenance a producer gives each kind (§5); tool_call may also be asserted.
DEFAULT_PROV = {
    **{k: "observed" for k in ("run_meta", "run_end", "fork", "http_call", "nondet", "tool_call")},
    **{
        k: "asserted"
        for k in (
            "identity", "context", "human_decision", "decision_record", "marker", "model",
            "redaction", "repair", "hold", "hold_release",
        )
    },
    "injected": "synthetic",
}

_fixed_ts = "2031-04-02T10:15:30.123456+00:00"


def now() -> str:
    return datetime.now(UTC).isoformat()


def esc(key: str) -> str:
    return key.replace("~", "~0").replace(".", "~1")


def unesc(part: str) -> str:
    return part.replace("~1", ".").replace("~0", "~")


def committed_paths(data: dict[str, Any]) -> list[tuple[str, Any]]:
    """The two-level paths of §4.1 with the values they commit."""
    paths: list[tuple[str, Any]] = []
    for key, value in data.items():
        if isinstance(value, dict) and value:
            paths.extend((esc(key) + "." + esc(sub), item) for sub, item in value.items())
        else:
            paths.append((esc(key), value))
    return paths


def entry_body(entry: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in entry.items() if k not in ("hash", "data", "salts", "redacted")}


def rehash(entry: dict[str, Any]) -> dict[str, Any]:
    """Recompute ``hash`` after a test edited a hashed field (to reach later checks)."""
    entry["hash"] = chain_hash(entry["alg"], canonicalize(entry_body(entry)))
    return entry


def make_entry(
    run_id: str, step: int, prev: str, kind: str, data: dict[str, Any], *,
    prov: str | None = None, alg: str = "blake2b-256", ts: str | None = None, ctx: str | None = None,
) -> dict[str, Any]:
    """Build one entry as §4 'Building an entry' says."""
    salts: dict[str, str] = {}
    commitments: dict[str, str] = {}
    for path, value in committed_paths(data):
        salt = new_salt()
        salts[path] = salt.hex()
        commitments[path] = commitment(alg, salt, value)
    entry: dict[str, Any] = {
        "v": 2, "alg": alg, "run_id": run_id, "step": step, "kind": kind,
        "prov": prov or DEFAULT_PROV[kind], "ts": ts or now(), "prev": prev,
    }
    if ctx is not None:
        entry["ctx"] = ctx
    entry["commitments"] = commitments
    entry["hash"] = chain_hash(alg, canonicalize(entry))
    entry["data"] = copy.deepcopy(data)
    if salts:
        entry["salts"] = salts
    return entry


def strip_paths(entry: dict[str, Any], paths: Iterable[str]) -> None:
    """Delete values and salts, keep husks, add markers (§6 store redaction step 2)."""
    data = entry.setdefault("data", {})
    salts = entry.setdefault("salts", {})
    for path in paths:
        top, dot, sub = path.partition(".")
        top = unesc(top)
        if dot:
            data[top].pop(unesc(sub), None)  # the {} husk stays
        else:
            data.pop(top, None)
        salts.pop(path, None)
    if not salts:
        del entry["salts"]
    entry["redacted"] = sorted(set(entry.get("redacted", [])) | set(paths))


def checkpoint_body(cp: dict[str, Any]) -> dict[str, Any]:
    keys = ("run_id", "seq", "steps", "head_hash", "prev_checkpoint", "alg", "key_id")
    return {k: cp.get(k) for k in keys}


def sign_checkpoint(cp: dict[str, Any], key: SigningKey) -> dict[str, Any]:
    cp["signature"] = key.sign(canonicalize(checkpoint_body(cp))).hex()
    return cp


class Run:
    """A run being recorded: entries, a checkpoint after every append, anchors."""

    def __init__(
        self, run_id: str = "run-1", *, alg: str = "blake2b-256",
        recorder: SigningKey | None = None, checkpoints: bool = True,
    ) -> None:
        self.run_id = run_id
        self.alg = alg
        self.recorder = recorder
        self.mint = checkpoints and recorder is not None
        self.entries: list[dict[str, Any]] = []
        self.checkpoints: list[dict[str, Any]] = []
        self.anchors: list[dict[str, Any]] = []

    @property
    def head(self) -> str:
        return self.entries[-1]["hash"] if self.entries else GENESIS

    def append(self, kind: str, data: dict[str, Any] | None = None, **fields: Any) -> int:
        step = len(self.entries)
        fields.setdefault("alg", self.alg)
        self.entries.append(make_entry(self.run_id, step, self.head, kind, data or {}, **fields))
        if self.mint:
            self.checkpoint()
        return step

    def seal(self) -> int:
        return self.append("run_end", {"steps": len(self.entries) + 1})

    def redact(self, *targets: tuple[int, str], by: str = "dpo") -> int:
        """Store redaction: the claim first, then the markers."""
        step = self.append("redaction", {"fields": [f"{i}:{p}" for i, p in targets], "by": by})
        for index, path in targets:
            strip_paths(self.entries[index], [path])
        return step

    def checkpoint(self, key: SigningKey | None = None) -> dict[str, Any]:
        key = key or self.recorder
        assert key is not None
        prev = self.checkpoints[-1] if self.checkpoints else None
        cp = {
            "run_id": self.run_id,
            "seq": len(self.checkpoints),
            "steps": len(self.entries),
            "head_hash": self.head,
            "prev_checkpoint": GENESIS if prev is None
            else chain_hash(prev["alg"], canonicalize(checkpoint_body(prev))),
            "alg": self.alg,
            "key_id": key.key_id,
            "ts": now(),
            "public_key": key.public_hex,
        }
        self.checkpoints.append(sign_checkpoint(cp, key))
        return cp

    def worm_anchor(self, key: SigningKey | None = None) -> dict[str, Any]:
        key = key or self.recorder
        assert key is not None
        anchor = {
            "type": "worm", "run_id": self.run_id, "steps": len(self.entries),
            "head_hash": self.head, "alg": self.alg, "key_id": key.key_id, "anchored_at": now(),
        }
        anchor["public_key"] = key.public_hex
        anchor["signature"] = key.sign(canonicalize(worm_body(anchor))).hex()
        self.anchors.append(anchor)
        return anchor

    def rfc3161_anchor(self, token: bytes, nonce: int | None = None) -> dict[str, Any]:
        """Anchor the current head with a TimeStampToken obtained for it."""
        anchor: dict[str, Any] = {
            "type": "rfc3161", "run_id": self.run_id, "steps": len(self.entries),
            "head_hash": self.head, "hash_alg": "sha256",
            "token": base64.b64encode(token).decode("ascii"),
        }
        if nonce is not None:
            anchor["nonce"] = nonce
        self.anchors.append(anchor)
        return anchor

    def bundle(
        self, key: SigningKey | None = None, *, export_redact: Iterable[tuple[int, str]] = (),
    ) -> dict[str, Any]:
        """The JSON-form bundle; export-time redaction happens before signing."""
        bundle: dict[str, Any] = {
            "format": FORMAT,
            "run_id": self.run_id,
            "chain": {"head_hash": self.head},
            "entries": copy.deepcopy(self.entries),
        }
        if self.checkpoints:
            bundle["checkpoints"] = copy.deepcopy(self.checkpoints)
        if self.anchors:
            bundle["anchors"] = copy.deepcopy(self.anchors)
        for index, path in export_redact:
            strip_paths(bundle["entries"][index], [path])
        if key is not None:
            sign_bundle(bundle, key)
        return bundle


def worm_body(anchor: dict[str, Any]) -> dict[str, Any]:
    keys = ("type", "run_id", "steps", "head_hash", "alg", "key_id", "anchored_at")
    return {k: anchor.get(k) for k in keys}


def redactions_of(entries: Iterable[dict[str, Any]]) -> dict[str, list[str]]:
    return {str(e["step"]): sorted(e["redacted"]) for e in entries if e.get("redacted")}


def signed_body(container: dict[str, Any], signature: dict[str, Any], redactions: dict[str, list[str]]) -> dict[str, Any]:
    body = {k: container[k] for k in ("format", "run_id", "chain")}
    body.update({k: signature[k] for k in ("signed_at", "key_id") if k in signature})
    body.update({k: container[k] for k in ("checkpoints", "anchors") if k in container})
    if redactions:
        body["redactions"] = redactions
    return body


def sign_bundle(
    container: dict[str, Any], key: SigningKey, entries: Iterable[dict[str, Any]] | None = None,
    *, omit: Iterable[str] = (),
) -> dict[str, Any]:
    """Attach the detached signature (§9); ``entries`` defaults to the container's.

    ``omit`` leaves out ``signed_at``/``key_id``, which a verifier then leaves out of the body.
    """
    signature = {"algorithm": "ed25519", "key_id": key.key_id, "public_key": key.public_hex, "signed_at": now()}
    for name in omit:
        del signature[name]
    redactions = redactions_of(container["entries"] if entries is None else entries)
    signature["signature"] = key.sign(canonicalize(signed_body(container, signature, redactions))).hex()
    container["signature"] = signature
    return container


def dumps(value: Any) -> bytes:
    """Any valid JSON layout works for a verifier; canonical bytes are the simplest."""
    return canonicalize(value)


def to_jsonl(bundle: dict[str, Any], key: SigningKey | None = None) -> bytes:
    """The JSONL form: header line, then one entry per line, ending with a newline (§10.1)."""
    header = {k: v for k, v in bundle.items() if k not in ("entries", "signature")}
    header["format"] = FORMAT_JSONL
    if key is not None:
        sign_bundle(header, key, entries=bundle["entries"])
    lines = [dumps(header)] + [dumps(e) for e in bundle["entries"]]
    return b"\n".join(lines) + b"\n"


def pae(payload_type: str, payload: bytes) -> bytes:
    t = payload_type.encode()
    return b"DSSEv1 " + str(len(t)).encode() + b" " + t + b" " + str(len(payload)).encode() + b" " + payload


def envelope(statement: dict[str, Any], key: SigningKey) -> dict[str, Any]:
    payload = canonicalize(statement)
    return {
        "payloadType": PAYLOAD_TYPE,
        "payload": base64.b64encode(payload).decode(),
        "signatures": [{
            "keyid": key.key_id,
            "public_key": key.public_hex,
            "sig": base64.b64encode(key.sign(pae(PAYLOAD_TYPE, payload))).decode(),
        }],
    }


def run_statement(bundle: dict[str, Any]) -> dict[str, Any]:
    return {
        "_type": "https://in-toto.io/Statement/v1",
        "subject": [{"name": bundle["run_id"], "digest": {"head": bundle["chain"]["head_hash"]}}],
        "predicateType": RUN_PREDICATE,
        "predicate": bundle,
    }


def to_dsse(bundle: dict[str, Any], key: SigningKey) -> dict[str, Any]:
    """A DSSE envelope; the inner bundle is signed by the same key (§10.2)."""
    inner = copy.deepcopy(bundle)
    sign_bundle(inner, key)
    return envelope(run_statement(inner), key)


# --- forks and bags ----------------------------------------------------------


def fork_run(source: Run, run_id: str, at_step: int, **kwargs: Any) -> Run:
    """A run whose first entry is a fork of ``source`` at ``at_step``."""
    run = Run(run_id, alg=kwargs.pop("alg", source.alg), **kwargs)
    prefix = GENESIS if at_step == 0 else source.entries[at_step - 1]["hash"]
    run.append("fork", {"source_run": source.run_id, "at_step": at_step, "source_prev_hash": prefix})
    return run


def _sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def graph_of(bundles: dict[str, dict[str, Any]], root: str) -> dict[str, Any]:
    """Nodes, roles and edges derived from the fork entries (§10.3)."""
    nodes, edges = [], []
    for rid, bundle in bundles.items():
        fork = next((e["data"] for e in bundle["entries"] if e["kind"] == "fork"), None)
        in_bag = fork is not None and fork.get("source_run") in bundles
        nodes.append({
            "run_id": rid, "bundle": f"runs/{rid}.bundle.json",
            "head_hash": bundle["chain"]["head_hash"], "role": "fork" if in_bag else "original",
        })
        if fork is not None and in_bag:
            edges.append({k: fork[k] for k in ("source_run", "at_step", "source_prev_hash")} | {"child": rid})
    return {"format": "bitexact-provenance-graph/1", "root": root, "nodes": nodes, "edges": edges,
            "fork_matrices": [], "excluded": []}


def write_bag(
    directory: Path, bundles: dict[str, dict[str, Any]], root: str, key: SigningKey | None = None,
    *, graph: dict[str, Any] | None = None,
) -> Path:
    """Write a provenance bag; ``graph`` overrides the derived one (to test its checks)."""
    if directory.exists():
        shutil.rmtree(directory)
    (directory / "data" / "runs").mkdir(parents=True)
    for rid, bundle in bundles.items():
        (directory / "data" / "runs" / f"{rid}.bundle.json").write_bytes(dumps(bundle))
    graph = graph if graph is not None else graph_of(bundles, root)
    (directory / "data" / "provenance-graph.json").write_bytes(dumps(graph))
    if key is not None:
        statement = {
            "_type": "https://in-toto.io/Statement/v1",
            "subject": [{"name": n["run_id"], "digest": {"head": n["head_hash"]}} for n in graph["nodes"]],
            "predicateType": GRAPH_PREDICATE,
            "predicate": graph,
        }
        (directory / "data" / "attestations").mkdir()
        (directory / "data" / "attestations" / "provenance.dsse.json").write_bytes(dumps(envelope(statement, key)))
    (directory / "bagit.txt").write_bytes(b"BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n")
    write_bag_info(directory, root)
    write_manifests(directory)
    return directory


def write_bag_info(directory: Path, root: str) -> None:
    files = [p for p in (directory / "data").rglob("*") if p.is_file()]
    size = sum(p.stat().st_size for p in files)
    (directory / "bag-info.txt").write_text(
        f"External-Identifier: {root}\nBagging-Date: {date.today().isoformat()}\n"
        f"Payload-Oxum: {size}.{len(files)}\nBag-Software-Agent: BitExact\n"
    )


def write_manifests(directory: Path) -> None:
    """(Re)write both manifests, as a producer would after changing payload or tag files."""
    rows = sorted(p.relative_to(directory).as_posix() for p in (directory / "data").rglob("*") if p.is_file())
    (directory / "manifest-sha256.txt").write_text(
        "".join(f"{_sha256_file(directory / r)}  {r}\n" for r in rows)
    )
    tags = ("bagit.txt", "bag-info.txt", "manifest-sha256.txt")
    (directory / "tagmanifest-sha256.txt").write_text(
        "".join(f"{_sha256_file(directory / t)}  {t}\n" for t in tags)
    )


# --- streaming, for large bundles ----------------------------------------------


def stream_jsonl(
    path: Path, run_id: str, datas: Iterator[tuple[str, dict[str, Any]]], *,
    key: SigningKey, recorder: SigningKey, alg: str = "blake2b-256", checkpoint_every: int = 1000,
    seal: bool = True,
) -> int:
    """Write a signed JSONL bundle of ``(kind, data)`` entries in constant memory; returns the count."""
    body_path = path.with_suffix(path.suffix + ".body")
    run = Run(run_id, alg=alg, recorder=recorder, checkpoints=False)
    head, count = GENESIS, 0
    with body_path.open("wb") as body:
        def emit(kind: str, data: dict[str, Any]) -> None:
            nonlocal head, count
            entry = make_entry(run_id, count, head, kind, data, alg=alg, ts=_fixed_ts)
            body.write(dumps(entry) + b"\n")
            head, count = entry["hash"], count + 1
            if count % checkpoint_every == 0:
                _checkpoint_at(run, count, head)
        for kind, data in datas:
            emit(kind, data)
        if seal:
            emit("run_end", {"steps": count + 1})
    if count % checkpoint_every:
        _checkpoint_at(run, count, head)
    header: dict[str, Any] = {"format": FORMAT_JSONL, "run_id": run_id, "chain": {"head_hash": head},
                              "checkpoints": run.checkpoints}
    sign_bundle(header, key, entries=())
    with path.open("wb") as out, body_path.open("rb") as entries_file:
        out.write(dumps(header) + b"\n")
        shutil.copyfileobj(entries_file, out, 1 << 20)
    body_path.unlink()
    return count


def _checkpoint_at(run: Run, steps: int, head: str) -> None:
    key = run.recorder
    assert key is not None
    prev = run.checkpoints[-1] if run.checkpoints else None
    cp = {
        "run_id": run.run_id, "seq": len(run.checkpoints), "steps": steps, "head_hash": head,
        "prev_checkpoint": GENESIS if prev is None else chain_hash(prev["alg"], canonicalize(checkpoint_body(prev))),
        "alg": run.alg, "key_id": key.key_id, "ts": _fixed_ts, "public_key": key.public_hex,
    }
    run.checkpoints.append(sign_checkpoint(cp, key))


def relink(bundle: dict[str, Any]) -> dict[str, Any]:
    """Re-chain every entry and the head after a test edited hashed fields (a forger's move)."""
    prev = GENESIS
    for entry in bundle["entries"]:
        entry["prev"] = prev
        prev = rehash(entry)["hash"]
    bundle["chain"]["head_hash"] = prev
    return bundle
