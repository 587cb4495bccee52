"""Offline verifier edges (the seventh review): each test is a bug it found, fixed."""

from __future__ import annotations

import hashlib
import os
import resource
import subprocess
from pathlib import Path

import pytest
from cli.real_command import BITEXACT, command_env

from bitexact.crypto import SigningKey

from .conftest import sample_run
from .producer import fork_run, write_bag


def _tag_manifest(bag: Path, names: tuple[str, ...]) -> None:
    """Rewrite the tag manifest over ``names`` as they now are (it need not list every tag file)."""
    rows = [f"{hashlib.sha256((bag / name).read_bytes()).hexdigest()}  {name}\n" for name in names]
    (bag / "tagmanifest-sha256.txt").write_text("".join(rows))


def _limited() -> None:  # the address space a bounded read needs, with room; an unbounded one dies here
    resource.setrlimit(resource.RLIMIT_AS, (2 * 1024**3, 2 * 1024**3))


@pytest.mark.parametrize(("where", "name"), [("payload", "zeros.json"), ("bag-info", "bag-info.txt")])
def test_bag_file_that_is_an_endless_device_is_refused_in_bounded_memory(
    tmp_path: Path, bundle_key: SigningKey, where: str, name: str
) -> None:
    """A bag (a directory from someone else) holding a link to /dev/zero as a payload file listed in its
    manifest, or as a bag-info.txt its tag manifest does not list, was read whole to hash it: memory grew until the machine ran out (under a
    memory limit: "FAIL: malformed provenance bundle: MemoryError()"). No bag file is read past the largest
    document the verifier reads (256 MiB), as for every other input."""
    root = sample_run(None, run_id="root")
    child = fork_run(root, "child", 3)
    child.seal()
    bag = write_bag(tmp_path / "bag", {"root": root.bundle(bundle_key), "child": child.bundle(bundle_key)}, "root",
                    bundle_key)
    if where == "payload":
        (bag / "data" / "fork-matrix").mkdir()
        os.symlink("/dev/zero", bag / "data" / "fork-matrix" / name)
        with (bag / "manifest-sha256.txt").open("a") as manifest:
            manifest.write(f"{'0' * 64}  data/fork-matrix/{name}\n")
        _tag_manifest(bag, ("bagit.txt", "bag-info.txt", "manifest-sha256.txt"))
    else:
        (bag / name).unlink()
        os.symlink("/dev/zero", bag / name)
        _tag_manifest(bag, ("bagit.txt", "manifest-sha256.txt"))
    done = subprocess.run([BITEXACT, "verify", str(bag)], env=command_env(tmp_path / "home"), capture_output=True,
                          text=True, timeout=120, check=False, preexec_fn=_limited)
    assert (done.returncode, done.stdout) == (1, f"FAIL: cannot read {name}: File too large\n"), done.stderr[-2000:]


@pytest.mark.parametrize("run_id", ["root\u2028a", "root\x1ca", "root\x85"])
def test_bag_root_run_id_holding_a_unicode_line_separator_matches_bag_info(
    tmp_path: Path, bundle_key: SigningKey, run_id: str
) -> None:
    """bag-info.txt was split with str.splitlines, which also breaks at U+2028, U+0085, \\x1c and the like:
    a conforming bag whose root run id holds one read back a cut External-Identifier and FAILed ("'root' is
    not the graph root"). BagIt tag-file lines end with LF, CR or CRLF only."""
    from bitexact.evidence.verify import Pins, verify_path

    root = sample_run(None, run_id=run_id)
    bag = write_bag(tmp_path / "bag", {run_id: root.bundle(bundle_key)}, run_id, bundle_key)
    assert verify_path(bag, Pins()).line.startswith("OK: provenance bundle rooted at ")
