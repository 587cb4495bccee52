"""The capture files in force: the policy file, and where the settings and the policy file say the keys are.

Read from the settings alone (``BITEXACT_CAPTURE_KEY``, and the
``hash_only_key`` and ``retired_keys`` of the policy file
``BITEXACT_CAPTURE_POLICY`` names), without loading any key or checking the
policy: the CLI refuses to write over one, and ``bitexact health`` names one
kept inside the data directory, both for a policy that may not even load.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Final

PRESET_NAMES: Final[frozenset[str]] = frozenset({"", "default", "off", "pci"})
"""The values of ``BITEXACT_CAPTURE_POLICY`` that name a shipped policy, not a file (``load_policy`` reads the
same names)."""


def policy_file(env: Mapping[str, str] | None = None) -> str | None:
    """The policy file ``BITEXACT_CAPTURE_POLICY`` names in ``env`` (default: this process's environment), or
    None when it names a shipped policy or is unset."""
    env = os.environ if env is None else env
    chosen = env.get("BITEXACT_CAPTURE_POLICY", "").strip()
    return None if chosen in PRESET_NAMES else chosen


KEY_FILE_SOURCES: Final[tuple[str, ...]] = ("file", "kms_ciphertext")
"""The key sources whose value is a path: a relative one is read from the policy file's directory."""


def anchored(path: str, policy: str | os.PathLike[str] | None) -> str:
    """A key file ``path`` as written in the policy file ``policy``: a relative path is relative to that file's
    directory, as includes of most configuration files are (read against the working directory, one policy
    named a different key, or none, in each process's directory). Unchanged when absolute, or with no file."""
    if policy is None or not path or os.path.isabs(path):
        return path
    return os.path.join(os.path.dirname(os.path.abspath(policy)), path)


def capture_key_files(env: Mapping[str, str] | None = None, *, ciphertexts: bool = True) -> list[str]:
    """The capture key files ``env`` (default: this process's environment) puts in force: plaintext key
    files, and with ``ciphertexts`` the files of KMS-encrypted keys too (a KMS or PKCS#11 key is no file)."""
    env = os.environ if env is None else env
    found = [env.get("BITEXACT_CAPTURE_KEY", "").strip()]
    policy = policy_file(env)
    if policy is not None and os.path.isfile(policy):
        try:
            with open(policy, encoding="utf-8") as handle:
                document = json.load(handle)
        except (OSError, ValueError):
            document = {}
        specs: list[object] = []
        if isinstance(document, dict):
            retired = document.get("retired_keys")
            # Not a list (a number, an object): the policy is refused and says so; no key file is named there.
            specs = [document.get("hash_only_key"), *(retired if isinstance(retired, list) else [])]
        names = KEY_FILE_SOURCES if ciphertexts else ("file",)
        for spec in specs:
            if isinstance(spec, str):
                found.append(anchored(spec, policy))
            elif isinstance(spec, dict):
                found.extend(anchored(spec[name], policy) for name in names if isinstance(spec.get(name), str))
    return [path for path in found if path]
