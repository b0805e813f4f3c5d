"""Probe options: -P key=value, the flag aliases, conversions and one-line errors."""

from pathlib import Path

import pytest

from biaslab.app.resolve import probe_kwargs
from biaslab.errors import ConfigError
from biaslab.probes import PROBES, get_probe_class
from biaslab.probing.options import parse_bool, split_assignments
from tests.cli_runner import run_cli


def test_assignments_split_on_the_first_equals_and_dashes_become_underscores():
    assert split_assignments(["scoring=full-sentence", "build-seed=3", "pairs=a=b.csv"]) == {
        "scoring": "full-sentence",
        "build_seed": "3",
        "pairs": "a=b.csv",
    }
    for bad in ("scoring", "=x"):
        with pytest.raises(ConfigError, match="is not KEY=VALUE"):
            split_assignments([bad])


def test_values_are_converted_to_the_declared_type_and_renamed_to_the_constructor_argument():
    assert probe_kwargs("pairs", {"pairs": "x.csv", "faithful": "yes", "build_seed": "7"}) == {
        "pairs": Path("x.csv"),
        "faithful": True,
        "seed": 7,
    }
    assert probe_kwargs("fsb-judge", {"items": "i.csv", "reasons": "true"}) == {
        "items_file": Path("i.csv"),
        "reasons": True,
    }
    assert probe_kwargs("olympics", {"n_permutations": "200"}) == {"n_permutations": 200}
    assert parse_bool("Off") is False and parse_bool("1") is True


def test_an_option_of_another_probe_names_the_flag_and_the_probes_that_take_it():
    with pytest.raises(ConfigError) as exc:
        probe_kwargs("jobs-lum", {"pairs": "x.csv"}, via={"pairs": "--pairs"})
    assert str(exc.value).startswith("--pairs does not apply to the jobs-lum probe; it works with: gpt-winoqueer")
    with pytest.raises(
        ConfigError,
        match=r"-P colour does not apply to the pairs probe; pairs takes: build_seed, "
        r"chat_template, faithful, pairs, scoring",
    ):
        probe_kwargs("pairs", {"colour": "red"})
    with pytest.raises(ConfigError, match=r"-P n_permutations=many: expected a whole number"):
        probe_kwargs("olympics", {"n_permutations": "many"})
    with pytest.raises(ConfigError, match=r"-P faithful=maybe: expected true or false"):
        probe_kwargs("winosemitism", {"faithful": "maybe"})


@pytest.mark.parametrize("name", sorted(PROBES))
def test_every_declared_option_is_a_constructor_argument(name):
    import inspect

    cls = get_probe_class(name)
    accepted = inspect.signature(cls.__init__).parameters
    for key, option in cls.options.items():
        assert (option.param or key) in accepted, (name, key)
        assert option.help


def test_a_key_the_probe_lacks_but_local_models_take_goes_to_the_model():
    from biaslab.app.resolve import split_model_options

    probe, model = split_model_options(
        "pairs",
        {"scoring": "full-sentence", "precision": "bf16", "workers": "1", "chat_template": "user", "colour": "red"},
    )
    assert model == {"precision": "bf16", "workers": "1"}  # chat_template: the pairs probe's own option
    assert probe == {"scoring": "full-sentence", "chat_template": "user", "colour": "red"}
    with pytest.raises(ConfigError, match="-P colour does not apply to the pairs probe"):
        probe_kwargs("pairs", probe)


def test_model_options_are_refused_for_models_that_are_not_local(tmp_path):
    from biaslab.models.open import open_cached_model

    with pytest.raises(ConfigError, match=r"model options \(precision\) apply to local models"):
        open_cached_model("scripted/echo", cache_dir=tmp_path, model_options={"precision": "bf16"})
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    with pytest.raises(ConfigError, match="precision must be one of float32, bf16"):
        open_cached_model(f"gguf/{gguf}", cache_dir=tmp_path, model_options={"precision": "int3"})


@pytest.mark.parametrize("name", sorted(PROBES))
def test_every_numeric_option_declares_the_range_it_takes(name):
    for key, option in get_probe_class(name).options.items():
        if option.type in (int, float):
            assert option.minimum is not None and option.maximum is not None, (name, key)


@pytest.mark.parametrize(
    "probe, option, needle",
    [
        ("olympics", "n_permutations=0", "-P n_permutations=0: must be from 1 to 1,000,000 (Permutations"),
        ("olympics", "n_permutations=-5", "-P n_permutations=-5: must be from 1 to 1,000,000"),
        ("olympics", "n_permutations=100000000", "-P n_permutations=100,000,000: must be from 1 to 1,000,000"),
        ("bold", "threshold=0", "-P threshold=0: must be above 0 and at most 1"),
        ("bold", "threshold=nan", "-P threshold=nan: must be above 0 and at most 1"),
        ("relationship-levy", "size=0", "-P size=0: must be from 1 to 100,000"),
        ("diversity-med-qa", "orderings=121", "-P orderings=121: must be from 1 to 120"),
        ("winosemitism", "build_seed=-1", "-P build_seed=-1: must be from 0 to 4,294,967,295"),
    ],
)
def test_a_number_outside_the_declared_range_is_one_line_before_any_model_call(tmp_path, probe, option, needle):
    out = tmp_path / "run"
    proc = run_cli("run", probe, "--model", "scripted/he", "-P", option, "--out", out, "-q")
    assert proc.returncode != 0 and needle in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_the_ends_of_a_range_are_taken():
    assert probe_kwargs("pairs", {"build_seed": "0"}) == {"seed": 0}
    assert probe_kwargs("bold", {"threshold": "1"}) == {"threshold": 1.0}
    assert probe_kwargs("gest", {"reorderings": "6"}) == {"reorderings": 6}


@pytest.mark.parametrize("name", sorted(PROBES))
def test_a_probe_built_from_python_refuses_a_number_outside_the_declared_range_too(name):
    cls = get_probe_class(name)
    for key, option in cls.options.items():
        if option.type in (int, float):
            below = option.minimum if option.above else option.minimum - 1
            for bad in (below, option.maximum + 1):
                with pytest.raises(ConfigError, match=rf"-P {key}="):
                    cls(**{option.param or key: option.type(bad)})
