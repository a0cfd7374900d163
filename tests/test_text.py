"""Números a la española: un solo formato en lo que el curso imprime para una persona."""

import pytest

from course.text import number


@pytest.mark.parametrize(
    ("value", "decimals", "expected"),
    [
        (6713, 0, "6713"),  # cuatro cifras: sin separador
        (12345, 0, "12 345"),
        (2152480, 0, "2 152 480"),
        (9.94, 1, "9,9"),
        (37.045, 2, "37,05"),
        (123456.789, 2, "123 456,79"),
        (-15000, 0, "-15 000"),
        (-0.5, 1, "-0,5"),
        (-0.04, 1, "0,0"),  # sin «-0,0»
    ],
)
def test_number_uses_decimal_comma_and_spaces_from_five_digits(value, decimals, expected):
    assert number(value, decimals) == expected
