"""Times of day and time zones as the daily job and the scheduler take them."""

from __future__ import annotations

from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from okgen.errors import ConfigError


def parse_at(at: str) -> tuple[int, int]:
    """Parse ``HH:MM``.

    Raises:
        ConfigError: not a valid time of day.
    """
    try:
        hh, mm = at.split(":")
        hour, minute = int(hh), int(mm)
        if not (0 <= hour < 24 and 0 <= minute < 60):
            raise ValueError
    except ValueError:
        raise ConfigError(f"--at takes HH:MM (24-hour), got {at!r}") from None
    return hour, minute


def parse_tz(name: str) -> ZoneInfo:
    """Parse an IANA time zone name.

    Raises:
        ConfigError: unknown zone.
    """
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ConfigError(f"unknown time zone {name!r} (use an IANA name such as UTC or Europe/Berlin)") from None
