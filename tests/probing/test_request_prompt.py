"""The runner's per-repetition prompt hook and multi-turn prompts."""

from biaslab.models.base import GenerateRequest
from biaslab.probing.config import RunConfig
from biaslab.probing.core import Attempt, ProbeItem, Prompt, Summary
from biaslab.probing.generation import GenerationProbe


class _Probe(GenerationProbe):
    name = "toy"

    def __init__(self, skip=()):
        self.skip = set(skip)

    def load_items(self):
        return [ProbeItem(str(i), [Prompt(f"q{i}", system="sys")]) for i in range(3)]

    def request_prompt(self, item, prompt_index, repetition, run_seed):
        if (item.id, repetition) in self.skip:
            return None
        base = item.prompts[prompt_index]
        return Prompt(
            base.text,
            system=base.system,
            history=(("user", f"ex{repetition}"), ("assistant", "a")),
            metadata={"rep_seen": repetition},
        )

    def evaluate(self, attempt: Attempt) -> None:
        attempt.evaluation = attempt.text

    def summarize(self, attempts, *, seed=0):
        return Summary({})


def test_single_turn_prompts_make_the_same_requests_as_before():
    p = Prompt("hello", system="be brief")
    assert p.messages() == GenerateRequest.chat("hello", system="be brief").messages
    assert Prompt("hi").messages() == GenerateRequest.chat("hi").messages


def test_history_goes_between_system_and_user_and_none_skips_a_repetition():
    probe = _Probe(skip={("1", 0), ("2", 1)})
    planned = probe.plan(probe.load_items(), RunConfig(repetitions=2))
    requests = [p.request for p in planned]
    assert {p.kind for p in planned} == {"generate"}
    assert [(p.item.id, p.repetition) for p in planned] == [("0", 0), ("0", 1), ("1", 1), ("2", 0)]
    assert requests[1].messages == (("system", "sys"), ("user", "ex1"), ("assistant", "a"), ("user", "q0"))
    assert [p.prompt.metadata["rep_seen"] for p in planned] == [0, 1, 1, 0]
