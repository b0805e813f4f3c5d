"""The `winoqueer-human` probe: WinoQueer (human stereotypes, GPT-WQ recipe): anti-LGBTQ+ stereotypes
written by survey respondents.

Everything but the benchmark's name lives in :mod:`biaslab.probes.paired_sentences` (shared by the
paired-sentence probes); the card is README.md beside this file.
"""

from __future__ import annotations

from biaslab.probes.paired_sentences.probe import PairedSentenceProbe


class WinoQueerHumanProbe(PairedSentenceProbe):
    name = "winoqueer-human"
    title = "WinoQueer (human stereotypes, GPT-WQ recipe): anti-LGBTQ+ stereotypes written by survey respondents"
    summary = "anti-LGBTQ+ stereotypes"
    benchmark = "winoqueer-human"
