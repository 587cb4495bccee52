"""A small pytest suite for the conformance report's own tests: the ``uas`` marker, and the modules given."""

from __future__ import annotations

import textwrap
from pathlib import Path

_CONFTEST = '''
def pytest_configure(config):
    config.addinivalue_line("markers", "uas(*ids): requirement ids")
'''


def probe_suite(root: Path, modules: dict[str, str]) -> Path:
    """``root/suite`` holding a conftest that registers ``uas`` and each module (name -> source, dedented)."""
    suite = root / "suite"
    suite.mkdir()
    (suite / "conftest.py").write_text(_CONFTEST)
    for name, source in modules.items():
        (suite / name).write_text(textwrap.dedent(source))
    return suite
