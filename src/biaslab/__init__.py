"""biaslab."""

import os
import sys

__version__ = "0.1.0"

# OpenMP threads that wait at a barrier sleep instead of spinning (read by torch's OpenMP runtime when torch is
# imported, so set here, before any of biaslab's modules imports it; a value the user set is kept). Spinning threads
# hold a core another process needs: measured on 2 cores, `biaslab run jobs-lum --limit 2` on SmolLM2 took 295 s
# and 387 s with 2 busy background processes at the default policy, 94 and 112 s with this one; quiet, 55-64 s and
# 54-66 s.
# Where torch was imported before biaslab (a notebook, a script), its OpenMP runtime has read the environment
# already (the policy it took is the one set then): the policy set here has no effect, which the thread choice needs
# to know (models/local/threads.py).
TORCH_BEFORE_BIASLAB = "torch" in sys.modules
WAIT_POLICY_BEFORE = os.environ.get("OMP_WAIT_POLICY", "")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
