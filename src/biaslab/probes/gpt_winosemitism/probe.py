"""The `gpt-winosemitism` probe: GPT-WinoSemitism: the WinoSemitism recipe on GPT-3.5-extracted predicates.

Everything but the benchmark's name lives in :mod:`biaslab.probes.paired_sentences` (shared by the
paired-sentence probes); the card is README.md beside this file.
"""

from __future__ import annotations

from biaslab.probes.paired_sentences.probe import PairedSentenceProbe


class GptWinoSemitismProbe(PairedSentenceProbe):
    name = "gpt-winosemitism"
    title = "GPT-WinoSemitism: the WinoSemitism recipe on GPT-3.5-extracted predicates"
    summary = "antisemitic tropes (GPT)"
    benchmark = "gpt-winosemitism"
