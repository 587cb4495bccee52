"""The capture checks of ``bitexact health`` (capture-controls.md, "Settings and health").

| name | level |
|---|---|
| ``capture-policy-invalid`` | critical: the policy in force cannot be used (nothing records) |
| ``capture-policy-off`` | warn; critical when ``BITEXACT_ENV=prod`` |
| ``environment-unknown`` | critical: ``BITEXACT_ENV`` holds a value other than ``prod`` |
| ``capture-key-missing`` | warn: hash-only rules and no capture key |
| ``capture-key-in-data-directory`` | critical: a capture key file in force lies inside the data directory |
| ``capture-key-revoked`` | each revoked key id and its date; warn, critical when it is the active key |
| ``capture-key-unavailable`` | warn, per run: hash-only fields committed with no key, never openable |
| ``scrub-failed`` | warn, per run: fields withheld because the scan could not finish |
| ``collector-unscrubbed`` | critical, per run and collector: values the recorder's policy removed arrived |
| ``store-unreadable`` | critical, per run: its entries do not read back (a damaged store), so nothing above is known of it |
"""

from __future__ import annotations

from collections.abc import Sequence

from bitexact.capture import CapturePolicy
from bitexact.health.context import HealthContext
from bitexact.health.findings import CRITICAL, WARN, Finding, listed

LISTED = 20
"""How many ``STEP:PATH`` a message lists before saying how many more (``details`` holds them all)."""


def _listed(tokens: Sequence[str]) -> str:
    return listed(tokens, LISTED)


def _usable(ctx: HealthContext) -> CapturePolicy | None:
    policy = ctx.policy()
    return policy if isinstance(policy, CapturePolicy) else None


def check_policy_invalid(ctx: HealthContext) -> list[Finding]:
    """capture-policy-invalid: the recorder and collector refuse to start, SDK runs record nothing."""
    policy = ctx.policy()
    if isinstance(policy, CapturePolicy):
        return []
    return [Finding(CRITICAL, "capture-policy-invalid",
                    f"{policy}; nothing records until it is fixed (try `bitexact capture policy check FILE`)",
                    details={"field": policy.field, "reason": policy.reason})]


def check_policy_off(ctx: HealthContext) -> list[Finding]:
    """capture-policy-off: warn, critical in production (``BITEXACT_ENV=prod``)."""
    policy = _usable(ctx)
    if policy is None or not policy.off:
        return []
    prod = ctx.env.get("BITEXACT_ENV", "").strip().lower() == "prod"
    return [Finding(CRITICAL if prod else WARN, "capture-policy-off",
                    "BITEXACT_CAPTURE_POLICY=off: runs keep every value as captured, card numbers, IBANs and"
                    " credentials included" + (" (BITEXACT_ENV=prod)" if prod else ""))]


def check_environment_name(ctx: HealthContext) -> list[Finding]:
    """environment-unknown: ``BITEXACT_ENV`` holds a value other than ``prod`` (``production``, a typo):
    critical, since the production guard it was meant to turn on stays off, saying nothing."""
    value = ctx.env.get("BITEXACT_ENV", "").strip()
    if not value or value.lower() == "prod":
        return []
    return [Finding(CRITICAL, "environment-unknown",
                    f"BITEXACT_ENV={value!r} is not a value BitExact knows: set it to prod (or unset it);"
                    " until then production's checks are off")]


def check_key_missing(ctx: HealthContext) -> list[Finding]:
    """capture-key-missing: a rule keeps fields hash-only and there is no capture key."""
    policy = _usable(ctx)
    if policy is None or policy.off or not policy.needs_key() or policy.key is not None:
        return []
    return [Finding(WARN, "capture-key-missing",
                    "the capture policy keeps fields hash-only but has no capture key: each is committed"
                    " and can never be opened (set hash_only_key, or BITEXACT_CAPTURE_KEY;"
                    " `bitexact capture keygen -o FILE` makes one)")]


def check_key_revoked(ctx: HealthContext) -> list[Finding]:
    """capture-key-revoked: each revoked key id and date; critical when it is the active key."""
    policy = _usable(ctx)
    if policy is None or policy.off:
        return []
    findings = []
    for key_id, date in sorted(policy.revoked.items()):
        active = key_id == policy.key_id
        message = f"capture key {key_id} is revoked from {date}: whoever holds it can test guesses at the" \
                  " fields committed under it"
        if active:
            message += "; it is the ACTIVE key, so new hash-only fields are committed under a key in other hands" \
                       " - rotate now"
        findings.append(Finding(CRITICAL if active else WARN, "capture-key-revoked", message,
                                details={"key_id": key_id, "date": date, "active": active}))
    return findings


def check_runs_readable(ctx: HealthContext) -> list[Finding]:
    """store-unreadable, per run: a run whose entries do not read back (the store is damaged there); once
    for the store when its runs do not even list."""
    ctx.runs()
    if ctx.listing_error is not None:
        return [Finding(CRITICAL, "store-unreadable",
                        f"{ctx.listing_error}: the store's runs do not list, so none can be verified, exported"
                        " or checked by health; restore the store from a backup")]
    return [
        Finding(CRITICAL, "store-unreadable",
                f"{run.unreadable}: the run's entries do not read back, so it can be neither verified nor"
                " exported, and health could not check it; restore the store from a backup",
                run_id=run.run_id)
        for run in ctx.run_captures() if run.unreadable is not None
    ]


def check_key_unavailable(ctx: HealthContext) -> list[Finding]:
    """capture-key-unavailable, per run: hash-only fields with no capture key, never openable."""
    return [
        Finding(WARN, "capture-key-unavailable",
                f"{len(run.unopenable)} hash-only field(s) committed with no capture key, never openable:"
                f" {_listed(run.unopenable)}", run_id=run.run_id, details={"fields": list(run.unopenable)})
        for run in ctx.run_captures() if run.unopenable
    ]


def check_scrub_failed(ctx: HealthContext) -> list[Finding]:
    """scrub-failed, per run: fields the policy could not scrub in time, withheld as a declared gap."""
    return [
        Finding(WARN, "scrub-failed",
                f"{len(run.scrub_failed)} field(s) could not be scrubbed in time and were withheld:"
                f" {_listed(run.scrub_failed)}", run_id=run.run_id, details={"fields": list(run.scrub_failed)})
        for run in ctx.run_captures() if run.scrub_failed
    ]


def check_collector_unscrubbed(ctx: HealthContext) -> list[Finding]:
    """collector-unscrubbed: a collector sent values the recorder's own policy removes."""
    findings = []
    for run in ctx.run_captures():
        for collector, tokens in sorted(run.collector_unscrubbed.items()):
            findings.append(Finding(
                CRITICAL, "collector-unscrubbed",
                f"collector {collector} sent {len(tokens)} value(s) the recorder's policy removes - they crossed"
                f" the wire and sat in its spool: {_listed(tokens)}",
                run_id=run.run_id, details={"collector": collector, "fields": list(tokens)}))
    return findings


def check_key_in_data_directory(ctx: HealthContext) -> list[Finding]:
    """capture-key-in-data-directory: a capture key file in force lies inside the data directory, so a
    copy of the store carries the key that keeps its hash-only fields from being guessed."""
    if ctx.home is None:
        return []
    import os
    from pathlib import Path

    from bitexact.capture.keyfiles import capture_key_files

    home = Path(os.path.realpath(ctx.home))
    inside = sorted({path for path in capture_key_files(ctx.env, ciphertexts=False)
                     if Path(os.path.realpath(path)).is_relative_to(home)})
    return [Finding(
        CRITICAL, "capture-key-in-data-directory",
        f"the capture key file {path} is inside the data directory {ctx.home}: every copy or backup of the"
        " store carries the key, and with it anyone can test guesses at its hash-only fields. The contract"
        " keeps the key apart from the evidence: move it out (`bitexact capture keygen -o` refuses to write"
        " one there) and point the policy or BITEXACT_CAPTURE_KEY at the new place",
        details={"path": path},
    ) for path in inside]


CAPTURE_CHECKS = (
    check_policy_invalid,
    check_policy_off,
    check_environment_name,
    check_key_missing,
    check_key_in_data_directory,
    check_key_revoked,
    check_runs_readable,
    check_key_unavailable,
    check_scrub_failed,
    check_collector_unscrubbed,
)
