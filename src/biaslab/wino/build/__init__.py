"""Building paired-sentence bias benchmarks (WinoSemitism / WinoQueer style) from components.

A benchmark is made of *components*: sentence templates grouped in forms (plural / singular),
target groups with their identity phrases and counterfactual phrases, persons (pronoun sets),
names, and attested harm predicates. :func:`.build.build_pairs` turns them into pairs of a
stereotypical and a counter-stereotypical sentence, seeded and deterministic.

* :mod:`.components` -- the in-memory model every source is loaded into;
* :mod:`.originals` -- the published components (``winosemitism/`` xlsx files) and their recipes;
* :mod:`.custom` -- a user's own components folder (CSV + ``settings.toml``);
* :mod:`.slots` -- template slots and filling; :mod:`.grammar` -- verb agreement;
* :mod:`.fixes` -- the corrections of the default (non-faithful) mode;
* :mod:`.build` -- the construction rules; :mod:`.pairs_io` -- the pairs CSV.
"""

from biaslab.wino.build.build import BuildResult, build_pairs  # noqa: F401
from biaslab.wino.build.components import Components  # noqa: F401
