"""A run walks down once: the probe's class looked up once, the model spec parsed once, the report rendered from the
results and the probe object the run used."""

import pytest

import biaslab.app.resolve as resolve
import biaslab.models.registry as registry
from biaslab.errors import ConfigError
from tests.conftest import requires_data


def _counting(monkeypatch, module, name):
    calls: list[tuple] = []
    real = getattr(module, name)

    def counted(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


@requires_data
def test_a_run_looks_its_probe_up_once_and_parses_its_model_spec_once(cli, tmp_path, monkeypatch):
    import biaslab.app.execute as execute

    lookups = _counting(monkeypatch, resolve, "get_probe_class")
    parses = _counting(monkeypatch, registry, "_parse")
    written: list = []
    monkeypatch.setattr(execute, "write_run", lambda out, probe, results, attempts: written.append((probe, results)))
    cli(
        "run",
        "jobs-lum",
        "--model",
        "scripted/he",
        "-n",
        "2",
        "--out",
        tmp_path,
        "-q",
        "--cache-dir",
        tmp_path,
        check=True,
    )
    assert lookups == [("jobs-lum",)] and parses == [("scripted/he", None)]
    ((probe, results),) = written  # the files and the report get the probe object the run used
    assert type(probe) is resolve.get_probe_class("jobs-lum") and results.model["model"] == "he"


def test_a_parsed_spec_keeps_the_text_and_the_did_you_mean_of_a_wrong_one():
    spec = registry.parse_spec("scripted/he", base_url="http://x")
    assert (spec.text, spec.prefix, spec.name, spec.base_url, str(spec)) == (
        "scripted/he",
        "scripted",
        "he",
        "http://x",
        "scripted/he",
    )
    assert registry.parse_spec(spec) is spec and registry.parse_spec(None).text == registry.DEFAULT_MODEL
    with pytest.raises(ConfigError, match=r"unknown model spec 'smollm3' \(did you mean 'smollm2'\?\)"):
        registry.check_spec("smollm3")
    with pytest.raises(ConfigError, match="unknown model spec ''"):
        registry.split_spec("")
