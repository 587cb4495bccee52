"""An import under the wrong --engine locked the log: a Claude Code log imported with `--engine codex`
skipped 6 of its 7 records and exited 0, and the right import was then refused for good ("already imported
as run ...") with no word on how to go on. Each test runs the real `bitexact` console script."""

from __future__ import annotations

import json
from pathlib import Path

from cli.real_command import run_bitexact

FIXTURES = Path(__file__).parent / "fixtures"
CLAUDE = FIXTURES / "claude" / "errors_retry_and_denials_without_result.jsonl"
NATIVE = FIXTURES / "copilot" / "native_events_with_extensions_and_task_complete.jsonl"
UNRECOGNIZED = FIXTURES / "custom" / "unrecognized_only.jsonl"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _runs(home: Path) -> list[dict[str, object]]:
    listed = run_bitexact(home, "runs", "--json")
    return json.loads(listed.stdout) if listed.returncode == 0 else []


def test_a_forced_engine_the_detected_one_reads_better_is_refused_before_anything_is_recorded(
        tmp_path: Path) -> None:
    home = tmp_path / "home"
    wrong = run_bitexact(home, "import", "session", str(CLAUDE), "--engine", "codex")
    said = _one_line(wrong.stderr)
    assert wrong.returncode == 2, said  # it exited 0, having recorded 2 events of 8 and skipped 6 records
    assert (f"{CLAUDE.name}: --engine codex skipped or could not map 6 record(s), where the engine detected for"
            " this log, claude, skips 0: it looks like a claude log. Nothing was recorded. Import it with"
            " --engine claude (or without --engine)") in said
    assert _runs(home) == []
    right = run_bitexact(home, "import", "session", str(CLAUDE), "--engine", "claude", "--json")
    assert right.returncode == 0, right.stderr
    assert json.loads(right.stdout)["source"]["engine"] == "claude"


def test_the_same_bytes_again_say_that_no_command_lets_them_in(tmp_path: Path) -> None:
    home = tmp_path / "home"
    first = run_bitexact(home, "import", "session", str(CLAUDE), "--json")
    assert first.returncode == 0, first.stderr
    run_id = json.loads(first.stdout)["run_id"]
    again = run_bitexact(home, "import", "session", str(CLAUDE))
    said = _one_line(again.stderr)
    assert again.returncode == 1, said
    assert (f"was already imported as run {run_id}; inspect it with `bitexact show {run_id}`. A sealed import"
            " stays as it is: no command removes it or lets the same bytes be imported again (`bitexact sessions"
            " parse LOG --engine ENGINE` reads the log without recording it)") in said


def test_a_forced_engine_that_reads_the_log_whole_is_taken_as_given(tmp_path: Path) -> None:
    """Native canonical events read the same under every reader: nothing skipped, nothing to overrule."""
    home = tmp_path / "home"
    result = run_bitexact(home, "import", "session", str(NATIVE), "--engine", "claude", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["source"]["engine"] == "claude"


def test_a_forced_engine_on_a_log_detection_does_not_recognize_is_taken_as_given(tmp_path: Path) -> None:
    home = tmp_path / "home"
    result = run_bitexact(home, "import", "session", str(UNRECOGNIZED), "--engine", "codex", "--json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["source"]["engine"] == "codex" and document["source"]["skipped"] > 0
