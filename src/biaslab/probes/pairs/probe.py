"""The `pairs` probe: Paired sentences from your own CSV (CrowS-Pairs and the like).

Everything but the benchmark's name lives in :mod:`biaslab.probes.wino` (shared by the
paired-sentence probes); the card is README.md beside this file.
"""

from __future__ import annotations

from biaslab.probes.wino.probe import WinoPairsProbe


class PairsProbe(WinoPairsProbe):
    name = "pairs"
    title = "Paired sentences from your own CSV (CrowS-Pairs and the like)"
    benchmark = None
