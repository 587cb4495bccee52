"""What docs/sdk.md, docs/store.md, docs/architecture.md and README.md claim, checked against the code.

Each test quotes a claim a review found false (the document or the code was
then corrected) and asserts it, so the two cannot drift apart again unseen.
"""

from __future__ import annotations

import inspect
import logging
import re
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
SOURCE = ROOT / "src" / "bitexact"


def _entries(run_id: str | None) -> list[dict[str, Any]]:
    from bitexact.sdk.stores import recorder_for

    assert run_id is not None
    recorder, _ = recorder_for()
    return list(recorder.store.entries(run_id))


def _nested(levels: int, leaf: Any) -> Any:
    value = leaf
    for _ in range(levels):
        value = [value]
    return value


# -- docs/sdk.md ----------------------------------------------------------------------------------


def test_sdk_value_nested_past_125_levels_is_a_declared_gap_not_a_partial_entry(sdk_home: Path) -> None:
    """docs/sdk.md, "Limits (known)":

    "A value nesting deeper than the evidence allows (125 levels) is refused by
    the write path: a declared `invalid_argument` gap, not a partial entry."

    Holds only when orjson writes the value natively. A deep value holding
    anything orjson hands to the slow converter (here an integer past 2^53 - 1,
    the same happens for a NaN or a non-string key) is cut at
    ``jsonable.MAX_DEPTH`` (120) and its deeper part recorded as its repr
    text: a partial entry lands in the chain and no gap is declared.
    """
    import bitexact

    with bitexact.run(name="deep") as r:
        handle = r.record("tool_call", {"tool": "deep", "args": _nested(130, 2**60)})
        run_id = r.run_id
    assert handle.gap is not None and handle.gap.cause == "invalid_argument", (
        "a 130-level value was recorded, not declared a gap")
    assert [e for e in _entries(run_id) if e["kind"] == "tool_call"] == [], "a partial entry is in the chain"


def _record_without_slots(home: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[list[Path], list[str], Any]:
    """A journal_small run whose host key is unusable (inside the data directory: refused), so it has no
    slots; records one small and one large (2 MiB) entry. Returns the journal files written, the SDK's
    warnings and the large entry's handle."""
    import bitexact

    run_module = sys.modules["bitexact.sdk.run"]
    monkeypatch.setenv("BITEXACT_HOST_KEY", str(home / "inside-the-data-dir.host.key"))
    written: list[Path] = []
    original = run_module.write_journal

    def spy(*args: Any, **kwargs: Any) -> Path:
        path = original(*args, **kwargs)
        written.append(path)
        return path

    monkeypatch.setattr(run_module, "write_journal", spy)
    warnings: list[str] = []

    class Catch(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.levelno >= logging.WARNING:
                warnings.append(record.getMessage())

    catcher = Catch()
    logger = logging.getLogger("bitexact.sdk")
    logger.addHandler(catcher)
    try:
        with bitexact.run(name="no-slots", journal_small=True) as r:
            r.record("tool_call", {"tool": "small", "args": ["x"]})
            large = r.record("tool_call", {"tool": "large", "args": ["x" * (2 << 20)]})
            large.result()
    finally:
        logger.removeHandler(catcher)
    return written, warnings, large


def test_sdk_without_slots_writes_small_and_large_entries_in_the_call(
        sdk_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/sdk.md, "Durable in the call": "No slots (the host key or the journal directory is unusable,
    which no journal file could use either ...): small and large entries are both written in the call."
    (It said large ones take files: a journal file needs the same host key and directory.)"""
    written, _, large = _record_without_slots(sdk_home, monkeypatch)
    assert large.written
    assert not written, "no journal file can be written where no slots can be made"


def test_sdk_without_slots_warns_once_for_the_slots_and_once_for_the_large_entry(
        sdk_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/sdk.md: "a warning says so, once per run for the slots and once for the first large entry
    that cannot be journaled". (The large slots, tried again on their own thread, warned a second time.)"""
    _, warnings, _ = _record_without_slots(sdk_home, monkeypatch)
    assert len([w for w in warnings if "journal slots" in w]) == 1, warnings
    assert len([w for w in warnings if "cannot journal large entries" in w]) == 1, warnings


def test_sdk_run_signature_is_as_documented() -> None:
    """docs/sdk.md, "Public API":

    "`bitexact.run(name=None, run_id=None, strict=False,
    capture_nondeterminism=False, home=None, *, recorder=None,
    parent_context=None)`"

    The function takes a further keyword, ``journal_small=None`` (the same
    document uses it later as ``bitexact.run(journal_small=True)``).
    """
    import bitexact

    documented = ["name", "run_id", "strict", "capture_nondeterminism", "home", "recorder", "parent_context",
                  "journal_small"]
    assert list(inspect.signature(bitexact.run).parameters) == documented


# -- docs/architecture.md -------------------------------------------------------------------------


def test_architecture_layer_table_names_every_top_level_module() -> None:
    """docs/architecture.md, "Layers":

    "`tests/test_layers.py` checks every import in the source tree against this table."

    tests/test_layers.py's table has a module the document's table lacks
    (``bitexact.gcpause``, layer 0), so the check is not against "this table",
    and a reader of the document cannot place that module.
    """
    text = (DOCS / "architecture.md").read_text(encoding="utf-8")
    table = text.split("## Layers", 1)[1].split("\n\n", 2)[1]
    named = {m.group(1) for m in re.finditer(r"`bitexact\.([a-z_]+)", table)}
    top_level = {p.name.removesuffix(".py") for p in SOURCE.iterdir()
                 if (p.suffix == ".py" and p.name != "__init__.py") or (p / "__init__.py").is_file()}
    assert top_level - named == set()


def test_architecture_checkpoint_policy_takes_zero_seconds_in_code_as_documented(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/architecture.md: "`seconds` negative, not finite or not a number (`seconds=0`, which the
    environment refuses, is taken in code: every append is then due)"."""
    from bitexact.config import SettingError
    from bitexact.recording import CheckpointPolicy

    monkeypatch.setenv("BITEXACT_CHECKPOINT_SECONDS", "0")
    with pytest.raises(SettingError):
        CheckpointPolicy.from_env()
    assert CheckpointPolicy(seconds=0).due(steps_since=1, last_at=0.0, sealed=False, now=0.0)
    with pytest.raises(ValueError, match="seconds"):
        CheckpointPolicy(seconds=-1)


# -- README.md (settings) / docs/store.md ---------------------------------------------------------


def test_readme_bitexact_home_naming_a_file_is_refused_naming_the_variable(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """README.md, "Settings":

    "A value BitExact cannot use is refused with a message naming the variable."
    and, for `BITEXACT_HOME`: "(a file there, ... is refused, naming the variable; ...)"

    Only the CLI says so. The store's own entry point (docs/store.md:
    ``open_store()  # $BITEXACT_HOME/bitexact.db``) refuses it with
    "cannot open the store at <file>/bitexact.db: [Errno 20] Not a directory",
    and an SDK run declares that same text: neither names BITEXACT_HOME.
    """
    from bitexact.store import StoreError, open_store

    a_file = tmp_path / "not-a-directory"
    a_file.write_text("x")
    monkeypatch.setenv("BITEXACT_HOME", str(a_file))
    with pytest.raises(StoreError) as refused:
        open_store().close()
    assert "BITEXACT_HOME" in str(refused.value)
