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
| ``collector-unscrubbed`` | critical, per run, collector and policy digests: values the recorder's policy removed arrived, and why when the digests tell it |
| ``store-unreadable`` | critical, per run: its entries or checkpoints do not read back (a damaged store), so nothing above is known of it |
| ``store-damaged`` | critical, once: SQLite's ``quick_check`` of the store file finds damaged pages, an index or a NOT NULL broken |
"""

from __future__ import annotations

from collections.abc import Sequence

from bitexact.capture import CapturePolicy
from bitexact.capture.policy import POLICY_VERSION
from bitexact.health.context import CollectorSent, HealthContext
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
                    " credentials included" + (" (BITEXACT_ENV=prod)" if prod else "") + ". Unset"
                    " BITEXACT_CAPTURE_POLICY (the shipped default policy), or set it to `pci` or a policy file,"
                    " where the recording processes read it; runs recorded meanwhile keep their values until"
                    " `bitexact capture backfill --run RUN --by NAME` requests their removal")]


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
    """store-unreadable, per run: a run whose entries or checkpoints do not read back (the store is damaged
    there); once for the store when its runs do not even list. store-damaged, once: the file's own check
    (``Store.integrity_problems``) finds something wrong, which may lie where no run's read reaches (keys)."""
    ctx.runs()
    if ctx.listing_error is not None:
        return [Finding(CRITICAL, "store-unreadable",
                        f"{ctx.listing_error}: the store's runs do not list, so none can be verified, exported"
                        " or checked by health; restore the store from a backup")]
    findings = [
        Finding(CRITICAL, "store-unreadable",
                f"{run.unreadable}: the run's entries or checkpoints do not read back, so it can be neither"
                " verified nor exported, and health could not check it; restore the store from a backup",
                run_id=run.run_id)
        for run in ctx.run_captures() if run.unreadable is not None
    ]
    problems = ctx.store.integrity_problems() if ctx.store is not None else []
    if problems:
        findings.append(Finding(CRITICAL, "store-damaged",
                                f"SQLite's check of the store file finds it damaged ({'; '.join(problems)}): what"
                                " lies on those pages (entries, checkpoints, keys, an index) may be lost or read"
                                " wrong; restore the store from a backup",
                                details={"problems": problems}))
    return findings


def check_key_unavailable(ctx: HealthContext) -> list[Finding]:
    """capture-key-unavailable, per run: hash-only fields with no capture key, never openable."""
    return [
        Finding(WARN, "capture-key-unavailable",
                f"{len(run.unopenable)} hash-only field(s) committed with no capture key, never openable:"
                f" {_listed(run.unopenable)}", run_id=run.run_id, details={"fields": list(run.unopenable)})
        for run in ctx.run_captures() if run.unopenable
    ]


def check_scrub_failed(ctx: HealthContext) -> list[Finding]:
    """scrub-failed, per run: fields the policy could not scrub (in time, without a detector failing, or at
    all: past the size bound), withheld as a declared gap."""
    return [
        Finding(WARN, "scrub-failed",
                f"{len(run.scrub_failed)} field(s) could not be scrubbed (the scan ran out of time or failed, or"
                f" the field was larger than BITEXACT_MAX_BODY_BYTES) and were withheld:"
                f" {_listed(run.scrub_failed)}", run_id=run.run_id, details={"fields": list(run.scrub_failed)})
        for run in ctx.run_captures() if run.scrub_failed
    ]


def check_collector_unscrubbed(ctx: HealthContext) -> list[Finding]:
    """collector-unscrubbed: a collector sent values the recorder's own policy removes; one finding per run,
    collector and pair of policy digests, naming the cause when the digests tell it (`_older_rules`)."""
    policy = _usable(ctx)
    # What the policy in force would be under each earlier rules version: hashed once for every finding.
    older = ({} if policy is None or policy.off
             else {policy.digest_under(version): version for version in range(POLICY_VERSION - 1, 0, -1)})
    findings = []
    for run in ctx.run_captures():
        # Sorted by collector only: a collector's pairs stay in the order it first sent them.
        for sent in sorted(run.collector_sent, key=lambda item: item.collector):
            findings.append(_unscrubbed(run.run_id, sent, policy, older))
    return findings


def _short(digest: str) -> str:
    """A policy digest as other messages shorten a hash (16 hex and three dots); ``off`` as it is."""
    return f"{digest[:16]}..." if len(digest) == 64 else digest


def _unscrubbed(run_id: str, sent: CollectorSent, policy: CapturePolicy | None,
                older: dict[str | None, int]) -> Finding:
    """The finding for one collector and pair of digests. ``older`` maps the digests the policy in force has
    under earlier rules versions to those versions."""
    in_force = None if policy is None else policy.run_meta_value
    # What the entry says the recorder applied wins over the policy in force, which may have changed since;
    # a policy that is off has no digest to fall back on (and a recorder that scrubbed was not off).
    recorder = sent.recorder_policy
    if recorder is None and policy is not None and not policy.off:
        recorder = policy.digest
    message = (f"collector {sent.collector} sent {len(sent.fields)} value(s) the recorder's policy removes -"
               f" they crossed the wire and sat in its spool: {_listed(sent.fields)}")
    details: dict[str, object] = {"collector": sent.collector, "fields": list(sent.fields),
                                  "collector_policy": sent.collector_policy, "recorder_policy": recorder}
    collector = sent.collector_policy
    if collector is None or recorder is None or collector == recorder:
        pass  # the digests tell no cause
    elif policy is not None and recorder == policy.digest and collector in older:
        # Only the policy in force has a configuration to hash again under older rules.
        details.update(cause="older-rules", rules_version=older[collector])
        message += (f"; the collector runs the recorder's policy under older rules (rules version"
                    f" {older[collector]}, the recorder's are version {POLICY_VERSION}): upgrade the collector"
                    " with the recorder")
    else:
        details["cause"] = "other-policy"
        message += (f"; the collector's policy ({_short(collector)}) is not the recorder's ({_short(recorder)}):"
                    " deploy the same policy to the collector")
        if in_force is not None and recorder != in_force:
            message += (f" (the recorder's is the digest it declared on these fields; the policy in force is now"
                        f" {_short(in_force)})")
    return Finding(CRITICAL, "collector-unscrubbed", message, run_id=run_id, details=details)


def check_key_in_data_directory(ctx: HealthContext) -> list[Finding]:
    """capture-key-in-data-directory: a capture key file in force lies inside the data directory, so a
    copy of the store carries the key that keeps its hash-only fields from being guessed."""
    if ctx.home is None:
        return []
    from bitexact import config
    from bitexact.capture.keyfiles import capture_key_files

    inside = sorted({path for path in capture_key_files(ctx.env, ciphertexts=False) if config.inside(path, ctx.home)})
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
