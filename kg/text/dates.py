"""Month and weekday names, and the regex alternations that match them (English)."""

from __future__ import annotations

#: The month names, January first.
MONTH_NAMES = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
    "November", "December",
)  # fmt: skip
#: Lower-case full month name -> its number (1-12).
MONTHS = {name.lower(): number for number, name in enumerate(MONTH_NAMES, start=1)}
#: Lower-case full name or abbreviation (``jan``, ``sept``) -> the month's number.
MONTH_NUMBERS = {**MONTHS, **{name[:3]: number for name, number in MONTHS.items()}, "sept": 9}
#: The weekday names, Monday first.
WEEKDAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
#: A regex alternation of the lower-case full month names (use with ``re.IGNORECASE``).
MONTH_PATTERN = "|".join(MONTHS)
#: A regex alternation of the full month names and their abbreviations, longest first (``sept`` before ``sep``).
MONTH_OR_ABBREVIATION_PATTERN = "|".join(sorted(MONTH_NUMBERS, key=lambda name: (-len(name), name)))


def month_number(name: str) -> int | None:
    """The number of a month named in full or abbreviated, in any case; None for anything else."""
    return MONTH_NUMBERS.get(name.lower())


__all__ = [
    "MONTHS",
    "MONTH_NAMES",
    "MONTH_NUMBERS",
    "MONTH_OR_ABBREVIATION_PATTERN",
    "MONTH_PATTERN",
    "WEEKDAY_NAMES",
    "month_number",
]
