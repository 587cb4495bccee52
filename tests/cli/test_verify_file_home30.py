"""`bitexact verify FILE` verifies the bundle whatever BITEXACT_HOME names: a bundle needs no data directory.

An audit set BITEXACT_HOME to a file: `bitexact verify run.bundle.json` printed no verdict at all (an `error:`
line, exit 2, stdout empty), while under a data directory that is a dangling link, or that lies below a file,
the same bundle verified. A relying party verifying someone's bundle has no data directory to get right. The
commands that use the data directory still refuse it (`runs`, exit 2), and a TARGET that is no file is then
no run, "no such file", as under those other unusable data directories.
"""

from __future__ import annotations

import json
from pathlib import Path

from cli.real_command import record_kept_run, run_bitexact



def _bundle(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    record_kept_run(home)
    out = tmp_path / "run.bundle.json"
    done = run_bitexact(home, "export", "kept", "-o", str(out))
    assert done.returncode == 0, done.stderr
    return out


def test_verify_of_a_bundle_file_ignores_a_data_directory_that_is_a_file(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path)
    afile = tmp_path / "afile"
    afile.write_text("not a directory\n", encoding="utf-8")

    verified = run_bitexact(afile, "verify", str(bundle))
    assert verified.returncode == 0, (verified.stdout, verified.stderr)
    assert verified.stdout.startswith("OK: kept - 3 steps"), verified.stdout
    scripted = run_bitexact(afile, "verify", str(bundle), "--json")
    assert scripted.returncode == 0 and json.loads(scripted.stdout)["ok"] is True

    missing = run_bitexact(afile, "verify", "kept")
    assert (missing.returncode, missing.stdout) == (2, "FAIL: no such file: kept\n")
    listed = run_bitexact(afile, "runs")
    assert listed.returncode == 2 and "is a file, not a directory" in listed.stderr
