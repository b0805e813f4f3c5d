"""BOLD's prompts as probe items, and a ``--limit`` that spreads evenly over groups.

Each ``<domain>_prompt.json`` is ``{group: {person_or_topic: [prompt, ...]}}``. One item per
prompt; its metadata names the domain, the group and the person or topic (the cluster: the
prompts about one person share a Wikipedia page, so they are not independent).
"""

from __future__ import annotations

import json
from collections import defaultdict

from biaslab.data import data_path
from biaslab.errors import ConfigError, DataError
from biaslab.probing.core import ProbeItem, Prompt, spread_subset

DOMAINS = ("gender", "political_ideology", "profession", "race", "religious_ideology")


def domain_file(domain: str) -> str:
    return f"benchmarks/bold/{domain}_prompt.json"


def parse_domains(text: str | list[str] | tuple[str, ...] | None) -> tuple[str, ...]:
    """``"gender,race"`` -> ``("gender", "race")`` (all five when empty), unknown names rejected."""
    if text is None or text == "":
        return DOMAINS
    names = [t.strip() for t in (text.split(",") if isinstance(text, str) else text) if t.strip()]
    unknown = [n for n in names if n not in DOMAINS]
    if unknown or not names:
        raise ConfigError(
            f"-P domains: unknown domain(s) {', '.join(unknown) or '(none given)'}; "
            f"choose from {', '.join(DOMAINS)} (comma-separated)"
        )
    return tuple(dict.fromkeys(names))


def load_domain(domain: str) -> list[ProbeItem]:
    path = data_path(domain_file(domain))
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"{path} is not valid JSON ({exc}); delete it so biaslab fetches it again") from None
    if not isinstance(data, dict):
        raise DataError(f"{path}: expected {{group: {{person_or_topic: [prompt, ...]}}}}")
    items = []
    for group, people in data.items():
        if not isinstance(people, dict):
            raise DataError(f"{path}: group {group!r} should map names to lists of prompts")
        for name, prompts in people.items():
            if not isinstance(prompts, list):
                raise DataError(f"{path}: {group}/{name} should be a list of prompts")
            for k, text in enumerate(prompts):
                text = str(text).strip()
                if not text:
                    continue
                meta = {"domain": domain, "group": group, "name": name}
                items.append(ProbeItem(id=f"{domain}/{group}/{name}#{k}", prompts=[Prompt(text)], metadata=meta))
    return items


def balanced_subset(items: list[ProbeItem], limit: int | None) -> list[ProbeItem]:
    """``limit`` items spread evenly over the groups, in data order.

    Every group gets an equal share (the first groups one more when ``limit`` does not divide);
    a group with fewer items gives its unused share to the others. Within a group the items are
    evenly spread over its data order (so over its people or topics). Deterministic.
    """
    if limit is None or limit >= len(items):
        return list(items)
    by_group: dict[tuple[str, str], list[ProbeItem]] = defaultdict(list)
    for item in items:
        by_group[(item.metadata["domain"], item.metadata["group"])].append(item)
    quota = dict.fromkeys(by_group, 0)
    left = limit
    open_groups = list(by_group)
    while left > 0 and open_groups:
        share, extra = divmod(left, len(open_groups))
        for i, g in enumerate(open_groups):
            take = min(share + (i < extra), len(by_group[g]) - quota[g])
            quota[g] += take
            left -= take
        open_groups = [g for g in open_groups if quota[g] < len(by_group[g])]
    chosen = {id(it) for g, group_items in by_group.items() if quota[g] for it in spread_subset(group_items, quota[g])}
    return [it for it in items if id(it) in chosen]
