"""IBAN lengths by country: the SWIFT IBAN registry, and the national formats in use beside it.

Every country that issues IBANs in the SWIFT registry (release 99, 2025;
checked row by row in tests/capture/test_iban.py against the registry as
the schwifty package publishes it),
plus the countries whose IBANs are in use but not (yet) in the registry
(the BCEAO/BEAC zones, Algeria, Iran, Madagascar, Morocco, Mozambique...),
and the French overseas codes that write their IBANs with their own country
code. Only the length is needed: the mod-97 check does the rest.
"""

from __future__ import annotations

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
