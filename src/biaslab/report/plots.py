"""Matplotlib helpers for report figures (headless, PNG embedded as base64)."""

from __future__ import annotations

import base64
import io


def new_figure(width: float = 7.0, height: float = 4.2):
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(width, height), dpi=110)
    ax.spines[["top", "right"]].set_visible(False)
    ax.grid(alpha=0.25)
    return fig, ax


def fig_to_base64(fig) -> str:
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")
