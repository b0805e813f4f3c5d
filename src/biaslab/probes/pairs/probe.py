"""The `pairs` probe: Paired sentences from your own CSV (CrowS-Pairs and the like).

Everything but the benchmark's name lives in :mod:`biaslab.probes.paired_sentences` (shared by the
paired-sentence probes); the card is README.md beside this file.
"""

from __future__ import annotations

from biaslab.probes.paired_sentences.probe import PairedSentenceProbe


class PairsProbe(PairedSentenceProbe):
    name = "pairs"
    title = "Paired sentences from your own CSV (CrowS-Pairs and the like)"
    summary = "your own sentence pairs"
    benchmark = None
    input_option = "pairs"
