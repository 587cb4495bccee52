"""The UAS conformance report (T-UAS-001, T-UAS-051), generated from the test suite.

``conformance_report()`` runs the session tests (``tests/sessions``) with
this module loaded as a pytest plugin, which records every test's
``@pytest.mark.uas(...)`` requirement IDs and its outcome.  The report then
lists, per requirement ID: the conformance classes it applies to, the
outcome of its tests, and any declared gap - the parser claims come from
``bitexact.sessions.conformance_claims`` and the reader/bootstrap/merger/
compact claims from ``CLASS_CLAIMS`` below.  Nothing in the outcome column
is written by hand; a requirement without a test says so.

As a pytest plugin: ``pytest -p bitexact.sessions.conformance --uas-results=FILE``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REQUIREMENTS: tuple[tuple[str, str, str], ...] = (
    ("T-UAS-001", "Conformance claims", "2.1"),
    ("T-UAS-002", "Normative scope", "2.1"),
    ("T-UAS-003", "Event array", "3.1"),
    ("T-UAS-004", "Core support and partiality", "3.1"),
    ("T-UAS-005", "Absence is not zero", "3.1"),
    ("T-UAS-006", "Open event vocabulary", "3.2"),
    ("T-UAS-007", "Metadata preservation", "3.2"),
    ("T-UAS-008", "Existing API boundary", "3.3"),
    ("T-UAS-009", "Initialization", "4.1"),
    ("T-UAS-010", "User content", "4.2"),
    ("T-UAS-011", "Assistant channels", "4.3"),
    ("T-UAS-012", "Tool start", "4.4"),
    ("T-UAS-013", "Completion payload", "4.5"),
    ("T-UAS-014", "Explicit failures", "4.5"),
    ("T-UAS-015", "Session accounting and diagnostics", "4.6"),
    ("T-UAS-016", "Adjacent valid records", "5.1"),
    ("T-UAS-017", "Recognition versus parsing", "5.1"),
    ("T-UAS-018", "Per-record conversion", "5.2"),
    ("T-UAS-019", "Observation order", "5.2"),
    ("T-UAS-020", "Exact source text", "5.3"),
    ("T-UAS-021", "Streaming observations", "5.3"),
    ("T-UAS-022", "Tool identity", "5.4"),
    ("T-UAS-023", "Dangling calls", "5.4"),
    ("T-UAS-024", "Orphan completions", "5.4"),
    ("T-UAS-025", "Deterministic normalization", "5.5"),
    ("T-UAS-026", "No input mutation", "5.5"),
    ("T-UAS-027", "Backward-compatible fields", "5.5"),
    ("T-UAS-028", "Canonical results only", "5.5"),
    ("T-UAS-029", "Supported-field round trips", "5.5"),
    ("T-UAS-030", "Names and aliases", "6.1"),
    ("T-UAS-031", "Numeric and cache semantics", "6.1"),
    ("T-UAS-032", "Cumulative per-turn accounting", "6.2"),
    ("T-UAS-033", "Snapshot reconciliation", "6.2"),
    ("T-UAS-034", "No invented totals", "6.3"),
    ("T-UAS-035", "Diagnostic separation", "6.3"),
    ("T-UAS-036", "Claude adapter", "7.1"),
    ("T-UAS-037", "Copilot adapter", "7.2"),
    ("T-UAS-038", "Codex adapter", "7.3"),
    ("T-UAS-039", "Gemini adapter", "7.4"),
    ("T-UAS-040", "Pi adapter", "7.5"),
    ("T-UAS-041", "Custom format detection", "7.6"),
    ("T-UAS-042", "Shared renderer inputs", "8.1"),
    ("T-UAS-043", "Downconversion boundary", "8.1"),
    ("T-UAS-044", "Truthful partial summaries", "8.1"),
    ("T-UAS-045", "User-prompt privacy", "8.1"),
    ("T-UAS-046", "Canonical telemetry source", "8.2"),
    ("T-UAS-047", "Safe telemetry enrichment", "8.2"),
    ("T-UAS-048", "Accounting is not success", "8.2"),
    ("T-UAS-049", "Untrusted presentation", "8.3"),
    ("T-UAS-050", "Explicit limits", "8.3"),
    ("T-UAS-051", "Requirement coverage", "9.1"),
    ("T-UAS-052", "Preservation assertions", "9.1"),
    ("T-UAS-053", "Isolated consumer tests", "9.1"),
    ("T-UAS-054", "Single-file serialization", "3.5"),
    ("T-UAS-055", "Source provenance", "3.5"),
    ("T-UAS-056", "Timestamp ordering", "3.5"),
    ("T-UAS-057", "Untimed and tied observations", "3.5"),
    ("T-UAS-058", "Authoritative source selection", "3.5"),
    ("T-UAS-059", "Partial collection", "3.5"),
    ("T-UAS-060", "Publication boundary", "3.5"),
    ("T-UAS-061", "Essential runtime payloads", "4.7"),
    ("T-UAS-062", "Observation semantics", "4.7"),
    ("T-UAS-063", "Collection coverage", "4.7"),
    ("T-UAS-064", "File-format version header", "3.5"),
    ("T-UAS-065", "Unified trace rendering", "8.5"),
    ("T-UAS-066", "Scoped agent statistics", "8.5"),
    ("T-UAS-067", "Unique execution diagnostics", "4.8"),
    ("T-UAS-068", "Goose adapter", "7.8"),
    ("T-UAS-069", "Structured policy refusals", "4.3"),
    ("T-UAS-070", "Firewall usage purpose; model routing attribution", "4.7"),
    ("T-UAS-071", "Firewall steering notices", "4.7"),
    ("T-UAS-072", "Skill evidence and conflicts", "4.7"),
    ("T-UAS-073", "Sub-agent rows by definition", "7.2"),
    ("T-UAS-074", "Configured model resolution", "4.7"),
    ("T-UAS-075", "Model inventory endpoint state", "4.7"),
    ("T-UAS-076", "Compact vocabulary and projection", "3.8"),
    ("T-UAS-077", "Hard output limits", "3.8"),
    ("T-UAS-078", "Bounded file reading and explicit loss", "3.8"),
    ("T-UAS-079", "Full-session resolution", "3.8"),
    ("T-UAS-080", "Configured model policy", "4.7"),
    ("T-UAS-081", "Baseline estimate", "4.7"),
    ("T-UAS-082", "Identifier-only proxy errors", "4.7"),
)
"""Every requirement ID of the specification, its title and section."""


def _ids(*numbers: int | range) -> tuple[str, ...]:
    out: list[int] = []
    for n in numbers:
        out.extend(n if isinstance(n, range) else [n])
    return tuple(f"T-UAS-{n:03d}" for n in sorted(set(out)))


CLASS_CLAIMS: dict[str, dict[str, Any]] = {
    "R": {
        "name": "Reader/renderer",
        "scope": "conversation Markdown, plain-text and CLI-style summaries; unified-file views; "
                 "audit/logs sub-agent rows (render.subagents)",
        "applicable": _ids(1, 2, 4, 6, 26, 30, 31, 33, 42, 43, 44, 45, 49, 50, 51, 52, 53, 65, 66, 69, 73),
        "partial": {},
        "not_met": {},
    },
    "B": {
        "name": "Bootstrap telemetry adapter",
        "scope": "legacy telemetry projection, best-effort enrichment, canonical persistence",
        "applicable": _ids(1, 2, 26, 33, 46, 47, 48, 49, 50, 51, 52, 53),
        "partial": {},
        "not_met": {},
    },
    "M": {
        "name": "Artifact merger",
        "scope": "aw_session.jsonl from a downloaded runtime root (catalogue in docs/sessions-readers.md); "
                 "pre-upload runtime-mask pass (unify.sanitize)",
        "applicable": _ids(1, 2, 49, 51, 52, range(54, 65), 67, 70, 71, 72, 74, 75, 80, 81, 82),
        "partial": {
            "T-UAS-081": "The specification names computeInferenceAIC but no price table; without a "
                         "caller-supplied pricing function every main request is reported unpriced (never "
                         "zero) and the estimate is incomplete.",
        },
        "not_met": {},
    },
    "Q": {
        "name": "Compact projection",
        "scope": "compact_events (in memory), compact (bounded file reader), transport_envelope and "
                 "resolve_full_session (local artifact directory)",
        "applicable": _ids(1, 2, 51, 76, 77, 78, 79),
        "partial": {
            "T-UAS-079": "Artifact-ID canonicalization, the transport descriptor and run-bound retrieval from a "
                         "local artifact directory are implemented; downloading artifacts and authenticating "
                         "the repository (the GitHub API transport) are outside this library - the caller "
                         "supplies the authenticated RunBinding.",
        },
        "not_met": {},
    },
}
"""Claims of the classes implemented here (the lead may move them into ``conformance_claims``)."""


# ----------------------------------------------------------------- pytest plugin

_RESULTS: dict[str, dict[str, Any]] = {}


def pytest_addoption(parser: Any) -> None:
    """Register ``--uas-results=FILE``."""
    parser.addoption("--uas-results", default=None, help="write UAS marker outcomes as JSON to FILE")


def pytest_collection_modifyitems(session: Any, config: Any, items: list[Any]) -> None:
    """Remember each test's requirement IDs."""
    for item in items:
        ids: list[str] = []
        for marker in item.iter_markers("uas"):
            ids.extend(str(a) for a in marker.args)
        _RESULTS[item.nodeid] = {"ids": sorted(set(ids)), "outcome": "not run"}


def pytest_collectreport(report: Any) -> None:
    """A module that does not even collect is a failure of the suite (its tests never ran)."""
    if report.failed:
        _RESULTS[f"{report.nodeid or '<collection>'} (collection)"] = {"ids": [], "outcome": "failed"}


def pytest_runtest_logreport(report: Any) -> None:
    """Fold setup/call/teardown reports into one outcome per test."""
    entry = _RESULTS.setdefault(report.nodeid, {"ids": [], "outcome": "not run"})
    if report.failed:
        entry["outcome"] = "failed"
    elif report.skipped and entry["outcome"] != "failed":
        entry["outcome"] = "skipped"
    elif report.when == "call" and report.passed and entry["outcome"] == "not run":
        entry["outcome"] = "passed"


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    """Write the collected outcomes when ``--uas-results`` is given."""
    target = session.config.getoption("--uas-results")
    if target:
        Path(target).write_text(json.dumps(_RESULTS, indent=1, sort_keys=True), encoding="utf-8")


# ----------------------------------------------------------------- report


@dataclass(frozen=True)
class RequirementRow:
    """One requirement's line of the report."""

    id: str
    title: str
    section: str
    classes: tuple[str, ...]
    outcome: str
    passed: int
    failed: int
    skipped: int
    gap: str = ""


@dataclass(frozen=True)
class ConformanceReport:
    """The generated report; ``text()`` is what ``bitexact sessions conformance`` prints."""

    tests_dir: str
    tests: int
    claims: dict[str, Mapping[str, Any]]
    rows: tuple[RequirementRow, ...]
    failures: tuple[str, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        """True when no test failed."""
        return not self.failures

    @property
    def untested(self) -> tuple[str, ...]:
        """Requirements a class claims that no test covers ("no test") or whose tests did not run ("not run",
        skipped): coverage the report cannot vouch for (T-UAS-051), which fails the command as a failure does."""
        return tuple(row.id for row in self.rows if row.classes and row.outcome in ("no test", "not run"))

    @property
    def complete(self) -> bool:
        """True when no test failed and every claimed requirement has a test that ran."""
        return self.ok and not self.untested

    def to_json(self) -> dict[str, Any]:
        """The report as one JSON document (``bitexact sessions conformance --json``): the same facts as
        :meth:`text`, for a CI job to read rather than parse."""
        return {
            "tests_dir": self.tests_dir,
            "tests": self.tests,
            "claims": {cls: {"name": claim["name"], "scope": claim.get("scope", ""),
                             "applicable": list(claim["applicable"]),
                             "declared_gaps": sorted({**claim.get("partial", {}), **claim.get("not_met", {})}),
                             "unsupported_mappings": dict(claim.get("unsupported_mappings", {}))}
                       for cls, claim in self.claims.items()},
            "full_pipeline_claimed": False,
            "requirements": [{"id": row.id, "title": row.title, "section": row.section, "classes": list(row.classes),
                              "outcome": row.outcome, "passed": row.passed, "failed": row.failed,
                              "skipped": row.skipped, "gap": row.gap or None} for row in self.rows],
            "failures": list(self.failures),
            "unavailable_coverage": list(self.untested),
            "complete": self.complete,
        }

    def text(self) -> str:
        """The printed report."""
        lines = [f"UAS conformance report — generated from {self.tests} tests in {self.tests_dir}", "", "Claims"]
        for cls, claim in self.claims.items():
            lines.append(f"  {cls}  {claim['name']}: {claim.get('scope', '')}")
            gaps = {**claim.get("partial", {}), **claim.get("not_met", {})}
            lines.append(f"      claimed {len(claim['applicable']) - len(gaps)} of {len(claim['applicable'])} "
                         f"applicable requirements; declared gaps: {', '.join(sorted(gaps)) or 'none'}")
            for name, reason in sorted(claim.get("unsupported_mappings", {}).items()):
                lines.append(f"      unsupported mapping {name}: {reason}")
        lines.append("  F  Full pipeline: not claimed" + (
            " (declared gaps above)" if any(c.get("partial") or c.get("not_met") for c in self.claims.values())
            else ""))
        lines += ["", "Requirements"]
        for row in self.rows:
            tests = f"{row.passed}/{row.passed + row.failed + row.skipped} passed"
            classes = ",".join(row.classes) or "-"
            lines.append(f"  {row.id}  {classes:<9} {row.outcome:<13} {tests:<12} {row.title}")
            if row.gap:
                lines.append(f"             gap: {row.gap}")
        if self.failures:
            lines += ["", "Failing tests"] + [f"  {f}" for f in self.failures]
        counts: dict[str, int] = {}
        for row in self.rows:
            counts[row.outcome] = counts.get(row.outcome, 0) + 1
        lines += ["", "Summary: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))]
        if self.untested:
            lines.append(f"Unavailable coverage: {len(self.untested)} claimed requirement(s) with no test that ran: "
                         + ", ".join(self.untested))
        return "\n".join(lines) + "\n"


def _parser_claims() -> dict[str, Any] | None:
    try:
        from bitexact.sessions import conformance_claims
    except ImportError:
        return None
    claims = dict(getattr(conformance_claims, "CLAIMS", {}))
    if not claims:
        return None
    return {
        "name": "Parser/normalizer",
        "scope": "engines: " + ", ".join(claims.get("engines", ())),
        "applicable": tuple(claims.get("applicable", ())),
        "partial": dict(claims.get("partial", {})),
        "not_met": dict(claims.get("not_met", {})),
        "unsupported_mappings": dict(claims.get("unsupported_mappings", {})),
    }


def all_claims() -> dict[str, dict[str, Any]]:
    """Claims of every class: P from ``conformance_claims``, R/B/M/Q from ``CLASS_CLAIMS``."""
    claims: dict[str, dict[str, Any]] = {}
    parser = _parser_claims()
    if parser is not None:
        claims["P"] = parser
    claims.update(CLASS_CLAIMS)
    return claims


def default_tests_dir() -> Path:
    """``tests/sessions`` of the source checkout this package runs from (``<checkout>/src/bitexact``).

    Never the current directory's: running the suite executes its
    ``conftest.py``, and a report about code found where the command was
    typed is neither the product's nor safe. An installation outside a
    checkout has no session tests: :class:`RuntimeError` says so (name a
    suite explicitly with ``--tests DIR``).
    """
    package = Path(__file__).resolve().parents[1]  # .../src/bitexact
    checkout = package.parents[1]
    candidate = checkout / "tests" / "sessions"
    if package.parent.name == "src" and (checkout / "pyproject.toml").is_file() and candidate.is_dir():
        return candidate
    raise RuntimeError(f"this installation ({package}) has no session tests: they ship with a source "
                       "checkout (run its bitexact), or name a suite with --tests DIR")


def run_suite(tests_dir: Path, *, extra_args: tuple[str, ...] = (), cwd: Path | None = None
              ) -> dict[str, dict[str, Any]]:
    """Run the tests under ``tests_dir`` with this plugin (in ``cwd``, default: this process's) and return
    per-test outcomes.

    Raises :class:`RuntimeError` when the suite cannot run at all: ``tests_dir`` missing, or pytest
    stopping on a usage or internal error (it still writes an empty result, which would read as a
    report of no failures).
    """
    if not Path(tests_dir).is_dir():
        raise RuntimeError(f"{tests_dir} is missing or not a directory (the session tests ship with a "
                           "source checkout: run from its root)")
    with tempfile.TemporaryDirectory() as tmp:
        results = Path(tmp) / "uas-results.json"
        command = [sys.executable, "-m", "pytest", str(tests_dir), "-q", "-p", __name__,
                   f"--uas-results={results}", "-p", "no:cacheprovider", *extra_args]
        # The report is about the product, not the caller's shell: the tests run under the shipped
        # defaults (a BITEXACT_CAPTURE_POLICY=pci deployment would fail tests written for them).
        env = {name: value for name, value in os.environ.items() if not name.startswith("BITEXACT_")}
        env["BITEXACT_UAS_REPORT"] = "1"
        run = subprocess.run(command, env=env, capture_output=True, text=True, check=False, cwd=cwd)
        # pytest's internal error, usage error and "no tests collected": no test outcome at all, which an
        # empty result would report as a suite with no failures.
        if run.returncode in (3, 4, 5):
            last = (run.stderr.strip() or run.stdout.strip() or "no output").splitlines()[-1]
            raise RuntimeError(f"pytest stopped under {tests_dir} (exit {run.returncode}): {last}")
        if not results.is_file():
            raise RuntimeError(f"the test run under {tests_dir} produced no UAS results")
        return json.loads(results.read_text(encoding="utf-8"))


def build_report(results: Mapping[str, Mapping[str, Any]], claims: Mapping[str, Mapping[str, Any]],
                 tests_dir: str) -> ConformanceReport:
    """Fold per-test outcomes into per-requirement rows."""
    by_id: dict[str, list[str]] = {}
    failures = []
    for nodeid, entry in sorted(results.items()):
        for rid in entry.get("ids", []):
            by_id.setdefault(rid, []).append(entry.get("outcome", "not run"))
        if entry.get("outcome") == "failed":
            failures.append(f"{nodeid} [{', '.join(entry.get('ids', []))}]")
    rows = []
    for rid, title, section in REQUIREMENTS:
        classes = tuple(c for c, claim in claims.items() if rid in claim.get("applicable", ()))
        outcomes = by_id.get(rid, [])
        passed, failed = outcomes.count("passed"), outcomes.count("failed")
        skipped = len(outcomes) - passed - failed
        gaps = [f"{c}: {claim[kind][rid]}" for c, claim in claims.items()
                for kind in ("not_met", "partial") if rid in claim.get(kind, {})]
        if failed:
            outcome = "FAIL"
        elif any(rid in claim.get("not_met", {}) for claim in claims.values()):
            outcome = "NOT MET"
        elif gaps:
            outcome = "partial"
        elif passed:
            outcome = "pass"
        elif outcomes:
            outcome = "not run"
        else:
            outcome = "no test" if classes else "not applicable"
        rows.append(RequirementRow(rid, title, section, classes, outcome, passed, failed, skipped, " | ".join(gaps)))
    return ConformanceReport(tests_dir, len(results), dict(claims), tuple(rows), tuple(failures))


def conformance_report(tests_dir: Path | None = None, *, results: Path | None = None) -> ConformanceReport:
    """Run (or read the recorded ``results`` of) the session suite and build the report.

    ``tests_dir`` defaults to the checkout's ``tests/sessions`` (:func:`default_tests_dir`; RuntimeError when
    this installation has none), never the current directory's.
    """
    directory = Path(tests_dir) if tests_dir is not None else default_tests_dir()
    if results is not None:
        outcomes = json.loads(Path(results).read_text(encoding="utf-8"))
    else:
        # The checkout's suite runs from the checkout's root, as its tests expect (`from tests.sessions...`),
        # wherever the command was typed; a suite named explicitly runs where the caller is.
        outcomes = run_suite(directory, cwd=directory.parents[1] if tests_dir is None else None)
    return build_report(outcomes, all_claims(), str(directory))
