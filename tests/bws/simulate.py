"""Simulated best-worst annotators on designed tuples (shared by the tests)."""

import numpy as np
import pandas as pd

from biaslab.bws.design import design_tuples


def simulate(n_items=300, per_tuple=3, noise=0.5, seed=0, random_annotator=False):
    """Annotations of ``per_tuple`` annotators per tuple, and the items' latent scores.

    An annotator perceives latent + Gaussian noise and picks the highest as best and the lowest
    as worst; a random annotator picks two different items uniformly.
    """
    rng = np.random.default_rng(seed)
    ids = [f"t{i:04d}" for i in range(n_items)]
    latent = dict(zip(ids, rng.normal(size=n_items)))
    rows = []
    for tup in design_tuples(ids, seed=seed, attempts=5):
        for _ in range(per_tuple):
            if random_annotator:
                b, w = rng.choice(len(tup), 2, replace=False)
            else:
                seen = np.array([latent[i] for i in tup]) + rng.normal(scale=noise, size=len(tup))
                b, w = int(np.argmax(seen)), int(np.argmin(seen))
            rows.append([*tup, tup[b], tup[w]])
    df = pd.DataFrame(rows, columns=["Item1", "Item2", "Item3", "Item4", "BestItem", "WorstItem"])
    return df, latent
