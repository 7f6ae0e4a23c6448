"""The headline metrics: which of a run's many summary metrics dclb puts in front of a user, in one place.

A run's summary (:func:`dclb.summary.summarize`) has well over a hundred metrics, all of them in
``run.json`` and the catalog. Two views show a chosen few, both read from :data:`HEADLINES`:

* the summary ``dclb run`` prints (:data:`RUN_SUMMARY`): flow counts, FCTs overall and per size bin,
  slowdown, deadlines, long-lived goodput, losses and retransmissions, and what the run cost;
* the metrics that compare runs (:data:`COMPARISON`), one column or figure each: the table at the end of
  ``dclb sweep``, ``dclb results``, the frame :func:`dclb.sweep` returns and the report's tables and
  figures. Tables that fit the terminal show them in this order, as many as fit.

Labels and units come from :mod:`dclb.summary` (``summary_rows``, ``label_of``), not from here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Headline:
    """A summary metric shown in ``dclb run``'s summary; ``compares`` if it is also one of the metrics that
    compare runs."""

    key: str
    compares: bool = False
    #: Shown only for runs where this summary key holds a number other than 0 (long-lived rows for runs with
    #: long-lived flows, window rows for runs with a measurement window); None: always.
    only_with: str | None = None


#: Every headline metric, in the order they are shown.
HEADLINES: tuple[Headline, ...] = (
    Headline("flows_total"),
    Headline("flows_measured", only_with="window_carried_load_ratio"),
    Headline("flows_completed"),
    Headline("flows_cancelled"),
    Headline("flows_unfinished"),
    Headline("short_afct_us", compares=True),
    Headline("short_p99_fct_us", compares=True),
    Headline("long_afct_us", compares=True),
    Headline("long_goodput_gbps", compares=True),
    Headline("fct_0_100k_avg_us"),
    Headline("fct_0_100k_p99_us"),
    Headline("fct_100k_1m_avg_us"),
    Headline("fct_100k_1m_p99_us"),
    Headline("fct_1m_inf_avg_us"),
    Headline("fct_1m_inf_p99_us"),
    Headline("mean_slowdown", compares=True),
    Headline("deadline_miss_rate"),
    Headline("long_lived_flows", only_with="long_lived_flows"),
    Headline("long_lived_goodput_gbps", only_with="long_lived_flows"),
    Headline("long_lived_goodput_min_gbps", only_with="long_lived_flows"),
    Headline("long_lived_goodput_max_gbps", only_with="long_lived_flows"),
    Headline("long_lived_goodput_total_gbps", only_with="long_lived_flows"),
    Headline("window_carried_load_ratio", only_with="window_carried_load_ratio"),
    Headline("window_drain_us", only_with="window_carried_load_ratio"),
    Headline("fabric_carried_load_ratio", only_with="fabric_carried_load_ratio"),
    Headline("util_leaf_to_host", only_with="fabric_carried_load_ratio"),
    Headline("util_leaf_to_spine", only_with="fabric_carried_load_ratio"),
    Headline("prefill_flows", only_with="prefill_flows"),
    Headline("window_flows_censored", only_with="window_flows_censored"),
    Headline("flows_udp", only_with="flows_udp"),
    Headline("udp_loss_ratio", only_with="flows_udp"),
    Headline("udp_flows_with_loss", only_with="flows_udp"),
    Headline("drops", compares=True),
    Headline("ecn_marks"),
    Headline("retransmissions"),
    Headline("spurious_retransmissions"),
    Headline("timeouts"),
    Headline("out_of_order"),
    Headline("events"),
    Headline("events_per_s"),
    Headline("sim_time_us"),
    Headline("wall_s"),
    Headline("fct_policy"),
)

#: What ``dclb run`` can print, in order (:func:`run_summary_keys` picks a run's rows).
RUN_SUMMARY: list[str] = [h.key for h in HEADLINES]


def run_summary_keys(summary: Mapping[str, Any]) -> list[str]:
    """The rows ``dclb run`` prints for ``summary``: every headline, less those about what the run did not have."""

    def has(key: str) -> bool:
        v = summary.get(key)
        return isinstance(v, (int, float)) and not isinstance(v, bool) and v == v and v != 0

    return [h.key for h in HEADLINES if h.only_with is None or has(h.only_with)]

#: The metrics that compare runs, in order (see the module documentation).
COMPARISON: list[str] = [h.key for h in HEADLINES if h.compares]
