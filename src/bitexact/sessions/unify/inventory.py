"""``model.inventory``: AWF runtime model lists and ``/reflect`` inventory (T-UAS-075).

Null model or routing lists mean *unknown* and are omitted, never written as
empty; a supplied empty array stays empty.  ``configured`` is copied only
when the source states it.  Any contract violation rejects the whole source
with one ``invalid_model_inventory`` warning: no partial or empty inventory
is published in its place.  The normalization accepts its own output
unchanged (camelCase spellings are read too).
"""

from __future__ import annotations

import re
from typing import Any

from bitexact.sessions.unified_model import MAX_SAFE_INTEGER
from bitexact.sessions.unify.builder import SourceBuilder
from bitexact.sessions.unify.decode import json_document
from bitexact.sessions.unify.project import MISSING, first_present

_EFFORT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


class InvalidInventory(ValueError):
    """The source violates the inventory contract (message names the field)."""


def _nonblank(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _strings(value: Any, field: str) -> list[str]:
    if not isinstance(value, list) or not all(_nonblank(v) for v in value):
        raise InvalidInventory(f"{field} must be an array of non-blank strings")
    return list(value)


def _routing_model(entry: Any) -> dict[str, Any]:
    if not isinstance(entry, dict):
        raise InvalidInventory("routing model entries must be objects")
    model_id = first_present(entry, "modelId", "model_id")
    if not _nonblank(model_id):
        raise InvalidInventory("routing model modelId must be a non-blank string")
    out: dict[str, Any] = {"modelId": model_id}
    endpoints = first_present(entry, "supportedEndpoints", "supported_endpoints")
    if endpoints is not MISSING and endpoints is not None:
        out["supportedEndpoints"] = _strings(endpoints, "supportedEndpoints")
    efforts = first_present(entry, "supportedReasoningEfforts", "supported_reasoning_efforts")
    if efforts is not MISSING and efforts is not None:
        if not isinstance(efforts, list) or not all(
            isinstance(e, str) and _EFFORT.match(e) for e in efforts
        ):
            raise InvalidInventory("supportedReasoningEfforts must be identifier tokens")
        out["supportedReasoningEfforts"] = list(efforts)
    window = first_present(entry, "contextWindowTokens", "context_window_tokens")
    if window is not MISSING and window is not None:
        if isinstance(window, bool) or not isinstance(window, int) or not 0 < window <= MAX_SAFE_INTEGER:
            raise InvalidInventory("contextWindowTokens must be a positive safe integer")
        out["contextWindowTokens"] = window
    return out


def _routing_list(value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        raise InvalidInventory("routingModels must be an array")
    return [_routing_model(e) for e in value]


def _endpoint(entry: Any, inherited: Any) -> dict[str, Any]:
    if not isinstance(entry, dict):
        raise InvalidInventory("endpoints must be objects")
    provider = entry.get("provider")
    if not _nonblank(provider):
        raise InvalidInventory("endpoint provider must be a non-blank string")
    out: dict[str, Any] = {"provider": provider}
    if "configured" in entry:
        if not isinstance(entry["configured"], bool):
            raise InvalidInventory("endpoint configured must be a boolean")
        out["configured"] = entry["configured"]
    models = entry.get("models", MISSING)
    if models is None:
        if "configured" not in out:
            raise InvalidInventory("a null model list needs a boolean configured")
    elif models is not MISSING:
        out["models"] = _strings(models, "models")
    local = first_present(entry, "routingModels", "routing_models")
    if local is MISSING:
        # Only an absent endpoint list inherits the top-level fallback.
        shared = [m for m in inherited if m.get("provider", provider) == provider]
        if shared:
            out["routingModels"] = _routing_list([{k: v for k, v in m.items() if k != "provider"} for m in shared])
    elif local is not None:
        out["routingModels"] = _routing_list(local)
    return out


def normalize_inventory(document: Any) -> dict[str, Any]:
    """The ``model.inventory`` payload of one source (raises ``InvalidInventory``)."""
    if not isinstance(document, dict):
        raise InvalidInventory("inventory must be a JSON object")
    raw = first_present(document, "endpoints", "providers")
    if isinstance(raw, dict):
        raw = [{**v, "provider": k} if isinstance(v, dict) else v for k, v in raw.items()]
    if not isinstance(raw, list):
        raise InvalidInventory("endpoints must be an array")
    top = first_present(document, "routingModels", "routing_models")
    if top is MISSING or top is None:
        top = []
    elif not isinstance(top, list) or not all(isinstance(m, dict) for m in top):
        raise InvalidInventory("top-level routingModels must be an array of objects")
    out: dict[str, Any] = {"endpoints": [_endpoint(e, top) for e in raw]}
    complete = first_present(document, "modelsFetchComplete", "models_fetch_complete")
    if complete is not MISSING and complete is not None:
        if not isinstance(complete, bool):
            raise InvalidInventory("modelsFetchComplete must be a boolean")
        out["modelsFetchComplete"] = complete
    return out


def read_inventory(builder: SourceBuilder, payload: bytes) -> None:
    """One ``model.inventory`` event, or one warning and an unusable source."""
    before = len(builder.warnings)
    document = json_document(builder, payload)
    if document is MISSING:
        if len(builder.warnings) > before:
            # One warning per source, with the inventory code (4.7).
            builder.warnings[before:] = []
            builder.warn("invalid_model_inventory", "inventory is not valid JSON; no event")
            builder.usable = False
        return
    try:
        data = normalize_inventory(document)
    except InvalidInventory as exc:
        builder.warn("invalid_model_inventory", f"{exc}; no event")
        builder.usable = False
        return
    builder.add("model.inventory", data, index=0)
