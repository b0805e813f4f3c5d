"""The `gpt-winoqueer` probe: GPT-WinoQueer: anti-LGBTQ+ stereotypes extracted by GPT-3.5 from a community survey.

Everything but the benchmark's name lives in :mod:`biaslab.probes.paired_sentences` (shared by the
paired-sentence probes); the card is README.md beside this file.
"""

from __future__ import annotations

from biaslab.probes.paired_sentences.probe import PairedSentenceProbe


class GptWinoQueerProbe(PairedSentenceProbe):
    name = "gpt-winoqueer"
    title = "GPT-WinoQueer: anti-LGBTQ+ stereotypes extracted by GPT-3.5 from a community survey"
    summary = "anti-LGBTQ+ tropes (GPT)"
    benchmark = "gpt-winoqueer"
