import subprocess
import sys

HEAVY = [
    "llama_cpp",
    "torch",
    "sentence_transformers",
    "lancedb",
    "outlines",
    "outlines_core",
    "trafilatura",
    "pypdf",
    "ray",
]


def test_importing_the_package_and_cli_loads_no_heavy_library() -> None:
    code = (
        "import sys, retrac_local, retrac_local.api, retrac_local.cli.main, retrac_local.agent.loop, retrac_local.batch.driver;"
        f"print([m for m in {HEAVY!r} if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def _package_imports() -> dict[str, set[str]]:
    """Each module of the package and the package modules it imports, anywhere in it (inside
    functions and under TYPE_CHECKING too: an import cycle hidden by the import order is one still)."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent / "retrac_local"
    modules = {
        ".".join(p.relative_to(root.parent).with_suffix("").parts).removesuffix(".__init__"): p
        for p in root.rglob("*.py")
    }
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
        graph[name] = {m for m in found if m in modules and m != name}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                out.append(sorted(part))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_the_package_has_no_import_cycle() -> None:
    assert _cycles(_package_imports()) == []


def test_the_cycle_finder_finds_one() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
