"""Ordinary text rules version 15 (fa17651) scrubbed that 730052e (rules version 14) left (fp27's A/B over the docs,
sources, session fixtures, capture data and written agent text), each left again while the taken cases of
test_leak_edges26 still hold.

1. A field's declaration in code whose name is redis.conf's password name in camel case, its value a type: a Go
   struct's ``RequirePass *string`` / ``MasterAuth corev1.SecretKeySelector`` / ``requirePass []byte`` (a Redis
   operator's resource), a Go function's parameter on its own line (``requirePass string,``), Kotlin's ``RequirePass
   string?``, Python's ``MasterAuth Optional[str]``. Version 15 reads
   redis.conf's names in a mixed case (redis compares them with strcasecmp) and took the type as the password; the
   same line in lower case (``requirepass *string``, as redis.conf is written) is taken as before.
"""

from __future__ import annotations

import pytest

from capture.support import scrubbed

T = "[CREDENTIAL]"


# -- 1. a field's type after redis's password names in camel case ------------------------------------------------------


@pytest.mark.parametrize("text", [
    "type RedisSpec struct {\n\tImage       string\n\tReplicas    *int32\n\tRequirePass *string\n\tMasterAuth  *string\n}\n",
    "type RedisAuth struct {\n\tRequirePass corev1.SecretKeySelector\n\tMasterAuth  corev1.SecretKeySelector\n}\n",
    "type tlsConfig struct {\n\trequirePass []byte\n\tmasterAuth  []byte\n}\n",
    "\tMasterAuth  *SecretRef\n",
    "\tRequirePass [32]byte\n",
    "\tMasterAuth *corev1.SecretKeySelector\n",
    "RequirePass string?\nMasterAuth Boolean?\n",
    "MasterAuth Optional[str]\n",
    # a Go function's parameters, one a line (the comma was taken with the type)
    "func NewConfig(\n\taddr string,\n\trequirePass string,\n\tmasterAuth *string,\n) *Config {\n",
    # version 14's spellings (capitalized, upper case) are headings' and declarations' as fp26 reads them
    "Requirepass *string\n",
])
def test_a_declared_type_is_left(text: str) -> None:
    assert scrubbed(text) == text


@pytest.mark.parametrize(("text", "expected"), [
    # redis.conf's lines in a mixed case, as test_leak_edges26 takes them
    ("rEquirepass Mx3dCasePw\nMasterAuth Up9Auth!pw\n", f"rEquirepass {T}\nMasterAuth {T}\n"),
    ("requirePass x1y2z3\n", f"requirePass {T}\n"),
    # a password that opens with a pointer's or a slice's mark but is no type
    ("MasterAuth *hunter2\n", f"MasterAuth {T}\n"),
    ("RequirePass []pw-9\n", f"RequirePass {T}\n"),
    ("RequirePass Hunter2\n", f"RequirePass {T}\n"),
    ("MasterAuth pw9,\n", f"MasterAuth {T}\n"),
    # quoted, or after CONFIG SET: redis's value, whatever it says
    ('RequirePass "*string"\n', f'RequirePass "{T}"\n'),
    ("127.0.0.1:6379> CONFIG SET RequirePass *string\n", f"127.0.0.1:6379> CONFIG SET RequirePass {T}\n"),
    # lower case, as redis.conf is written: read as before
    ("requirepass *string\n", f"requirepass {T}\n"),
    ("masterauth corev1.SecretKeySelector\n", f"masterauth {T}\n"),
])
def test_redis_values_are_still_taken(text: str, expected: str) -> None:
    assert scrubbed(text) == expected
