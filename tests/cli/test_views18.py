"""What a CLI audit of the eighteenth session left: our own glyphs on a stream that is not UTF-8, `sessions
unify`'s warnings, and `--json` on `sessions unify` and `capture policy digest` (real subprocesses)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bitexact.capture import load_policy
from cli.real_command import demo_run, run_bitexact

_OUR_GLYPHS = re.compile(r"\\u2713|\\u2192|\\u2026|\\xb7|\\xd7")
"""How ✓ → … · × printed as backslashreplace writes them on an ASCII stream."""

_ASCII = {"PYTHONIOENCODING": "ascii"}


@pytest.fixture(scope="module")
def demo_home(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A data directory holding the demo's run."""
    home = tmp_path_factory.mktemp("views18") / "home"
    return home, demo_run(home)


def _ascii_output(home: Path, *args: str) -> str:
    result = run_bitexact(home, *args, **_ASCII)
    assert result.returncode == 0, result.stderr
    return result.stdout + result.stderr


def test_demo_on_an_ascii_stream_prints_no_escapes_of_our_glyphs(tmp_path: Path) -> None:
    """The summaries' arrows and dots and the ellipsis of a clipped one printed as ``\\u2192``, ``\\xb7`` and
    ``\\u2026``: they are ``->``, ``-`` and ``...`` there, and a clipped summary keeps its width."""
    out = _ascii_output(tmp_path / "home", "demo")
    assert not _OUR_GLYPHS.search(out), out
    assert "lookup_policy() -> ok" in out and "GET /v1/claims/CLM-4471 -> 200" in out
    meta = next(line for line in out.splitlines() if "claims-triage-demo" in line)
    assert "claims-triage-demo - python" in meta and " - policy " in meta
    cell = meta.split("|")[4].strip()  # step, kind, prov, summary
    assert cell.endswith("...") and len(cell) == 72, cell


def test_show_export_runs_on_an_ascii_stream(demo_home: tuple[Path, str], tmp_path: Path) -> None:
    home, run_id = demo_home
    shown = _ascii_output(home, "show", run_id)
    assert f"{run_id} - 8 steps - sealed" in shown and "lookup_policy() -> ok" in shown
    exported = _ascii_output(home, "export", run_id, "-o", str(tmp_path / "b.json"))
    assert exported.startswith(f"ok exported {run_id} (8 steps, json)"), exported
    for out in (shown, exported, _ascii_output(home, "runs")):
        assert not _OUR_GLYPHS.search(out), out


def test_show_json_keeps_the_summary_whatever_the_stream(demo_home: tuple[Path, str]) -> None:
    """A summary in a JSON document is the same text on any stream: JSON escapes what ASCII cannot carry."""
    home, run_id = demo_home
    steps = json.loads(run_bitexact(home, "show", run_id, "--json", **_ASCII).stdout)["steps"]
    assert steps[3]["summary"] == "lookup_policy() → ok"


def test_redact_and_keys_rotate_on_an_ascii_stream(tmp_path: Path) -> None:
    home = tmp_path / "home"
    run_id = demo_run(home)
    redacted = _ascii_output(home, "redact", run_id, "--field", "3:result.policy", "--by", "dpo:alice",
                             "--reason", "erasure request 118")
    assert redacted.startswith("ok redacted 1 field(s)"), redacted
    rotated = _ascii_output(home, "keys", "rotate")
    assert rotated.startswith("ok rotated: "), rotated
    for out in (redacted, rotated):
        assert not _OUR_GLYPHS.search(out), out


def test_recorded_data_is_still_escaped_on_an_ascii_stream(tmp_path: Path) -> None:
    """Deliberate, and unchanged: recorded text the stream cannot carry is shown as escapes, exactly."""
    home = tmp_path / "home"
    run_id = demo_run(home)
    _ascii_output(home, "redact", run_id, "--field", "3:result.policy", "--by", "dpo:zoë",
                  "--reason", "erasure request → 118")
    shown = _ascii_output(home, "show", run_id)
    assert "by dpo:zo\\xeb: erasure request \\u2192 118" in shown, shown  # recorded: not ours


def test_utf8_stream_keeps_the_glyphs(demo_home: tuple[Path, str]) -> None:
    home, run_id = demo_home
    shown = run_bitexact(home, "show", run_id).stdout
    assert f"{run_id} · 8 steps · sealed" in shown and "lookup_policy() → ok" in shown


def _invalid_agent_log(root: Path, lines: int) -> Path:
    root.mkdir()
    (root / "agent-session.jsonl").write_text("".join(f"not json {i}\n" for i in range(lines)))
    return root


def test_unify_lists_the_first_warnings_and_counts_the_rest(tmp_path: Path) -> None:
    """Every warning was printed: 127k lines for an invalid agent log. The file keeps them all."""
    root = _invalid_agent_log(tmp_path / "art", 500)
    out = tmp_path / "aw_session.jsonl"
    result = run_bitexact(tmp_path / "home", "sessions", "unify", str(root), "-o", str(out))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "warnings: 501" in lines
    listed = [line for line in lines if "malformed_jsonl" in line]
    assert len(listed) == 30 and listed[0] == "  agent-session.jsonl:1: malformed_jsonl: line 1: invalid JSON; record skipped"
    assert lines[-1] == f"  ... 471 more warnings; all 501 are in {out} as session.collection_warning records"
    assert len(lines) < 45
    records = [json.loads(line) for line in out.read_text().splitlines()]
    kept = [r for r in records if r.get("type") == "session.collection_warning"]
    assert len(kept) == 501


def test_unify_json(tmp_path: Path) -> None:
    root = _invalid_agent_log(tmp_path / "art", 40)
    out = tmp_path / "aw_session.jsonl"
    result = run_bitexact(tmp_path / "home", "sessions", "unify", str(root), "-o", str(out), "--json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["path"] == str(out) and document["bytes"] == out.stat().st_size
    assert document["records"] == len(out.read_text().splitlines())
    assert document["warnings"] == 41 == document["coverage"]["warningCount"]
    assert document["coverage"]["sources"][0]["path"] == "agent-session.jsonl"
    assert result.stderr == ""


def test_capture_policy_digest_json(tmp_path: Path) -> None:
    result = run_bitexact(tmp_path / "home", "capture", "policy", "digest", "pci", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"digest": load_policy("pci", env={}).digest}
    off = run_bitexact(tmp_path / "home", "capture", "policy", "digest", "off", "--json")
    assert off.returncode == 1 and "has no digest" in off.stderr
    assert json.loads(off.stdout) == {"error": "the policy off has no digest (run_meta records `off`)", "exit": 1}
