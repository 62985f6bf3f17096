"""The model registry (models/models.toml): which GGUF file serves which role by default."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from retrac_local.errors import ConfigError


@dataclass(frozen=True)
class RegistryModel:
    name: str
    roles: tuple[str, ...]
    file: str
    size: int
    sha256: str
    licence: str
    upstream: str


def load_registry(models_dir: Path) -> list[RegistryModel]:
    path = models_dir / "models.toml"
    try:
        with path.open("rb") as f:
            raw = tomllib.load(f)["models"]
    except (OSError, KeyError, tomllib.TOMLDecodeError) as e:
        raise ConfigError(
            f"model registry {path} cannot be read ({e}); set [planner].path and [compressor].path in the config"
        ) from e
    return [
        RegistryModel(
            name=name,
            roles=tuple(spec.get("roles", ())),
            file=spec["file"],
            size=spec["size"],
            sha256=spec["sha256"],
            licence=spec.get("licence", "?"),
            upstream=spec.get("upstream", "?"),
        )
        for name, spec in raw.items()
    ]


def default_model_for(role: str, models_dir: Path) -> RegistryModel:
    for model in load_registry(models_dir):
        if role in model.roles:
            return model
    raise ConfigError(f"{models_dir / 'models.toml'} names no default model for role {role!r}")
