"""IBAN lengths by country: the SWIFT IBAN registry, and the national formats in use beside it.

Every country that issues IBANs in the SWIFT registry (release 99, 2025;
checked row by row in tests/capture/test_iban.py against the registry as
the schwifty package publishes it),
plus the countries whose IBANs are in use but not (yet) in the registry
(the BCEAO/BEAC zones, Algeria, Iran, Madagascar, Morocco, Mozambique...),
and the French overseas codes that write their IBANs with their own country
code. Each country's BBAN structure (:data:`BBAN_FORMATS`), which gives its length
(:data:`LENGTHS`) and which positions after the check digits hold digits only. The
mod-97 check does the rest.
"""

from __future__ import annotations

import re
from typing import Final

# The countries of the SWIFT registry; registered under their parent's entry (Finland's, the United
# Kingdom's) with their own code: AX, GG, IM, JE.
REGISTRY: Final[frozenset[str]] = frozenset("""
    AD AE AL AT AZ BA BE BG BH BI BR BY CH CR CY CZ DE DJ DK DO EE EG ES FI FK FO FR GB GE GI GL GR GT HN
    HR HU IE IL IQ IS IT JO KW KZ LB LC LI LT LU LV LY MC MD ME MK MN MR MT MU NI NL NO OM PK PL PS PT QA
    RO RS RU SA SC SD SE SI SK SM SO ST SV TL TN TR UA VA VG XK YE AX GG IM JE
""".split())

# In use, not in the SWIFT registry.
NATIONAL: Final[frozenset[str]] = frozenset("""
    AO BF BJ CF CG CI CM CV DZ GA GQ GW IR KM MA MG ML MZ NE SN TD TG
""".split())

# French overseas departments and territories: France's format, their own code.
FRENCH_OVERSEAS: Final[frozenset[str]] = frozenset("BL GF GP MF MQ NC PF PM RE TF WF YT".split())

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


LENGTHS: Final[dict[str, int]] = {
    code: 4 + sum(int(count) for count in re.findall(r"\d+", spec)) for code, spec in BBAN_FORMATS.items()
}
"""Each country's IBAN length: its code and check digits, then its BBAN."""

BBAN_PATTERNS: Final[dict[str, re.Pattern[str]]] = {code: _bban_pattern(spec) for code, spec in BBAN_FORMATS.items()}


def bban_ok(country: str, bban: str) -> bool:
    """Whether an upper-case, ASCII ``bban`` has the structure of ``country``'s (digits where it has digits)."""
    pattern = BBAN_PATTERNS.get(country)
    return pattern is None or pattern.fullmatch(bban) is not None
