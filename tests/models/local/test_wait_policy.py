"""biaslab sets OpenMP's wait policy to PASSIVE before torch starts, unless the user chose one."""

from __future__ import annotations

import json
import os
import subprocess
import sys


def _policy_in_fresh_process(env_policy: str | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    if env_policy is not None:
        env["OMP_WAIT_POLICY"] = env_policy
    code = (
        "import json, os, sys; import biaslab; "
        "print(json.dumps([os.environ.get('OMP_WAIT_POLICY'), 'torch' in sys.modules]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    policy, torch_loaded = json.loads(out.stdout.strip().splitlines()[-1])
    return {"policy": policy, "torch_loaded": torch_loaded}


def test_passive_unless_the_user_chose_a_policy():
    assert _policy_in_fresh_process(None) == {"policy": "PASSIVE", "torch_loaded": False}  # set before torch
    assert _policy_in_fresh_process("ACTIVE") == {"policy": "ACTIVE", "torch_loaded": False}
