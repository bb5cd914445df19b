"""Friendly durations and sizes: parsing what people write, formatting without changing meaning."""

from __future__ import annotations

import pytest

from reconciler import units


@pytest.mark.parametrize(
    "text, ms",
    [
        ("7d", 604_800_000),
        ("12h", 43_200_000),
        ("1h30m", 5_400_000),
        ("500ms", 500),
        ("2w", 1_209_600_000),
        ("30s", 30_000),
        ("604800000", 604_800_000),
        ("-1", -1),
        (" 15m ", 900_000),
    ],
)
def test_parse_duration(text, ms):
    assert units.parse_duration_ms(text) == ms


@pytest.mark.parametrize("text", ["soon", "7 fortnights", "1.5h", "h", "7D", ""])
def test_bad_durations_say_what_is_accepted(text):
    with pytest.raises(ValueError, match=r"is not a duration; write milliseconds or e\.g\."):
        units.parse_duration_ms(text)


@pytest.mark.parametrize(
    "text, n",
    [
        ("1GiB", 1024**3),
        ("50GiB", 50 * 1024**3),
        ("512KiB", 524_288),
        ("1GB", 10**9),
        ("100 MiB", 100 * 1024**2),
        ("1073741824", 1024**3),
        ("-1", -1),
        ("1tib", 1024**4),
    ],
)
def test_parse_bytes(text, n):
    assert units.parse_bytes(text) == n


@pytest.mark.parametrize("text", ["10XB", "big", "1.5GiB", "GiB"])
def test_bad_sizes(text):
    with pytest.raises(ValueError, match="is not a size"):
        units.parse_bytes(text)


@pytest.mark.parametrize(
    "ms, text",
    [(604_800_000, "1w"), (86_400_000, "1d"), (5_400_000, "90m"), (1500, "1500ms"), (-1, "-1"), (0, "0"), (2_592_000_000, "30d")],
)
def test_format_duration_is_exact(ms, text):
    assert units.format_duration_ms(ms) == text
    assert units.parse_duration_ms(text) == ms


@pytest.mark.parametrize("n, text", [(53_687_091_200, "50GiB"), (1000, "1000"), (1_048_576, "1MiB"), (-1, "-1"), (1_536, "1536")])
def test_format_bytes_is_exact(n, text):
    assert units.format_bytes(n) == text
    assert units.parse_bytes(text) == n


def test_every_formatted_value_parses_back_to_itself():
    for n in [1, 999, 1000, 60_000, 61_000, 3_600_000, 86_400_001, 7 * 86_400_000, 123_456_789]:
        assert units.parse_duration_ms(units.format_duration_ms(n)) == n
    for n in [1, 1023, 1024, 1025, 4096, 10**9, 3 * 1024**3, 5 * 1024**4 + 1]:
        assert units.parse_bytes(units.format_bytes(n)) == n


def test_human_forms_are_for_reading():
    assert units.human_duration(90_061_000) == "1d 1h"
    assert units.human_duration(-1) == "unlimited"
    assert units.human_bytes(53_687_091_200) == "50.0 GiB"
    assert units.human_bytes(512) == "512 B"


LONG_MAX = 2**63 - 1


@pytest.mark.parametrize("parse", [units.parse_duration_ms, units.parse_bytes])
def test_text_has_the_range_of_a_long_like_a_number(parse):
    """Kafka's long (int64) bounds a value written with a unit as it bounds a bare number."""
    assert parse(str(LONG_MAX)) == LONG_MAX and parse(str(-(2**63))) == -(2**63)
    for text in (str(LONG_MAX + 1), str(-(2**63) - 1)):
        with pytest.raises(ValueError, match=r"the (largest|smallest) value Kafka takes"):
            parse(text)


@pytest.mark.parametrize(
    ("parse", "largest", "beyond"),
    [
        (units.parse_duration_ms, "15250284452w", "15250284453w"),
        (units.parse_duration_ms, "106751991167d", "106751991168d"),
        (units.parse_bytes, "8388607TiB", "8388608TiB"),
        (units.parse_bytes, "9223372036854775807 B", "99999999TiB"),
    ],
)
def test_a_unit_cannot_carry_a_value_beyond_a_long(parse, largest, beyond):
    assert 0 < parse(largest) <= LONG_MAX
    with pytest.raises(ValueError, match=rf"'{beyond}' is above the largest value Kafka takes \(9,223,372,036,854,775,807"):
        parse(beyond)
