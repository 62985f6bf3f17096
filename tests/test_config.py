import json
from pathlib import Path

import pytest

from retrac_local.config import Settings, load_settings
from retrac_local.errors import ConfigError


def test_defaults_and_paths(isolated_home: Path) -> None:
    s = load_settings()
    assert s.home == isolated_home
    assert s.runs_db == isolated_home / "runs.sqlite"
    assert s.budget.max_rounds >= 1 and s.retrieval.k >= 1
    assert s.model_path("planner").name.endswith(".gguf")


def test_file_then_environment_then_overrides(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolated_home.mkdir(parents=True)
    (isolated_home / "config.toml").write_text(
        "[budget]\nmax_rounds = 7\nmax_steps_per_round = 5\n[retrieval]\nk = 9\n"
    )
    monkeypatch.setenv("RETRAC_BUDGET__MAX_STEPS_PER_ROUND", "2")
    s = load_settings(retrieval={"k": 3})
    assert s.budget.max_rounds == 7  # file
    assert s.budget.max_steps_per_round == 2  # environment beats file
    assert s.retrieval.k == 3  # options beat both


def test_unknown_key_is_named(isolated_home: Path) -> None:
    isolated_home.mkdir(parents=True)
    (isolated_home / "config.toml").write_text("[budget]\nmax_round = 3\n")
    with pytest.raises(ConfigError, match=r"config.toml.*unknown key `budget.max_round`"):
        load_settings()


def test_a_setting_of_a_removed_rule_says_it_was_removed_and_what_replaced_it(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolated_home.mkdir(parents=True)
    (isolated_home / "config.toml").write_text("[budget]\ncheck_answer = true\n")
    with pytest.raises(ConfigError, match=r"`budget.check_answer` is no longer a setting: .*answer_samples"):
        load_settings()
    (isolated_home / "config.toml").unlink()
    monkeypatch.setenv("RETRAC_BUDGET__CHECK_ANSWER", "true")
    with pytest.raises(ConfigError, match=r"`budget.check_answer` is no longer a setting"):
        load_settings()


def test_the_compressor_cap_loads_under_its_earlier_name_from_file_and_environment(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolated_home.mkdir(parents=True)
    (isolated_home / "config.toml").write_text("[sampling]\nstate_max_tokens = 500\n")
    s = load_settings()
    assert s.sampling.update_max_tokens == 500
    assert s.state_max_tokens == 1200  # the rendered state's budget is another setting, left alone
    monkeypatch.setenv("RETRAC_SAMPLING__STATE_MAX_TOKENS", "321")
    assert load_settings().sampling.update_max_tokens == 321
    (isolated_home / "config.toml").write_text("[sampling]\nupdate_max_token = 500\n")
    with pytest.raises(ConfigError, match="sampling.update_max_token"):
        load_settings()


def test_wrong_type_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RETRAC_BUDGET__MAX_ROUNDS", "many")
    with pytest.raises(ConfigError, match="budget.max_rounds"):
        load_settings()


def test_invalid_toml_and_missing_explicit_file(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    isolated_home.mkdir(parents=True)
    (isolated_home / "config.toml").write_text("[budget\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_settings()
    monkeypatch.setenv("RETRAC_CONFIG", str(tmp_path / "nope.toml"))
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings()


def test_explicit_model_path_wins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("RETRAC_COMPRESSOR__PATH", str(tmp_path / "small.gguf"))
    assert load_settings().model_path("compressor") == tmp_path / "small.gguf"


def test_config_init_writes_every_setting_commented_and_show_names_sources(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from retrac_local.cli.main import cli
    from retrac_local.config import Settings

    runner = CliRunner()
    assert runner.invoke(cli, ["config", "init"]).exit_code == 0
    path = isolated_home / "config.toml"
    text = path.read_text()
    for section in Settings.model_fields:
        if section != "home":
            assert section in text
    assert "# max_rounds = 4" in text and "[budget]" in text
    assert load_settings().budget.max_rounds == 4  # all commented: nothing changes
    assert "exists; use --force" in runner.invoke(cli, ["config", "init"]).output
    path.write_text(text.replace("# max_rounds = 4", "max_rounds = 7").replace("# k = 4", "k = 9"))
    assert load_settings().budget.max_rounds == 7
    monkeypatch.setenv("RETRAC_RETRIEVAL__K", "5")
    rows = {r["name"]: r for r in json.loads(runner.invoke(cli, ["config", "show", "--json"]).stdout)}
    assert rows["budget.max_rounds"]["value"] == 7 and rows["budget.max_rounds"]["source"] == f"file {path}"
    assert rows["retrieval.k"] == {
        "name": "retrieval.k",
        "value": 5,
        "source": "environment RETRAC_RETRIEVAL__K",
    }
    assert rows["budget.max_steps_per_round"]["source"] == "default"


def test_the_collection_can_live_on_an_object_store(isolated_home, monkeypatch) -> None:
    from retrac_local.corpus.store import CorpusStore, is_remote
    from retrac_local.errors import StoreError

    local = load_settings()
    assert local.corpus_uri == str(isolated_home / "corpus" / "lance") and not is_remote(local.corpus_uri)
    monkeypatch.setenv("RETRAC_CORPUS__URI", "s3://team/collection")
    monkeypatch.setenv("RETRAC_CORPUS__STORAGE_OPTIONS", json.dumps({"endpoint": "http://127.0.0.1:9000"}))
    remote = load_settings()
    assert remote.corpus_uri == "s3://team/collection" and is_remote(remote.corpus_uri)
    assert remote.corpus.storage_options == {"endpoint": "http://127.0.0.1:9000"}
    store = CorpusStore(remote.corpus_uri, lambda: None, local_dir=remote.corpus_dir)  # type: ignore[arg-type, return-value]
    assert store.path is None and store.local_dir == isolated_home / "corpus" and store.size_bytes() is None
    with pytest.raises(StoreError, match="needs a local folder"):
        CorpusStore("s3://team/collection", lambda: None)  # type: ignore[arg-type, return-value]


def test_a_config_file_that_is_not_utf8_too_large_or_not_a_file_is_one_clear_error(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from retrac_local.config import load_settings

    bad = tmp_path / "latin1.toml"
    bad.write_bytes("[budget]\n# r\xe9sum\xe9\nmax_rounds = 3\n".encode("latin-1"))
    monkeypatch.setenv("RETRAC_CONFIG", str(bad))
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_settings()
    huge = tmp_path / "huge.toml"
    huge.write_bytes(b"# padding\n" * 200_000)
    monkeypatch.setenv("RETRAC_CONFIG", str(huge))
    with pytest.raises(ConfigError, match="larger than 1024 KB"):
        load_settings()
    monkeypatch.setenv("RETRAC_CONFIG", "/dev/zero")  # endless: never read to its end
    with pytest.raises(ConfigError, match="not a regular file"):
        load_settings()


@pytest.mark.parametrize(
    ("section", "key", "value"),
    [
        ("planner", "timeout_s", float("inf")),
        ("planner", "timeout_s", float("nan")),
        ("budget", "max_rounds", 1_000_000_000),
        ("budget", "max_seconds", float("inf")),
        ("planner", "n_ctx", 10**9),
    ],
)
def test_settings_a_run_cannot_use_are_refused(
    isolated_home: Path, section: str, key: str, value: float
) -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        Settings(home=isolated_home, **{section: {key: value}})
