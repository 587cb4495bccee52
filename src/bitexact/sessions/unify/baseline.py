"""``model.baseline_estimate``: counterfactual repricing of routed runs (T-UAS-081).

Only proxy-written (``firewall.token_usage``, ``firewall.model_routing``) and
runner-written (``model.config``, ``aw_info.sub_agent_models``) evidence
attributes requests:

- ``purpose: routing_classification`` requests are the classifier: excluded;
- ``routed: deviated`` whose requested model is a declared sub-agent model:
  sub-agent, excluded;
- ``routed: as_selected`` not matching a declared sub-agent: main request;
- anything else (no routing record, conflicting records, no request ID, an
  ``as_selected`` request matching a declared sub-agent): unattributed.

Each request ID counts once.  Pricing is supplied by the caller (the
``computeInferenceAIC`` of the reference implementation has no counterpart
here); without it every main request is *unpriced*, never zero cost.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

Pricing = Callable[[str, Mapping[str, Any]], float | None]
"""``pricing(model, unified_usage) -> AIC`` or ``None`` when the model is unpriced."""

_COMPLETE_USAGE = ("inputTokens", "outputTokens")


def _declared_models(aw_info: Mapping[str, Any] | None) -> set[str]:
    raw = (aw_info or {}).get("sub_agent_models", (aw_info or {}).get("subAgentModels"))
    if isinstance(raw, dict):
        raw = list(raw.values())
    if not isinstance(raw, list):
        return set()
    models = set()
    for item in raw:
        if isinstance(item, str):
            models.add(item)
        elif isinstance(item, dict) and isinstance(item.get("model"), str):
            models.add(item["model"])
    return models


def baseline_estimate(
    config: Mapping[str, Any],
    token_usage: Iterable[Mapping[str, Any]],
    routing: Iterable[Mapping[str, Any]],
    aw_info: Mapping[str, Any] | None,
    pricing: Pricing | None,
) -> dict[str, Any] | None:
    """The estimate payload, or ``None`` when the run is not routed."""
    if config.get("routing", {}).get("enabled") is not True:
        return None
    baseline = config.get("baselineModel")
    declared = _declared_models(aw_info)
    routed_by_request: dict[Any, set[tuple[Any, Any]]] = {}
    for record in routing:
        request_id = record.get("requestId")
        if request_id is not None and "routed" in record:
            routed_by_request.setdefault(request_id, set()).add(
                (record.get("routed"), record.get("requestedModel"))
            )
    # Requests are classified and priced as they stream by (in token-usage
    # order, so the float total is summed in the same order as before); only
    # the request IDs and routing records stay in memory.
    seen: set[Any] = set()
    main = unattributed = priced = unpriced = 0
    total = 0.0
    for request in token_usage:
        if request.get("purpose") == "routing_classification":
            continue
        request_id = request.get("requestId")
        if request_id is None:
            unattributed += 1
            continue
        if request_id in seen:
            continue  # replicated proxy copies count once
        seen.add(request_id)
        records = routed_by_request.get(request_id, set())
        if len(records) != 1:
            unattributed += 1
            continue
        (routed, requested), = records
        if routed == "deviated" and requested in declared:
            continue
        if not (routed == "as_selected" and requested not in declared):
            unattributed += 1
            continue
        main += 1
        usage = request.get("usage") or {}
        cost = None
        if isinstance(baseline, str) and pricing is not None and all(k in usage for k in _COMPLETE_USAGE):
            cost = pricing(baseline, usage)
        if cost is None:
            unpriced += 1
        else:
            priced += 1
            total += cost
    data: dict[str, Any] = {"estimated": True}
    if isinstance(baseline, str):
        data["baselineModel"] = baseline
    if priced:
        data["aic"] = total
    data.update(
        mainRequests=main,
        pricedRequests=priced,
        unpricedRequests=unpriced,
        unattributedRequests=unattributed,
        complete=isinstance(baseline, str) and bool(main) and unpriced == 0 and unattributed == 0,
    )
    return data
