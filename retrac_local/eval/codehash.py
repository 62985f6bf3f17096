"""Which code each evaluation mode answers with, hashed: figures of two versions of a mode must not
be mixed, and a change to one mode must not void the results of the others.

A mode's code is the import closure of its entry modules inside the package (imports inside
functions included), plus the prompt templates those modules name, plus the shared infrastructure
every mode runs on (models, corpus, settings)."""

from __future__ import annotations

import ast
import hashlib
from functools import cache
from pathlib import Path

PACKAGE = "retrac_local"
ROOT = Path(__file__).resolve().parent.parent
SHARED = ("retrac_local.llm", "retrac_local.corpus", "retrac_local.config", "retrac_local.errors")
ENTRIES = {
    "retrac": ("retrac_local.agent.loop", "retrac_local.api"),
    "react": ("retrac_local.baselines.react",),
    "rag": ("retrac_local.baselines.rag",),
}


def _path(module: str, root: Path) -> Path | None:
    rel = Path(*module.split(".")[1:])
    if not rel.parts:
        return root / "__init__.py"
    for candidate in (root / rel.with_suffix(".py"), root / rel / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imports(path: Path) -> tuple[set[str], set[str]]:
    """Package modules that `path` imports, and the prompt templates it renders."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    modules: set[str] = set()
    strings: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules.update(a.name for a in node.names if a.name.startswith(PACKAGE))
        elif (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.module.startswith(PACKAGE)
            and not node.level
        ):
            modules.add(node.module)
            modules.update(f"{node.module}.{a.name}" for a in node.names)  # `from pkg import module`
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "render"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            strings.add(node.args[0].value)  # prompts.render("name", …)
    return modules, strings


def closure(entries: tuple[str, ...], root: Path = ROOT) -> list[Path]:
    """The package files reachable from `entries`, each package's `__init__` included; a package
    named as an entry brings all its modules."""
    todo = list(entries)
    for entry in entries:
        folder = root / Path(*entry.split(".")[1:])
        if folder.is_dir():
            todo += [f"{entry}.{p.stem}" for p in folder.glob("*.py")]
    seen: set[Path] = set()
    strings: set[str] = set()
    while todo:
        module = todo.pop()
        parts = module.split(".")
        for i in range(1, len(parts) + 1):
            path = _path(".".join(parts[:i]), root)
            if path is None or path in seen:
                continue
            seen.add(path)
            found, consts = _imports(path)
            todo.extend(found)
            strings |= consts
    templates = [p for p in (root / "prompts").glob("*.j2") if p.stem in strings]
    return sorted(seen | set(templates))


def _meaning(path: Path) -> bytes:
    """What a file does, not how it is written: a module's syntax tree without docstrings (comments,
    blank lines and layout are not in the tree), so that a reworded comment or `ruff format` does not
    void an evaluation; a prompt template as it is (every character of it reaches the model)."""
    if path.suffix != ".py":
        return path.read_bytes()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if (
            isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and node.body
            and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)
            and isinstance(node.body[0].value.value, str)
        ):
            node.body = node.body[1:] or [ast.Pass()]
    return ast.dump(tree).encode()


@cache
def mode_version(mode: str, root: Path = ROOT) -> str:
    """A hash of what the code and prompts `mode`'s answers depend on do."""
    digest = hashlib.sha1()
    for path in closure((*ENTRIES[mode], *SHARED), root):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(_meaning(path))
    return digest.hexdigest()[:12]


@cache
def legacy_version(mode: str, root: Path = ROOT) -> str:
    """The hash evaluations recorded before `mode_version` read syntax trees: over the files' bytes.
    An evaluation recorded under today's files hashed this way is today's code, and its results are
    carried over to `mode_version` (`Evaluation(..., legacy_code=…)`)."""
    digest = hashlib.sha1()
    for path in closure((*ENTRIES[mode], *SHARED), root):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def main(argv: list[str] | None = None) -> None:
    """`python -m retrac_local.eval.codehash [MODE …]`: each mode's version and the files it hashes,
    so that work beside a running evaluation can keep to files outside it."""
    import sys

    for mode in (argv if argv is not None else sys.argv[1:]) or list(ENTRIES):
        print(f"{mode} {mode_version(mode)}")
        for path in closure((*ENTRIES[mode], *SHARED)):
            print(f"  {path.relative_to(ROOT.parent).as_posix()}")


if __name__ == "__main__":
    main()
