"""The `gpt-winoqueer` probe: GPT-WinoQueer: anti-LGBTQ+ stereotypes extracted by GPT-3.5 from a community survey.

Everything but the benchmark's name lives in :mod:`biaslab.probes.wino` (shared by the
paired-sentence probes); the card is README.md beside this file.
"""

from __future__ import annotations

from biaslab.probes.wino.probe import WinoPairsProbe


class GptWinoQueerProbe(WinoPairsProbe):
    name = "gpt-winoqueer"
    title = "GPT-WinoQueer: anti-LGBTQ+ stereotypes extracted by GPT-3.5 from a community survey"
    benchmark = "gpt-winoqueer"
