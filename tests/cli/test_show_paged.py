"""`bitexact show` draws its rows in pages as it reads them, and `show --json` streams its document.

A run of 100,000 steps took 41 s and 400 MB before the first row of its table appeared (rich measured
and rendered the whole table first), and `--json` built the whole document in memory. The pages join
into the table rich draws of the same rows and column widths, and into the same JSON text; --from and
--limit show a slice of the run.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sqlite3
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from bitexact.cli import cli
from bitexact.cli.paged_table import ROWS_PER_PAGE
from bitexact.cli.summary import clock_of, summarize
from bitexact.crypto.keystore import KeyStore
from bitexact.recording import CheckpointPolicy, Recorder
from bitexact.store import open_store

LONG = "a note far longer than the seventy-two characters a summary keeps, so it is clipped with an ellipsis"
WIDE = "長い注記 " * 20  # wide characters: the 72 kept are 130 cells, wider than the summary column: it wraps


def _record(home: Path, steps: int, *, checkpoint_every: int = 64, varied: bool = True) -> str:
    """A sealed run of ``steps`` steps (run_meta, markers and tool calls, run_end), written in batches."""
    store = open_store(home)
    try:
        recorder = Recorder(store, KeyStore(home).current_or_init(),
                            checkpoints=CheckpointPolicy(every=checkpoint_every, seconds=3600))
        writer = recorder.start(name="paged")
        items: list[tuple[str, dict[str, Any], str | None]] = []
        for i in range(1, steps - 1):
            if varied and i % 7 == 0:
                items.append(("tool_call", {"tool": f"lookup_{i}", "args": [i], "result": {"n": i}}, None))
            else:
                note = LONG if varied and i == 5 else WIDE if varied and i == 6 else f"m{i}"
                items.append(("marker", {"note": note}, None))
            if len(items) == 500:
                writer.append_batch(items)
                items = []
        if items:
            writer.append_batch(items)
        writer.seal()
        return writer.run_id
    finally:
        store.close()


def _invoke(home: Path, *args: str, columns: int = 200) -> Result:
    return CliRunner().invoke(cli, list(args), env={"BITEXACT_HOME": str(home), "COLUMNS": str(columns)},
                              catch_exceptions=False)


def _entries(home: Path, run_id: str) -> list[dict[str, Any]]:
    store = open_store(home)
    try:
        return list(store.entries(run_id))
    finally:
        store.close()


def _widths(output: str) -> list[int]:
    """The columns' widths, read from the header line the command printed."""
    header = next(line for line in output.splitlines() if line.startswith("┃"))
    return [len(cell) - 2 for cell in header.strip("┃").split("┃")]


def _rich_table(title: str, entries: list[dict[str, Any]], widths: list[int], columns: int) -> str:
    """The table as `show` built it before: one rich Table of every row (here at the given widths)."""
    table = Table(title=Text(title))
    for (header, justify, style), width in zip(
            [("step", "right", None), ("kind", "left", "cyan"), ("prov", "left", None), ("ts", "left", None),
             ("summary", "left", None)], widths):
        table.add_column(header, justify=justify, style=style, width=width)  # type: ignore[arg-type]
    for e in entries:
        redacted = f" [magenta]({len(e['redacted'])} redacted)[/]" if e.get("redacted") else ""
        table.add_row(str(e["step"]), e["kind"], e["prov"], escape(clock_of(e["ts"])), escape(summarize(e)) + redacted)
    out = io.StringIO()
    Console(file=out, width=columns, color_system=None, highlight=False, emoji=False).print(table)
    return out.getvalue()


def _redact_a_tool_result(home: Path, run_id: str) -> None:
    result = _invoke(home, "redact", run_id, "--field", "7:result.n", "--by", "dpo:alice", "--reason", "test")
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("columns", [200, 80])
def test_the_pages_join_into_the_table_rich_draws_of_every_row(home: Path, columns: int) -> None:
    run_id = _record(home, 3 * ROWS_PER_PAGE + 40)
    _redact_a_tool_result(home, run_id)
    entries = _entries(home, run_id)
    shown = _invoke(home, "show", run_id, columns=columns)
    assert shown.exit_code == 0, shown.output
    widths = _widths(shown.output)
    # Fixed before the first row: the last step's digits, the run's longest kind ("redaction"), every
    # provenance, an ISO clock; the summary's 72 characters and a redaction count, or what a terminal leaves.
    summary = min(72 + len(" (99 redacted)"), columns - sum(widths[:4]) - 3 * 4 - 4)
    assert widths == [4, len("redaction"), len("synthetic"), len("10:15:30.123"), summary]
    title = f"{run_id} · {len(entries)} steps · sealed"
    assert shown.output == _rich_table(title, entries, widths, columns)
    # The cell that wraps (wide characters) and the redaction count are in it, as rich draws them.
    wrapped = [line for line in shown.output.splitlines() if "長い注記" in line]
    assert len(wrapped) > 1 and "(1 redacted)" in shown.output and "m338" in shown.output


def _json_before(run_id: str, info: dict[str, Any], entries: list[dict[str, Any]]) -> str:
    """`show --json` as it was written before: one json.dumps of the whole document."""
    return json.dumps(
        {"run_id": run_id, "sealed": info["sealed"], "head_hash": info["head_hash"],
         "steps": [{"step": e["step"], "kind": e["kind"], "prov": e["prov"], "ts": e["ts"], "ctx": e.get("ctx"),
                    "summary": summarize(e), "data": e.get("data", {}), "redacted": e.get("redacted", [])}
                   for e in entries]}, indent=2, ensure_ascii=False) + "\n"


def _info(home: Path, run_id: str) -> dict[str, Any]:
    store = open_store(home)
    try:
        info = store.run(run_id)
        return {"sealed": info.sealed, "head_hash": info.head_hash, "steps": info.steps}
    finally:
        store.close()


def test_the_json_is_the_same_text_written_in_pages(home: Path) -> None:
    run_id = _record(home, 600)  # more than two writes of 256 steps
    _redact_a_tool_result(home, run_id)
    shown = _invoke(home, "show", run_id, "--json")
    assert shown.exit_code == 0, shown.output
    assert shown.output == _json_before(run_id, _info(home, run_id), _entries(home, run_id))


def test_from_and_limit_show_a_slice_of_the_table_and_of_the_json(home: Path) -> None:
    run_id = _record(home, 300)
    entries = _entries(home, run_id)
    document = json.loads(_invoke(home, "show", run_id, "--json", "--from", "120", "--limit", "5").output)
    assert [s["step"] for s in document["steps"]] == [120, 121, 122, 123, 124]
    assert document["steps"][0]["summary"] == summarize(entries[120])
    assert {k: document[k] for k in ("run_id", "sealed", "head_hash")} == \
        {"run_id": run_id, "sealed": True, "head_hash": entries[-1]["hash"]}
    # --from alone runs to the end; --limit alone starts at 0; a limit past the end stops there.
    tail = json.loads(_invoke(home, "show", run_id, "--json", "--from", "297").output)["steps"]
    assert [s["step"] for s in tail] == [297, 298, 299]
    head = json.loads(_invoke(home, "show", run_id, "--json", "--limit", "2").output)["steps"]
    assert [s["step"] for s in head] == [0, 1]
    assert [s["step"] for s in json.loads(
        _invoke(home, "show", run_id, "--json", "--from", "298", "--limit", "50").output)["steps"]] == [298, 299]
    table = _invoke(home, "show", run_id, "--from", "120", "--limit", "5")
    assert table.exit_code == 0, table.output
    rows = [line.split("│")[1].strip() for line in table.output.splitlines() if line.startswith("│")]
    assert rows == ["120", "121", "122", "123", "124"]
    assert f"{run_id} · 300 steps · sealed · showing 120 to 124" in table.output
    # The slice's rows are the whole table's rows, drawn alike.
    whole = _invoke(home, "show", run_id).output.splitlines()
    assert [line for line in table.output.splitlines() if line.startswith("│")] == \
        [line for line in whole if line.startswith("│") and line.split("│")[1].strip() in rows]


@pytest.mark.parametrize("as_json", [False, True])
def test_from_past_the_end_or_limit_0_shows_nothing_and_exits_0(home: Path, as_json: bool) -> None:
    run_id = _record(home, 10, varied=False)
    for args, why in ((("--from", "10"), "no step from step 10 (its steps are 0 to 9)"),
                      (("--from", "99999999999"), "no step from step 99999999999 (its steps are 0 to 9)"),
                      (("--limit", "0"), "--limit 0 shows none")):
        shown = _invoke(home, "show", run_id, *args, *(["--json"] if as_json else []))
        assert shown.exit_code == 0, shown.output
        if as_json:
            assert json.loads(shown.output)["steps"] == []
            assert shown.output.endswith('"steps": []\n}\n')  # the text json.dumps writes for no steps
        else:
            assert shown.output == f"{run_id} · 10 steps · sealed: {why}\n"


@pytest.mark.parametrize(("option", "value", "said"), [
    ("--from", "-1", "-1 is negative"),
    ("--limit", "-5", "-5 is negative"),
    ("--from", "x", "'x' is not a whole number"),
    ("--limit", "1.5", "'1.5' is not a whole number"),
    ("--limit", "", "'' is not a whole number"),
    ("--from", "--5", "'--5' is not a whole number"),
])
def test_a_negative_or_non_integer_from_or_limit_exits_2_naming_the_option(
        home: Path, option: str, value: str, said: str) -> None:
    run_id = _record(home, 5, varied=False)
    shown = CliRunner().invoke(cli, ["show", run_id, f"{option}={value}"], env={"BITEXACT_HOME": str(home)})
    assert shown.exit_code == 2, shown.output
    assert f"Invalid value for '{option}': {said}" in shown.output


@pytest.mark.parametrize("as_json", [False, True])
def test_a_damaged_page_prints_the_rows_before_it_then_fails(home: Path, as_json: bool) -> None:
    """The rows are printed as they are read: those before a step the store lost are out, the table (or
    the document) is left unclosed, and the error says which step, exit 1."""
    run_id = _record(home, 300, varied=False)
    with contextlib.closing(sqlite3.connect(home / "bitexact.db")) as conn, conn:
        conn.execute("DELETE FROM entries WHERE run_id = ? AND step = 150", (run_id,))
    shown = CliRunner().invoke(cli, ["show", run_id, *(["--json"] if as_json else [])],
                               env={"BITEXACT_HOME": str(home), "COLUMNS": "200"})
    assert shown.exit_code == 1
    assert f"run {run_id}: step 150 is missing from the store; it is damaged" in shown.stderr
    if as_json:
        assert shown.stdout.rstrip().endswith('"redacted": []\n    }')  # step 149's object, the array unclosed
        assert '"step": 149' in shown.stdout and '"step": 150' not in shown.stdout
        with pytest.raises(json.JSONDecodeError):
            json.loads(shown.stdout)
    else:
        rows = [line for line in shown.stdout.splitlines() if line.startswith("│")]
        assert [row.split("│")[1].strip() for row in rows] == [str(step) for step in range(150)]
        assert "└" not in shown.stdout  # no bottom edge: the table is not whole


def _peak(home: Path, *args: str) -> tuple[int, int]:
    """The peak memory Python allocated while ``bitexact ARGS`` ran in this process (its output to
    /dev/null, so nothing it prints is held), and its exit code."""
    code = 0
    with open(os.devnull, "w", encoding="utf-8") as sink, contextlib.redirect_stdout(sink):
        tracemalloc.start()
        try:
            cli.main(list(args), prog_name="bitexact", standalone_mode=False)
        except SystemExit as exc:
            code = int(exc.code or 0)
        finally:
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
    return peak, code


@pytest.mark.parametrize("args", [(), ("--json",)], ids=["table", "json"])
def test_show_holds_a_page_whatever_the_run_s_length(home: Path, monkeypatch: pytest.MonkeyPatch,
                                                     args: tuple[str, ...]) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    peaks = []
    for steps in (1000, 8000):
        run_id = _record(home, steps, checkpoint_every=4000, varied=False)
        peak, code = _peak(home, "show", run_id, *args)
        assert code == 0
        peaks.append(peak)
    # 8x the steps (a whole table of them held was about 20 MB more) cost no more than a small constant.
    assert peaks[1] < peaks[0] + 512 * 1024, peaks
