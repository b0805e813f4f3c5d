"""The `winosemitism` probe: WinoSemitism (H-WS): antisemitic stereotypes from a Jewish community survey.

Everything but the benchmark's name lives in :mod:`biaslab.probes.paired_sentences` (shared by the
paired-sentence probes); the card is README.md beside this file.
"""

from __future__ import annotations

from biaslab.probes.paired_sentences.probe import PairedSentenceProbe


class WinoSemitismProbe(PairedSentenceProbe):
    name = "winosemitism"
    title = "WinoSemitism (H-WS): antisemitic stereotypes from a Jewish community survey"
    summary = "antisemitic stereotypes"
    benchmark = "winosemitism"
