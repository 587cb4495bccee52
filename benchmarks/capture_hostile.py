"""The credentials detector on hostile text: 1 MiB of one short pattern repeated, against agent text.

    .venv/bin/python benchmarks/capture_hostile.py [--mib 1]

Each row repeats a fragment that opens a candidate for one of the detector's
rules (``password=[``, ``%3D``, a PEM BEGIN line...) until the text is
``--mib`` MiB, and prints the detector's time per MiB (best of 3, no
deadline) and its ratio to the same detector on mixed agent text of the
same size (the baseline, measured in the same run). A rule that reads the
same text again for every candidate shows as a row many times the baseline;
the policy's budget (1,000 ms per MiB by default) would withhold such a step.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from bitexact.capture.budget import Deadline
from bitexact.capture.detectors import CredentialsDetector

sys.path.insert(0, str(Path(__file__).resolve().parent))
from capture_scan import mixed_text  # noqa: E402 - the agent text the scan benchmark uses

FRAGMENTS = ("password=[", "'password': [", "{password: [", ",password:(", "password => [", "%3D", "a%3D",
             "-----BEGIN PRIVATE KEY-----\n", "<a ", "<password>", ",x", ",a:", "a=", "--a ", "-u ", "-u a:b ", "-H 'a: ",
             "ghp_", "eyJ", "sk-", "curl -u a:b ", "mysql -pa ", "-p ", "machine a login b ", "default login ",
             "<password><![CDATA[", "sqlplus a/b ", "\nconn a/b ", "userid=a/b ", "git config a.token b ",
             "poetry config ", "mysql -px\n", "a/b@ ", ".pnpm/lodash@4.17.21/", "sshpass -p a ",
             'mysql -px "\\')


def _ms_per_mib(text: str, mib: float) -> float:
    detector = CredentialsDetector()
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        detector.find(text, Deadline.unlimited())
        best = min(best, time.perf_counter() - start)
    return best * 1000 / mib


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=float, default=1.0)
    args = parser.parse_args()
    size = int(args.mib * (1 << 20))
    baseline = _ms_per_mib(mixed_text(size), args.mib)
    print(f"{'text (repeated to ' + str(args.mib) + ' MiB)':<40} {'ms/MiB':>9} {'x agent text':>13}")
    print(f"{'mixed agent text (baseline)':<40} {baseline:>9.1f} {1.0:>13.2f}")
    for fragment in FRAGMENTS:
        text = (fragment * (size // len(fragment) + 1))[:size]
        ms = _ms_per_mib(text, args.mib)
        print(f"{fragment!r:<40} {ms:>9.1f} {ms / baseline:>13.2f}")


if __name__ == "__main__":
    main()
