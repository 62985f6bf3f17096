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
