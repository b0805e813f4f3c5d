"""Probe options: -P key=value, the flag aliases, conversions and one-line errors."""

from pathlib import Path

import pytest

from biaslab.errors import ConfigError
from biaslab.probes import PROBES, get_probe_class
from biaslab.probing.options import parse_bool, probe_kwargs, split_assignments


def test_assignments_split_on_the_first_equals_and_dashes_become_underscores():
    assert split_assignments(["scoring=full-sentence", "build-seed=3", "pairs=a=b.csv"]) == {
        "scoring": "full-sentence", "build_seed": "3", "pairs": "a=b.csv"}
    for bad in ("scoring", "=x"):
        with pytest.raises(ConfigError, match="is not KEY=VALUE"):
            split_assignments([bad])


def test_values_are_converted_to_the_declared_type_and_renamed_to_the_constructor_argument():
    assert probe_kwargs("pairs", {"pairs": "x.csv", "faithful": "yes", "build_seed": "7"}) == {
        "pairs": Path("x.csv"), "faithful": True, "seed": 7}
    assert probe_kwargs("fsb-judge", {"items": "i.csv", "n_bootstrap": "50"}) == {
        "items_file": Path("i.csv"), "n_bootstrap": 50}
    assert probe_kwargs("olympics", {"n_permutations": "200"}) == {"n_permutations": 200}
    assert parse_bool("Off") is False and parse_bool("1") is True


def test_an_option_of_another_probe_names_the_flag_and_the_probes_that_take_it():
    with pytest.raises(ConfigError) as exc:
        probe_kwargs("jobs-lum", {"pairs": "x.csv"}, via={"pairs": "--pairs"})
    assert str(exc.value).startswith("--pairs does not apply to the jobs-lum probe; it works with: gpt-winoqueer")
    with pytest.raises(ConfigError, match=r"-P colour does not apply to the pairs probe; pairs takes: build_seed, "
                                          r"chat_template, faithful, pairs, scoring"):
        probe_kwargs("pairs", {"colour": "red"})
    with pytest.raises(ConfigError, match=r"-P n_bootstrap=many: expected a whole number"):
        probe_kwargs("fsb-judge", {"n_bootstrap": "many"})
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
