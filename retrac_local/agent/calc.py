"""A safe calculator for the `calculate` tool: its own small grammar, never Python's `eval`.

    expression := sum
    sum        := product (("+" | "-") product)*
    product    := power (("*" | "/" | "//" | "%") power)*
    power      := unary ("^" | "**") power | unary
    unary      := ("-" | "+") unary | atom
    atom       := NUMBER | DATE | NAME "(" expression ("," expression)* ")" | "(" expression ")"

NUMBER may carry thousands separators (1,234.5); DATE is ISO (1849-05-03). Functions: abs, min, max,
round, years_between(d1, d2) (whole years, as an age is counted), days_between(d1, d2). Small models
get date and number reasoning wrong; this gets it right, and can do nothing else.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Callable
from dataclasses import dataclass

MAX_LENGTH = 200
MAX_MAGNITUDE = 1e15
MAX_EXPONENT = 64

_TOKEN = re.compile(
    r"""\s*(?:
    (?P<date>\d{4}-\d{2}-\d{2})
  | (?P<number>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)
  | (?P<name>[a-z_]+)
  | (?P<op>\*\*|//|[-+*/%^(),])
)""",
    re.VERBOSE,
)


class CalcError(ValueError):
    """The expression is not in the grammar, or its value is out of range."""


@dataclass(frozen=True)
class _Date:
    value: dt.date


Value = float | _Date


def _years_between(a: Value, b: Value) -> float:
    d1, d2 = sorted((_date(a), _date(b)))
    return float(d2.year - d1.year - ((d2.month, d2.day) < (d1.month, d1.day)))


def _days_between(a: Value, b: Value) -> float:
    return float(abs((_date(b) - _date(a)).days))


def _date(v: Value) -> dt.date:
    if not isinstance(v, _Date):
        raise CalcError("years_between and days_between take dates written YYYY-MM-DD")
    return v.value


FUNCTIONS: dict[str, tuple[Callable[..., float], int, int]] = {  # name: (function, min args, max args)
    "abs": (lambda x: abs(x), 1, 1),
    "min": (lambda *xs: min(xs), 1, 16),
    "max": (lambda *xs: max(xs), 1, 16),
    "round": (lambda x, n=0.0: float(round(x, int(n))), 1, 2),
    "years_between": (_years_between, 2, 2),
    "days_between": (_days_between, 2, 2),
}
_DATE_FUNCTIONS = {"years_between", "days_between"}


def _tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise CalcError(
                f"cannot read {text[pos : pos + 12]!r}: use numbers, + - * / // % ^, parentheses, "
                f"dates as YYYY-MM-DD and {', '.join(FUNCTIONS)}"
            )
        kind = m.lastgroup
        assert kind is not None
        out.append((kind, m.group(kind)))
        pos = m.end()
    return out


class _Parser:
    def __init__(self, tokens: list[tuple[str, str]]) -> None:
        self.tokens, self.i = tokens, 0

    def peek(self) -> str | None:
        return self.tokens[self.i][1] if self.i < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        if self.i >= len(self.tokens):
            raise CalcError("the expression ends too early")
        self.i += 1
        return self.tokens[self.i - 1]

    def expect(self, op: str) -> None:
        if self.take()[1] != op:
            raise CalcError(f"expected {op!r}")

    def sum(self) -> Value:
        value = self.product()
        while self.peek() in ("+", "-"):
            op = self.take()[1]
            value = _checked(
                _num(value) + _num(self.product()) if op == "+" else _num(value) - _num(self.product())
            )
        return value

    def product(self) -> Value:
        value = self.power()
        while self.peek() in ("*", "/", "//", "%"):
            op = self.take()[1]
            right = _num(self.power())
            if op != "*" and right == 0:
                raise CalcError("division by zero")
            left = _num(value)
            value = _checked(
                left * right
                if op == "*"
                else left / right
                if op == "/"
                else float(left // right)
                if op == "//"
                else left % right
            )
        return value

    def power(self) -> Value:
        base = self.unary()
        if self.peek() in ("^", "**"):
            self.take()
            exponent = _num(self.power())
            if abs(exponent) > MAX_EXPONENT:
                raise CalcError(f"exponent {exponent:g} is too large")
            try:
                return _checked(_num(base) ** exponent)
            except (OverflowError, ZeroDivisionError) as e:
                raise CalcError(str(e)) from e
        return base

    def unary(self) -> Value:
        if self.peek() in ("-", "+"):
            sign = -1.0 if self.take()[1] == "-" else 1.0
            return sign * _num(self.unary())
        return self.atom()

    def atom(self) -> Value:
        kind, text = self.take()
        if kind == "number":
            return _checked(float(text.replace(",", "")))
        if kind == "date":
            try:
                return _Date(dt.date.fromisoformat(text))
            except ValueError as e:
                raise CalcError(f"{text} is not a date") from e
        if kind == "name":
            if text not in FUNCTIONS:
                raise CalcError(f"unknown function {text!r}; known: {', '.join(FUNCTIONS)}")
            function, least, most = FUNCTIONS[text]
            self.expect("(")
            args = [self.sum()]
            while self.peek() == ",":
                self.take()
                args.append(self.sum())
            self.expect(")")
            if not least <= len(args) <= most:
                raise CalcError(f"{text} takes {least}–{most} argument(s), got {len(args)}")
            if text not in _DATE_FUNCTIONS:
                args = [_num(a) for a in args]
            return _checked(function(*args))
        if text == "(":
            value = self.sum()
            self.expect(")")
            return value
        raise CalcError(f"unexpected {text!r}")


def _num(v: Value) -> float:
    if isinstance(v, _Date):
        raise CalcError("a date can only be used inside years_between or days_between")
    return v


def _checked(v: Value) -> Value:
    if isinstance(v, float) and (math.isnan(v) or abs(v) > MAX_MAGNITUDE):
        raise CalcError("the result is out of range")
    return v


def calculate(expression: str) -> str:
    """The value of `expression`, as text (whole numbers without a decimal point)."""
    if len(expression) > MAX_LENGTH:
        raise CalcError(f"the expression is longer than {MAX_LENGTH} characters")
    parser = _Parser(_tokens(expression))
    if not parser.tokens:
        raise CalcError("the expression is empty")
    value = _num(parser.sum())
    if parser.i != len(parser.tokens):
        raise CalcError(f"unexpected {parser.tokens[parser.i][1]!r}")
    return str(int(value)) if float(value).is_integer() else f"{value:.6g}"
