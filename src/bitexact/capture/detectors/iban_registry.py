"""IBAN lengths by country: the SWIFT IBAN registry, and the national formats in use beside it.

Every country that issues IBANs in the SWIFT registry (release 99, 2025;
checked row by row in tests/capture/test_iban.py against the registry as
the schwifty package publishes it),
plus the countries whose IBANs are in use but not (yet) in the registry
(the BCEAO/BEAC zones, Algeria, Iran, Madagascar, Morocco, Mozambique...),
and the French overseas codes that write their IBANs with their own country
code. Each country's length, and its BBAN's structure (:data:`BBAN_FORMATS`): which
positions after the check digits hold digits only. The mod-97 check does the rest.
"""

from __future__ import annotations

import re
from typing import Final

REGISTRY: Final[dict[str, int]] = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16,
    "BG": 22, "BH": 22, "BI": 27, "BR": 29, "BY": 28, "CH": 21, "CR": 22,
    "CY": 28, "CZ": 24, "DE": 22, "DJ": 27, "DK": 18, "DO": 28, "EE": 20,
    "EG": 29, "ES": 24, "FI": 18, "FK": 18, "FO": 18, "FR": 27, "GB": 22,
    "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28, "HN": 28, "HR": 21,
    "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26, "IT": 27, "JO": 30,
    "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20,
    "LV": 21, "LY": 25, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MN": 20,
    "MR": 27, "MT": 31, "MU": 30, "NI": 28, "NL": 18, "NO": 15, "OM": 23,
    "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22,
    "RU": 33, "SA": 24, "SC": 31, "SD": 18, "SE": 24, "SI": 19, "SK": 24,
    "SM": 27, "SO": 23, "ST": 25, "SV": 28, "TL": 23, "TN": 24, "TR": 26,
    "UA": 29, "VA": 22, "VG": 24, "XK": 20, "YE": 30,
    # Registered under their parent's entry (Finland's, the United Kingdom's), with their own code.
    "AX": 18, "GG": 22, "IM": 22, "JE": 22,
}

# In use, not in the SWIFT registry.
NATIONAL: Final[dict[str, int]] = {
    "AO": 25, "BF": 28, "BJ": 28, "CF": 27, "CG": 27, "CI": 28, "CM": 27,
    "CV": 25, "DZ": 26, "GA": 27, "GQ": 27, "GW": 25, "IR": 26, "KM": 27,
    "MA": 28, "MG": 27, "ML": 28, "MZ": 25, "NE": 28, "SN": 28, "TD": 27,
    "TG": 28,
}

# French overseas departments and territories: France's format, their own code.
FRENCH_OVERSEAS: Final[dict[str, int]] = {
    code: 27
    for code in ("BL", "GF", "GP", "MF", "MQ", "NC", "PF", "PM", "RE", "TF", "WF", "YT")
}

LENGTHS: Final[dict[str, int]] = {**REGISTRY, **NATIONAL, **FRENCH_OVERSEAS}

# Each country's BBAN (what follows the check digits), as the SWIFT registry writes it: runs of `n`
# (digits), `a` (letters) and `c` (letters or digits), with their lengths; for the national and overseas
# codes the format in use (as the schwifty package, release 2026.10.1, publishes both). Only `n` is
# enforced: a letter where the country's BBAN has a digit is no IBAN of that country (`ba6313d1-274d-…`,
# a UUID, is no Bosnian IBAN: BA's BBAN is 16 digits). An `a` position is read as a `c` (a letter or a
# digit), so a bank code written in digits in a national form is still found.
BBAN_FORMATS: Final[dict[str, str]] = {
    "AD": "4n4n12c", "AE": "3n16n", "AL": "8n16c", "AO": "21n", "AT": "5n11n", "AX": "3n11n", "AZ": "4a20c",
    "BA": "3n3n8n2n", "BE": "3n7n2n", "BF": "2c22n", "BG": "4a4n2n8c", "BH": "4a14c", "BI": "5n5n11n2n",
    "BJ": "2c22n", "BL": "5n5n11c2n", "BR": "8c5n10n1c1c", "BY": "4c4n16c", "CF": "23n", "CG": "23n", "CH": "5n12c",
    "CI": "2a22n", "CM": "23n", "CR": "4n14n", "CV": "21n", "CY": "3n5n16c", "CZ": "4n6n10n", "DE": "8n10n",
    "DJ": "23n", "DK": "4n9n1n", "DO": "4c20n", "DZ": "22n", "EE": "2n2n11n1n", "EG": "4n4n17n", "ES": "4n4n1n1n10n",
    "FI": "3n11n", "FK": "2a12n", "FO": "4n9n1n", "FR": "5n5n11c2n", "GA": "23n", "GB": "4a6n8n", "GE": "2a16n",
    "GF": "5n5n11c2n", "GG": "4a6n8n", "GI": "4a15c", "GL": "4n9n1n", "GP": "5n5n11c2n", "GQ": "23n",
    "GR": "3n4n16c", "GT": "4c20c", "GW": "2c19n", "HN": "4a20n", "HR": "7n10n", "HU": "3n4n1n15n1n", "IE": "4a6n8n",
    "IL": "3n3n13n", "IM": "4a6n8n", "IQ": "4a3n12n", "IR": "22n", "IS": "4n2n6n10n", "IT": "1a5n5n12c",
    "JE": "4a6n8n", "JO": "4a4n18c", "KM": "23n", "KW": "4a22c", "KZ": "3n13c", "LB": "4n20c", "LC": "4a24c",
    "LI": "5n12c", "LT": "5n11n", "LU": "3n13c", "LV": "4a13c", "LY": "3n3n15n", "MA": "24n", "MC": "5n5n11c2n",
    "MD": "2c18c", "ME": "3n13n2n", "MF": "5n5n11c2n", "MG": "23n", "MK": "3n10c2n", "ML": "2c22n", "MN": "4n12n",
    "MQ": "5n5n11c2n", "MR": "5n5n11n2n", "MT": "4a5n18c", "MU": "4a2n2n12n3n3a", "MZ": "21n", "NC": "5n5n11c2n",
    "NE": "2a22n", "NI": "4a20n", "NL": "4a10n", "NO": "4n6n1n", "OM": "3n16c", "PF": "5n5n11c2n", "PK": "4a16c",
    "PL": "8n16n", "PM": "5n5n11c2n", "PS": "4a21c", "PT": "4n4n11n2n", "QA": "4a21c", "RE": "5n5n11c2n",
    "RO": "4a16c", "RS": "3n13n2n", "RU": "9n5n15c", "SA": "2n18c", "SC": "4a2n2n16n3a", "SD": "2n12n",
    "SE": "3n16n1n", "SI": "5n8n2n", "SK": "4n6n10n", "SM": "1a5n5n12c", "SN": "2a22n", "SO": "4n3n12n",
    "ST": "4n4n11n2n", "SV": "4a20n", "TD": "23n", "TF": "5n5n11c2n", "TG": "2a3n5n12n2n", "TL": "3n14n2n",
    "TN": "2n3n13n2n", "TR": "5n1n16c", "UA": "6n19c", "VA": "3n15n", "VG": "4a16n", "WF": "5n5n11c2n",
    "XK": "4n10n2n", "YE": "4a4n18c", "YT": "5n5n11c2n",

}


def _bban_pattern(spec: str) -> re.Pattern[str]:
    """The regex for a BBAN format: ``n`` an ASCII digit, ``a`` and ``c`` an upper-case letter or a digit."""
    parts = re.findall(r"(\d+)([nac])", spec)
    return re.compile("".join(("[0-9]" if kind == "n" else "[A-Z0-9]") + f"{{{count}}}" for count, kind in parts))


BBAN_PATTERNS: Final[dict[str, re.Pattern[str]]] = {code: _bban_pattern(spec) for code, spec in BBAN_FORMATS.items()}


def bban_ok(country: str, bban: str) -> bool:
    """Whether an upper-case, ASCII ``bban`` has the structure of ``country``'s (digits where it has digits)."""
    pattern = BBAN_PATTERNS.get(country)
    return pattern is None or pattern.fullmatch(bban) is not None
