"""The capture policy: model, presets, loader, validation and digest.

``load_policy`` reads ``BITEXACT_CAPTURE_POLICY`` (a JSON file, ``pci``,
``off``; unset is the shipped default) and returns a :class:`CapturePolicy`,
or raises :class:`PolicyError` naming the field and the reason. A policy that
cannot be used refuses the process at start, so every check happens here,
keys included.

The digest is SHA-256 over the canonical JSON (``bitexact.canon``) of the
normalized policy, which names each key by its key id, never by where it is
kept: moving the key file is the same policy, a new key is not.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from bitexact.canon import canonicalize, loads, read_limited
from bitexact.capture.budget import DEFAULT_BUDGET_MS, MAX_BUDGET_MS, MIN_BUDGET_MS
from bitexact.capture.detectors import BUILTIN, PatternRefused, build, validate_name, validate_pattern
from bitexact.capture.errors import PolicyError
from bitexact.capture.keyfiles import KEY_FILE_SOURCES, PRESET_NAMES, anchored
from bitexact.capture.rules import GOVERNED_KINDS, FieldRule, StepRules, parse_rules
from bitexact.capture.scan import Scanner
from bitexact.config import SettingError, env_int
from bitexact.errors import StrictJSONError

ENV_POLICY: Final[str] = "BITEXACT_CAPTURE_POLICY"
ENV_KEY: Final[str] = "BITEXACT_CAPTURE_KEY"
ENV_MAX_BODY: Final[str] = "BITEXACT_MAX_BODY_BYTES"
DEFAULT_MAX_BODY_BYTES: Final[int] = 64 << 20
"""A field the policy would scan is withheld, unscanned, past this many bytes (``BITEXACT_MAX_BODY_BYTES``)."""
POLICY_VERSION: Final[int] = 17
"""The version of the detectors' rules, inside every policy's digest: a step records the digest it was
scrubbed under, so rules that find more (2: credential shapes, compound names, private keys, more text
forms; 3: commands' password flags, .netrc entries, CDATA sections; 4: a credential flag's value as an argv
list's next item, a command written as a path, htpasswd's and nmcli's positional passwords; 5: a command after a
wrapper's options or written as ``$VAR/``, a non-ASCII or a Windows path, an escaped blank inside a value, an argv
list written one item a line or as bytes, more commands' password flags and rabbitmqctl's positional one, a key
assigned by subscript, ``--no-password`` no credential flag; 6: compound names ending ``_pass`` / ``_pwd``
(``DB_PASS``, ``MYSQL_PWD``), a connection string's ``PWD=``, ``chpasswd``'s input, HTTPie's ``-a TOKEN``, SQL's
passwords, track 1's card number, OpenPGP private keys, a name/value object's value, a password piped into a
registry login, a shadow line's hash, more secret names: ``tls.key``, ``cvv``, ``pin``...; 7: a ``.pgpass`` line's
password, Google OAuth, SendGrid and npm token shapes, a password's label inside a line (``… Password: x``),
Windows's ``net user NAME PASSWORD``, a name/value object or ``[name, value]`` pair written in text as a repr
writes one; 8: a token as a URL's user, an XML element's name/value attributes, ``APP_KEY``, a Kubernetes Secret's
data, Redis's passwords, htpasswd lines, PuTTY key files, a label of words ``API Key: x``; 9: a Kubernetes Secret
held as data or as a YAML flow mapping, Terraform's ``"sensitive": true`` values, .NET's ``<setting name=...><value>``,
CSV and TSV credential columns, a JSON member or a pair URL-encoded in a query or a form; 10: a CSV header below a
text's first line, markdown, psql and mysql tables, a Terraform state's ``sensitive_attributes``, a JSON member
encoded twice, a ``.settings`` file's ``<Value Profile=...>``, ``AUTH`` at redis-cli's prompt; 11: ``terraform
show -json``'s ``sensitive_values`` and a plan's ``before_sensitive`` / ``after_sensitive``, a table's header cell
in markdown's emphasis or code marks, a markdown cell holding ``\\|``, redis-cli's prompt on a unix socket and
``not connected>``, a URL-encoded JSON member with ``%5C``-escaped quotes, a CSV header in a text's first 64 lines;
left: a credential member's bare boolean or null in text; 12: a table's header cell in an HTML element or a link
and a markdown cell in one HTML element, a ``%255C``-escaped JSON member encoded twice and a twice-encoded value
after ``%2B``, a CSV header under a line printing a ``.csv`` file (``USERS.CSV`` too, piped on through ``head``) or
psql's ``COPY ... TO STDOUT ... HEADER`` (``copy`` at its ``=#`` prompt too), or under a database client's line
printing one: ``sqlite3 -csv -header``, a ``sqlite>`` statement after ``.mode csv`` and ``.headers on``, ``mysql
-B`` / ``-e``, ``psql --csv``; 13: mysql's ``authentication_string`` as a credential name in every rule (a
table's column, ``\\G``'s ``NAME: VALUE`` line, a JSON key in data and text, ``NAME=VALUE``), MariaDB's ``mariadb`` client, sqlite3's ``list`` mode with its header, ``line`` mode's records and ``column``
mode's table, a table
drawn with box-drawing characters, a client's row holding a ``|`` split at its rule line's joints, redis-cli's
replies to ``CONFIG GET``, ``HGETALL``, ``HGET`` and ``ACL GETUSER`` / ``ACL LIST`` at its prompt and to a pipe, and
``ACL SETUSER``'s ``>password`` and ``HSET``'s password fields, a Redis ACL file's ``user NAME ... >password``
lines (``users.acl``, ``redis.conf``), redis.conf's ``tls-key-file-pass`` / ``tls-client-key-file-pass`` and
sentinel.conf's ``sentinel auth-pass MASTER X`` / ``sentinel sentinel-pass X`` lines, a terminal's raw transcript's control sequences before sqlite3's prompt and a
client's first printed line, ``IDENTIFIED WITH ... AS`` / ``VIA ... USING``, and every text holding ESC read as a
terminal shows it too, its escape sequences taken out and each finding placed back over the codes between its
characters: a colour or grep's match between a name and its value, or inside either, hides no credential, and an
object key holding ESC read as a credential name as a terminal shows it; 14: redis-cli's numbered replies with no
prompt or command line above them (``redis-cli --no-raw < cmds.txt``) and RESP3's maps printed to a pipe
(``redis-cli -3``: ``NAME VALUE`` a line) and ``ACL GETUSER``'s hashes under RESP3, ``SENTINEL SET`` with other options before ``auth-pass``, redis.conf's and
sentinel.conf's names in upper case or capitalized (``REQUIREPASS``, ``SENTINEL AUTH-PASS``), sqlite3's list mode
with another ``.separator`` and its ``quote``, ``insert`` and ``html`` modes; and, found no more, a note after sentinel.conf's value on its line and a coloured key's
ordinary member: a ``token`` beside ``logprob``, a thinking block's ``signature``, a bare ``key``'s path, and in a
numbered list no command stands above, a name holding a blank and a ``user ...`` string that is no ACL LIST line, a
list of members under its command (``LRANGE``, ``KEYS``...), and a sentence, a heading's word or a state after
redis's names capitalized or in upper case; 15: sqlite3's ``tcl`` and ``ascii`` modes, list mode's separator of
more than one character, insert mode read by a ``CREATE TABLE`` over many lines, redis.conf's and sentinel.conf's
password names in a mixed case (``rEquirepass``) and ``CONFIG SET``'s every pair in any case; and, found no more, a
numbered list of quoted words in prose not in redis-cli's shape (a sentence after it, an odd count, indented) and
a field's declaration in code, redis's names not in lower case over a type (``RequirePass *string``); 16: such a
numbered list's values under a credential name when it is redis-cli's reply pasted (indented by up to 64 blanks, a
sentence after it, quoted in a markdown blockquote), unless a value reads as another field's name (``email``,
``password_confirmation``); and, found no more, an empty value (``requirepass ""``, ``password: ""``), a sentence's
word after ``CONFIG SET requirepass`` (``with the new value``) and ``NAME::VALUE``'s second colon (a bare ``key``'s
``key::value`` left); 17: a configuration line quoted in a markdown blockquote or written as a list item
(``> requirepass x``, ``- masterauth x``, ``> user alice on >x``, ``> machine h`` / ``> password x`` over quoted
lines, an htpasswd, ``.pgpass`` or ``/etc/shadow`` line or SQL*Plus's ``CONNECT`` so written): redis.conf's,
sentinel.conf's, an ACL file's and a .netrc's lines read after the note's marks as without them; and, leaks32, such a
line as a markdown code span's only words, ``Set `requirepass x` in redis.conf``, redis-cli's ``AUTH x`` so written,
and a bare value read into a span's closing backtick ended before it, ``Set `PASSWORD=x` ok``)
must give the same configuration a new digest. A reader of the record can then tell which rules scrubbed a step,
and a replay (capture-controls: it refuses a step recorded under another digest) never reports what the new rules
scrub as a change in the agent."""
_TOP_KEYS: Final[frozenset[str]] = frozenset(
    {"detectors", "fields", "budget_ms", "hash_only_key", "retired_keys", "revoked_keys"}
)
_KEY_ID: Final = re.compile(r"[0-9a-f]{32}")
_DATE: Final = re.compile(r"\d{4}-\d{2}-\d{2}")

DEFAULT_DETECTORS: Final[dict[str, Any]] = {"pan": {"keep_last4": True}, "iban": {}, "credentials": {}}
DEFAULT_FIELDS: Final[list[dict[str, Any]]] = [{"kind": "*", "path": "*", "mode": "scrub"}]

PRESETS: Final[dict[str, dict[str, Any]]] = {
    # Card numbers, IBANs and credentials scrubbed everywhere.
    "default": {"detectors": DEFAULT_DETECTORS, "fields": DEFAULT_FIELDS, "budget_ms": DEFAULT_BUDGET_MS},
    # The default, and every base64 value (bytes no detector reads) hash-only.
    "pci": {
        "detectors": DEFAULT_DETECTORS,
        "fields": [{"kind": "*", "path": "*.b64", "mode": "hash-only"}, *DEFAULT_FIELDS],
        "budget_ms": DEFAULT_BUDGET_MS,
    },
}

_DETECTOR_OPTIONS: Final[dict[str, dict[str, bool]]] = {
    "pan": {"keep_last4": True},
    "iban": {},
    "credentials": {},
    "us_ssn": {"require_context": True},
    "email": {},
}


def _options(name: str, raw: object) -> dict[str, Any]:
    where = f"detectors.{name}"
    if not isinstance(raw, dict):
        raise PolicyError(where, "an object of options ({} for none)")
    defaults = _DETECTOR_OPTIONS[name]
    unknown = sorted(set(raw) - set(defaults))
    if unknown:
        allowed = ", ".join(defaults) or "none"
        raise PolicyError(f"{where}.{unknown[0]}", f"unknown option (allowed: {allowed})")
    out = dict(defaults)
    for option, value in raw.items():
        if not isinstance(value, bool):
            raise PolicyError(f"{where}.{option}", "must be true or false")
        out[option] = value
    return out


def normalize_detectors(raw: object) -> dict[str, Any]:
    """The ``detectors`` object with every option filled in; :class:`PolicyError` otherwise."""
    if not isinstance(raw, dict):
        raise PolicyError("detectors", "an object naming the detectors to run")
    unknown = sorted(set(raw) - {*BUILTIN, "custom"})
    if unknown:
        raise PolicyError(f"detectors.{unknown[0]}", f"unknown detector (known: {', '.join((*BUILTIN, 'custom'))})")
    out: dict[str, Any] = {name: _options(name, raw[name]) for name in BUILTIN if name in raw}
    if "custom" in raw:
        entries = raw["custom"]
        if not isinstance(entries, list):
            raise PolicyError("detectors.custom", "a list of {name, pattern}")
        custom = []
        seen: set[str] = set()
        for i, entry in enumerate(entries):
            where = f"detectors.custom[{i}]"
            if not isinstance(entry, dict) or set(entry) != {"name", "pattern"}:
                raise PolicyError(where, "an object with exactly name and pattern")
            try:
                name = validate_name(entry["name"])
            except PatternRefused as exc:
                raise PolicyError(f"{where}.name", str(exc)) from None
            if name in BUILTIN or name == "custom" or name in seen:
                raise PolicyError(f"{where}.name", f"{name!r} is already a detector's name")
            seen.add(name)
            try:
                pattern = validate_pattern(entry["pattern"])
            except PatternRefused as exc:
                raise PolicyError(f"{where}.pattern", str(exc)) from None
            custom.append({"name": name, "pattern": pattern})
        out["custom"] = custom
    return out


def _budget(raw: object) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int) or not MIN_BUDGET_MS <= raw <= MAX_BUDGET_MS:
        raise PolicyError("budget_ms", f"a whole number of milliseconds per MiB from {MIN_BUDGET_MS} to {MAX_BUDGET_MS}")
    return raw


def max_body_bytes(env: Mapping[str, str] | None = None) -> int:
    """``BITEXACT_MAX_BODY_BYTES`` (default 64 MiB): the largest field the policy scans and stores.

    Read with the policy, so a wrong value refuses the process at start as a wrong policy does (and
    ``bitexact health`` reports it as ``capture-policy-invalid``). It is a setting of the host, not of the
    policy document: it is not in the digest, and each field it withholds is declared where it was.
    """
    try:
        return env_int(ENV_MAX_BODY, DEFAULT_MAX_BODY_BYTES, env=env)
    except SettingError:
        raw = (os.environ if env is None else env).get(ENV_MAX_BODY)
        raise PolicyError(ENV_MAX_BODY, f"{raw!r} is not a whole number of bytes greater than 0") from None


def _revoked(raw: object) -> dict[str, str]:
    if not isinstance(raw, dict):
        raise PolicyError("revoked_keys", "an object mapping a key id to the date it may be in other hands")
    for key_id, date in raw.items():
        if not _KEY_ID.fullmatch(key_id):
            from bitexact.crypto.keysources import KEY_NOT_QUOTED, looks_like_a_key

            if looks_like_a_key(key_id):
                raise PolicyError("revoked_keys", f"a key id is 32 lower-case hex characters, found {KEY_NOT_QUOTED}")
            raise PolicyError(f"revoked_keys.{key_id}", "a key id is 32 lower-case hex characters")
        if not isinstance(date, str) or not _DATE.fullmatch(date):
            raise PolicyError(f"revoked_keys.{key_id}", "a date, YYYY-MM-DD")
        try:
            _dt.date.fromisoformat(date)
        except ValueError:
            raise PolicyError(f"revoked_keys.{key_id}", f"{date!r} is not a date") from None
    return dict(sorted(raw.items()))


def _load_key(spec: object, where: str, policy_file: str | None = None) -> Any:
    from bitexact.crypto.keysources import KeySourceError, load_capture_key

    if isinstance(spec, dict) and len(spec) == 1:
        ((source, value),) = spec.items()
        if source in KEY_FILE_SOURCES and isinstance(value, str):
            spec = {source: anchored(value, policy_file)}
    try:
        return load_capture_key(spec, field=where)  # type: ignore[arg-type]
    except KeySourceError as exc:
        reason = str(exc)
        if reason.startswith(where):
            reason = reason[len(where) :].lstrip(".: ") or reason
        raise PolicyError(where, reason) from None


def _env_key(env: Mapping[str, str]) -> Any | None:
    path = env.get(ENV_KEY, "").strip()
    if not path:
        return None
    return _load_key({"file": path}, ENV_KEY)


_NO_STEP_RULES: Final[StepRules] = StepRules.select((), "*", {})
"""The rules of a step the policy does not govern (or of any step with the policy off): none."""


@dataclass(frozen=True, eq=False)
class CapturePolicy:
    """A usable capture policy. ``off`` is the policy that removes nothing.

    ``key`` is the capture key new hash-only fields are committed under (an
    ``HmacKey``, or ``None``); ``retired`` the keys of earlier rotations, which
    commit nothing new but still open what they committed; ``max_body_bytes``
    the largest field scanned and stored (:func:`max_body_bytes`; ``off``
    scans nothing, so it never applies there).
    """

    name: str
    off: bool
    detectors: dict[str, Any]
    rules: tuple[FieldRule, ...]
    budget_ms: int
    key: Any | None
    retired: tuple[Any, ...]
    revoked: dict[str, str]
    normalized: dict[str, Any] | None
    digest: str | None
    scanner: Scanner = field(repr=False)
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    _steps: dict[str, StepRules] = field(default_factory=dict, init=False, repr=False)
    """The rules of a step of each governed kind, once worked out (:meth:`step_rules`)."""

    def step_rules(self, kind: str, data: dict[str, Any]) -> StepRules:
        """The rules that apply to a step of ``kind`` holding ``data`` (:meth:`StepRules.select`): none for a kind
        the policy does not govern, or with the policy off.

        Only a rule's ``where`` reads ``data``: with no such rule, a step's rules are those of every step of its
        kind, worked out once per kind and shared (the walk only reads them), not again at every call.
        """
        cached = self._steps.get(kind)
        if cached is not None:
            return cached
        if self.off or kind not in GOVERNED_KINDS:
            return _NO_STEP_RULES
        rules = StepRules.select(self.rules, kind, data)
        if not any(rule.where for rule in self.rules):
            self._steps[kind] = rules  # a governed kind: a few of them, never more
        return rules

    @property
    def run_meta_value(self) -> str:
        """What run_meta records as ``capture_policy``: the digest, or ``off``."""
        return "off" if self.off or self.digest is None else self.digest

    @property
    def has_path_rules(self) -> bool:
        """Whether a rule does more than scrub every field: one naming paths or keys (a hash-only
        ``*.b64``, a kept or withheld key), which matches keys and so cannot reach into JSON text."""
        return not self.off and any(not (rule.path == "*" and rule.mode == "scrub") for rule in self.rules)

    @property
    def key_id(self) -> str | None:
        """The active capture key's id, or ``None``."""
        return None if self.key is None else self.key.key_id

    def key_for(self, key_id: str) -> Any | None:
        """The active or retired key with this id (to open a field), or ``None``."""
        for key in (self.key, *self.retired):
            if key is not None and key.key_id == key_id:
                return key
        return None

    def revoked_since(self, key_id: str) -> str | None:
        """The date from which a key may be in other hands, or ``None`` when it is not revoked."""
        return self.revoked.get(key_id)

    def active_key_revoked(self) -> bool:
        """Whether new hash-only fields would be committed under a revoked key (health: critical)."""
        return self.key is not None and self.key.key_id in self.revoked

    def needs_key(self) -> bool:
        """Whether a rule keeps a field hash-only (health: capture-key-missing when no key)."""
        return any(rule.mode == "hash-only" for rule in self.rules)

    def digest_under(self, version: int) -> str | None:
        """The digest this configuration has under rules version ``version`` (1 .. ``POLICY_VERSION``):
        what a collector with the same policy file but older rules declares (health: collector-unscrubbed).
        ``None`` for ``off``, which has no digest."""
        if isinstance(version, bool) or not isinstance(version, int) or not 1 <= version <= POLICY_VERSION:
            raise ValueError(f"a rules version is 1 to {POLICY_VERSION}, not {version!r}")
        if self.off or self.normalized is None:
            return None
        return _digest({**self.normalized, "v": version})

    def describe(self) -> dict[str, Any]:
        """The policy as ``bitexact capture policy show`` prints it."""
        if self.off:
            return {"policy": "off"}
        return {"policy": self.name, "digest": self.digest, **(self.normalized or {})}


def _digest(normalized: Mapping[str, Any]) -> str:
    """Hex SHA-256 of a normalized policy's canonical JSON (the module docstring)."""
    return hashlib.sha256(canonicalize(dict(normalized))).hexdigest()


def off_policy() -> CapturePolicy:
    """The policy that removes nothing (hints still apply, with the default's detectors)."""
    return CapturePolicy(
        name="off",
        off=True,
        detectors=dict(DEFAULT_DETECTORS),
        rules=(),
        budget_ms=DEFAULT_BUDGET_MS,
        key=None,
        retired=(),
        revoked={},
        normalized=None,
        digest=None,
        scanner=Scanner(build(DEFAULT_DETECTORS)),
    )


def parse_policy(raw: object, *, name: str = "file", env: Mapping[str, str] | None = None,
                 path: str | Path | None = None) -> CapturePolicy:
    """Check a policy document and load its keys; :class:`PolicyError` names the field at fault. ``path`` is
    the file the document was read from: a relative key file path in it is read from that file's directory."""
    policy_file = None if path is None else str(path)
    environ = os.environ if env is None else env
    if not isinstance(raw, dict):
        raise PolicyError("(policy)", "a capture policy is a JSON object")
    unknown = sorted(set(raw) - _TOP_KEYS)
    if unknown:
        raise PolicyError(unknown[0], f"unknown key (allowed: {', '.join(sorted(_TOP_KEYS))})")
    detectors = normalize_detectors(raw.get("detectors", DEFAULT_DETECTORS))
    rules = parse_rules(raw.get("fields", DEFAULT_FIELDS))
    budget_ms = _budget(raw.get("budget_ms", DEFAULT_BUDGET_MS))
    revoked = _revoked(raw.get("revoked_keys", {}))
    if "hash_only_key" in raw:
        key = _load_key(raw["hash_only_key"], "hash_only_key", policy_file)
    else:
        key = _env_key(environ)
    retired_raw = raw.get("retired_keys", [])
    if not isinstance(retired_raw, list):
        raise PolicyError("retired_keys", "a list of key specs")
    retired = tuple(_load_key(spec, f"retired_keys[{i}]", policy_file) for i, spec in enumerate(retired_raw))
    limit = max_body_bytes(environ)
    ids = [k.key_id for k in (key, *retired) if k is not None]
    if len(set(ids)) != len(ids):
        raise PolicyError("retired_keys", "a key is listed twice (or is also hash_only_key)")
    normalized = {
        "v": POLICY_VERSION,
        "detectors": detectors,
        "fields": [rule.to_json() for rule in rules],
        "budget_ms": budget_ms,
        "hash_only_key": None if key is None else {"key_id": key.key_id},
        "retired_keys": [{"key_id": k.key_id} for k in retired],
        "revoked_keys": revoked,
    }
    digest = _digest(normalized)
    return CapturePolicy(
        name=name,
        off=False,
        detectors=detectors,
        rules=rules,
        budget_ms=budget_ms,
        key=key,
        retired=retired,
        revoked=revoked,
        normalized=normalized,
        digest=digest,
        scanner=Scanner(build(detectors)),
        max_body_bytes=limit,
    )


def _policy_document(path: str | Path, field: str | None) -> Any:
    """A policy file's JSON document, read with the strict reader (``field``: see read_policy_file)."""
    location = Path(path)
    blamed = field or str(path)
    named = f"{location}: " if field else ""  # the path is said once: it is what is blamed, or named after it
    try:
        if stat.S_ISFIFO(os.stat(location).st_mode):
            # Read, a pipe with no writer is an empty document; one whose writer never ends would hang every
            # recording that loads the policy. A policy is a file.
            raise PolicyError(blamed, f"{named}a named pipe, not a file (expected a JSON file, pci or off)")
        data = read_limited(location)  # a device is refused by loads, never read whole
    except FileNotFoundError:
        raise PolicyError(blamed, f"{named}no such file (expected a JSON file, pci or off)") from None
    except OSError as exc:
        raise PolicyError(blamed, f"{named}cannot read: {exc.strerror}") from None
    try:
        return loads(data)
    except StrictJSONError as exc:
        raise PolicyError(str(location), f"not a valid JSON document: {exc.where()}") from None


def read_policy_file(
    path: str | Path, *, env: Mapping[str, str] | None = None, field: str | None = None
) -> CapturePolicy:
    """A policy from a JSON file, read with the strict reader.

    ``field`` is what a file that cannot be read is blamed on: the path as
    given (the default), or ``BITEXACT_CAPTURE_POLICY`` when that named it.
    """
    return parse_policy(_policy_document(path, field), name=str(Path(path)), env=env, path=path)


def revoked_in_force(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The ``revoked_keys`` of the policy in force, read without loading any key: a verifier names fields
    committed under a revoked key whether or not it holds that key (it usually does not, and should not).
    Raises :class:`PolicyError` for a policy file that cannot be read or a ``revoked_keys`` that is wrong."""
    environ = os.environ if env is None else env
    chosen = environ.get(ENV_POLICY, "").strip()
    if chosen in PRESET_NAMES:
        preset = PRESETS.get(chosen or "default", {})
        raw = preset.get("revoked_keys") if isinstance(preset, dict) else None
    else:
        document = _policy_document(chosen, ENV_POLICY)
        raw = document.get("revoked_keys") if isinstance(document, dict) else None
    return _revoked(raw) if raw is not None else {}


def load_policy(source: str | None = None, *, env: Mapping[str, str] | None = None) -> CapturePolicy:
    """The policy in force: ``source``, else ``BITEXACT_CAPTURE_POLICY``, else the shipped default.

    ``source`` is a JSON file path, ``pci``, ``off`` or ``default``. Raises
    :class:`PolicyError` for a policy that cannot be used.
    """
    environ = os.environ if env is None else env
    chosen = source if source is not None else environ.get(ENV_POLICY, "")
    chosen = chosen.strip()
    if chosen == "" or chosen == "default":
        return parse_policy(PRESETS["default"], name="default", env=environ)
    if chosen == "off":
        max_body_bytes(environ)  # refused here too: a wrong value must not wait for the policy to be on
        return off_policy()
    if chosen == "pci":
        return parse_policy(PRESETS["pci"], name="pci", env=environ)
    return read_policy_file(chosen, env=environ, field=None if source is not None else ENV_POLICY)
