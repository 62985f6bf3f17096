"""The calculate tool: exact date and number arithmetic from its own grammar, and nothing else."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrac_local.agent.calc import CalcError, calculate
from retrac_local.contract.tools import CalculateArgs, CalculateTool


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("1887 - 1849", "38"),
        ("years_between(1849-05-03, 1887-03-14)", "37"),  # not yet 38 on 14 March
        ("years_between(1887-05-03, 1849-05-03)", "38"),  # order does not matter
        ("days_between(2020-01-01, 2020-03-01)", "60"),  # a leap year
        ("max(412, 398) - min(412, 398)", "14"),
        ("1,234.5 * 2", "2469"),
        ("2 ^ 3 ^ 2", "512"),  # right-associative
        ("-(3 + 4) * 2 % 5", "1"),
        ("round(10 / 3, 2)", "3.33"),
    ],
)
def test_it_computes(expression: str, value: str) -> None:
    assert calculate(expression) == value


@pytest.mark.parametrize(
    ("expression", "reason"),
    [
        ("__import__('os').system('id')", "cannot read"),
        ("exec(1)", "unknown function"),
        ("9 ** 99999", "too large"),
        ("1 / 0", "division by zero"),
        ("1849-05-03 + 1", "date can only be used"),
        ("(1 + 2", "ends too early"),
        ("1 2", "unexpected"),
        ("(" * 150 + "1" + ")" * 150, "longer than"),
        ("", "empty"),
    ],
)
def test_anything_outside_the_grammar_is_refused_with_a_reason(expression: str, reason: str) -> None:
    with pytest.raises(CalcError, match=reason):
        calculate(expression)


@given(
    st.recursive(
        st.integers(min_value=0, max_value=10_000).map(str),
        lambda inner: st.tuples(inner, st.sampled_from(["+", "-", "*"]), inner).map(
            lambda t: f"({t[0]} {t[1]} {t[2]})"
        ),
        max_leaves=12,
    )
)
def test_integer_arithmetic_agrees_with_python(expression: str) -> None:
    expected = int(_reference(expression))
    if abs(expected) <= 1e15 and len(expression) <= 200:
        assert calculate(expression) == str(expected)


def _reference(expression: str) -> int:
    """Python's own integer arithmetic on the same text (the test's oracle, never the product's)."""
    import ast

    def walk(node: ast.AST) -> int:
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant):
            return int(node.value)
        assert isinstance(node, ast.BinOp)
        left, right = walk(node.left), walk(node.right)
        return (
            left + right
            if isinstance(node.op, ast.Add)
            else left - right
            if isinstance(node.op, ast.Sub)
            else left * right
        )

    return walk(ast.parse(expression, mode="eval"))


def test_the_tool_reports_results_and_mistakes_as_observations() -> None:
    tool = CalculateTool()
    assert (
        tool(CalculateArgs(tool="calculate", expression="1887 - 1849")).text == "calculate 1887 - 1849 = 38"
    )
    failed = tool(CalculateArgs(tool="calculate", expression="two plus two"))
    assert failed.error == "bad expression" and "failed" in failed.text
