import pytest

from biaslab.errors import ConfigError
from biaslab.scorers import Scorer, get_scorer


def test_vader_keeps_the_sign_and_is_a_scorer():
    scorer = get_scorer("vader")
    assert isinstance(scorer, Scorer)
    good, bad, flat = scorer.score(["She is a wonderful, kind doctor.", "He is a horrible, cruel man.", "The table."])
    assert good > 0.5 and bad < -0.5 and flat == 0.0
    assert scorer.identity.startswith("vader:")


def test_unknown_scorer_is_a_config_error():
    with pytest.raises(ConfigError, match="unknown scorer"):
        get_scorer("nope")
