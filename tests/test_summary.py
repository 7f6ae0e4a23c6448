"""Tests of dclb.summary on small hand-made tables with known answers."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pyarrow as pa
import pytest

from dclb.summary import FCT_POLICY, summarize, summary_rows

NAN = float("nan")

FLOW_SCHEMA = pa.schema(
    [
        ("flow_id", pa.int64()),
        ("source", pa.int32()),
        ("src_host", pa.int32()),
        ("dst_host", pa.int32()),
        ("size_bytes", pa.int64()),
        ("transport", pa.string()),
        ("best_effort", pa.bool_()),
        ("deadline_us", pa.float64()),
        ("start_us", pa.float64()),
        ("finish_us", pa.float64()),
        ("fct_us", pa.float64()),
        ("ideal_fct_us", pa.float64()),
        ("slowdown", pa.float64()),
        ("deadline_met", pa.bool_()),
        ("state", pa.string()),
        ("bytes_sent", pa.int64()),
        ("packets_sent", pa.int64()),
        ("retransmissions", pa.int64()),
        ("spurious_retransmissions", pa.int64()),
        ("timeouts", pa.int64()),
        ("out_of_order", pa.int64()),
        ("queueing_delay_us", pa.float64()),
        ("uplink_bytes", pa.list_(pa.int64())),
    ]
)

PORT_SCHEMA = pa.schema(
    [
        ("node", pa.int32()),
        ("node_kind", pa.string()),
        ("port", pa.int32()),
        ("peer", pa.int32()),
        ("role", pa.string()),
        ("rate_gbps", pa.float64()),
        ("delay_us", pa.float64()),
        ("failed", pa.bool_()),
        ("bytes_sent", pa.int64()),
        ("packets_sent", pa.int64()),
        ("drops", pa.int64()),
        ("ecn_marks", pa.int64()),
        ("peak_queue_bytes", pa.int64()),
        ("peak_queue_packets", pa.int64()),
        ("avg_queue_bytes", pa.float64()),
    ]
)


def flow(flow_id: int, size: int, state: str = "completed", fct: float = NAN, **extra) -> dict:
    completed = state == "completed"
    row = {
        "flow_id": flow_id,
        "source": 0,
        "src_host": 0,
        "dst_host": 1,
        "size_bytes": size,
        "transport": "dctcp",
        "best_effort": False,
        "deadline_us": NAN,
        "start_us": 0.0,
        "finish_us": fct if completed else NAN,
        "fct_us": fct if completed else NAN,
        "ideal_fct_us": 1.0,
        "slowdown": 1.0 if completed else NAN,
        "deadline_met": None,
        "state": state,
        "bytes_sent": size,
        "packets_sent": 1,
        "retransmissions": 0,
        "spurious_retransmissions": 0,
        "timeouts": 0,
        "out_of_order": 0,
        "queueing_delay_us": 0.0,
        "uplink_bytes": [size],
    }
    row.update(extra)
    return row


def flows_table(rows: list[dict]) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=FLOW_SCHEMA)


def ports_table(drops: list[int], ecn_marks: list[int]) -> pa.Table:
    rows = [
        {
            "node": index,
            "node_kind": "leaf",
            "port": 0,
            "peer": 1,
            "role": "leaf_up",
            "rate_gbps": 100.0,
            "delay_us": 1.0,
            "failed": False,
            "bytes_sent": 0,
            "packets_sent": 0,
            "drops": d,
            "ecn_marks": e,
            "peak_queue_bytes": 0,
            "peak_queue_packets": 0,
            "avg_queue_bytes": 0.0,
        }
        for index, (d, e) in enumerate(zip(drops, ecn_marks, strict=True))
    ]
    return pa.Table.from_pylist(rows, schema=PORT_SCHEMA)


# Short completed TCP flows: A, B, H, I with FCTs 10, 30, 20, 200 µs.
MIXED_FLOWS = [
    flow(1, 1_000, fct=10.0, slowdown=1.0, retransmissions=1),  # A
    flow(2, 100_000, fct=30.0, slowdown=3.0, timeouts=2),  # B: exactly 100 KB
    flow(3, 1_000_000, fct=800.0, slowdown=2.0, out_of_order=4),  # C: exactly 1 MB
    flow(4, 2_000_000, fct=1_000.0, slowdown=1.0, spurious_retransmissions=5),  # D
    flow(5, 50_000, state="unfinished", deadline_us=100.0, deadline_met=None),  # E
    flow(6, 2_000_000, state="cancelled"),  # F
    flow(7, 500, fct=1.0, transport="udp", retransmissions=10),  # G: UDP
    flow(8, 20_000, fct=20.0, slowdown=2.0, deadline_us=50.0, deadline_met=True),  # H
    flow(9, 30_000, fct=200.0, slowdown=10.0, deadline_us=100.0, deadline_met=False),  # I
]
STATS = {"events": 1_000, "sim_time_us": 10_000.0, "wall_s": 0.5, "peak_heap": 7, "drops": 99}


@pytest.fixture
def mixed_summary() -> dict:
    return summarize(flows_table(MIXED_FLOWS), ports_table([1, 2], [3, 4]), STATS)


def test_flow_counts_include_udp_and_every_state(mixed_summary):
    s = mixed_summary
    assert (
        s["flows_total"],
        s["flows_completed"],
        s["flows_cancelled"],
        s["flows_unfinished"],
    ) == (9, 7, 1, 1)
    assert s["flows_udp"] == 1


def test_unfinished_and_cancelled_are_counted_per_class(mixed_summary):
    s = mixed_summary
    assert (
        s["short_flows"],
        s["short_completed"],
        s["short_unfinished"],
        s["short_cancelled"],
    ) == (5, 4, 1, 0)
    assert (s["long_flows"], s["long_completed"], s["long_unfinished"], s["long_cancelled"]) == (
        3,
        2,
        0,
        1,
    )
    assert s["fct_policy"] == FCT_POLICY and "completed" in FCT_POLICY


def test_short_flow_fct_uses_completed_tcp_flows_only(mixed_summary):
    # A, B, H, I; not the UDP flow G (1 µs), not the unfinished flow E
    assert mixed_summary["short_afct_us"] == pytest.approx((10 + 30 + 20 + 200) / 4)
    # sorted 10, 20, 30, 200: linear p99 sits at rank 2.97 -> 30 + 0.97 * 170
    assert mixed_summary["short_p99_fct_us"] == pytest.approx(194.9)


def test_size_bins_are_right_closed(mixed_summary):
    s = mixed_summary
    assert s["fct_0_100k_avg_us"] == pytest.approx(65.0)  # includes B at exactly 100,000 B
    assert s["fct_100k_1m_avg_us"] == pytest.approx(800.0)  # C at exactly 1,000,000 B
    assert s["fct_100k_1m_p99_us"] == pytest.approx(800.0)
    assert s["fct_1m_inf_avg_us"] == pytest.approx(1_000.0)  # D only; F was cancelled
    assert s["fct_1m_inf_p99_us"] == pytest.approx(1_000.0)


def test_long_flows_afct_and_goodput(mixed_summary):
    assert mixed_summary["long_afct_us"] == pytest.approx(900.0)
    # C: 8e6 bit / 800 µs = 10 Gbps; D: 16e6 bit / 1000 µs = 16 Gbps
    assert mixed_summary["long_goodput_gbps"] == pytest.approx(13.0)


def test_overall_and_slowdown(mixed_summary):
    assert mixed_summary["overall_afct_us"] == pytest.approx((10 + 30 + 800 + 1000 + 20 + 200) / 6)
    assert mixed_summary["mean_slowdown"] == pytest.approx((1 + 3 + 2 + 1 + 2 + 10) / 6)
    # sorted 1, 1, 2, 2, 3, 10: rank 4.95 -> 3 + 0.95 * 7
    assert mixed_summary["p99_slowdown"] == pytest.approx(9.65)


def test_unfinished_deadline_flow_is_a_miss(mixed_summary):
    # E unfinished (miss), H met, I completed late (miss)
    assert mixed_summary["deadline_flows"] == 3
    assert mixed_summary["deadline_misses"] == 2
    assert mixed_summary["deadline_miss_rate"] == pytest.approx(2 / 3)


def test_counters_are_summed(mixed_summary):
    s = mixed_summary
    assert (s["drops"], s["ecn_marks"]) == (3, 7)
    assert (
        s["retransmissions"],
        s["spurious_retransmissions"],
        s["timeouts"],
        s["out_of_order"],
    ) == (11, 5, 2, 4)


def test_engine_stats_and_pass_through(mixed_summary):
    s = mixed_summary
    assert s["events"] == 1_000 and s["events_per_s"] == pytest.approx(2_000.0)
    assert s["sim_time_us"] == 10_000.0 and s["wall_s"] == 0.5
    assert s["peak_heap"] == 7
    assert s["drops"] == 3 and s["stats.drops"] == 99  # an engine key never overrides


def test_threshold_is_a_parameter():
    s = summarize(
        flows_table(MIXED_FLOWS), ports_table([], []), {}, short_threshold_bytes=1_000_000
    )
    assert s["short_threshold_bytes"] == 1_000_000
    assert s["short_afct_us"] == pytest.approx((10 + 30 + 20 + 200 + 800) / 5)
    assert s["long_afct_us"] == pytest.approx(1_000.0)
    assert s["fct_100k_1m_avg_us"] == pytest.approx(800.0)  # fixed bins do not move


def test_pandas_input_gives_the_same_summary(mixed_summary):
    from_pandas = summarize(
        flows_table(MIXED_FLOWS).to_pandas(), ports_table([1, 2], [3, 4]).to_pandas(), STATS
    )
    assert from_pandas.keys() == mixed_summary.keys()
    for key, value in mixed_summary.items():
        other = from_pandas[key]
        assert other == value or (math.isnan(other) and math.isnan(value)), key


def test_empty_groups_are_nan_without_warnings():
    only_short = flows_table([flow(1, 1_000, fct=5.0)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = summarize(only_short, ports_table([], []), {"events": 10, "wall_s": 0.0})
    for key in (
        "long_afct_us",
        "long_goodput_gbps",
        "fct_1m_inf_avg_us",
        "fct_1m_inf_p99_us",
        "deadline_miss_rate",
        "events_per_s",
    ):
        assert math.isnan(s[key]), key
    assert s["short_afct_us"] == 5.0
    assert s["deadline_flows"] == 0


def test_empty_run_is_all_nan_and_zero_counts_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = summarize(flows_table([]), ports_table([], []), {})
    assert s["flows_total"] == 0 and s["drops"] == 0 and s["retransmissions"] == 0
    for key in (
        "short_afct_us",
        "short_p99_fct_us",
        "overall_afct_us",
        "p99_slowdown",
        "mean_slowdown",
        "events",
        "sim_time_us",
        "wall_s",
    ):
        assert math.isnan(s[key]), key


def test_numbers_are_plain_python_types(mixed_summary):
    for key, value in mixed_summary.items():
        assert type(value) in (int, float, str), (key, type(value))
        assert not isinstance(value, np.generic)


def test_summary_rows_are_labelled_with_units(mixed_summary):
    rows = summary_rows(
        {
            **mixed_summary,
            "short_afct_us": 65.0,
            "long_afct_us": 1_500.0,
            "events": 12_345_678,
            "long_unfinished": 0,
        }
    )
    values = dict(rows)
    labels = [label for label, _ in rows]
    assert labels[0] == "Flows"
    assert values["Short flows (≤ 100 KB) mean FCT"] == "65.0 µs"
    assert values["Long flows (> 100 KB) mean FCT"] == "1.50 ms"
    assert values["Long flows mean goodput"] == "13.00 Gbps"
    assert values["Events"] == "12,345,678"
    assert values["Deadline miss rate"] == "66.67 %"
    assert values["Wall-clock time"] == "500.00 ms"
    # keys the formatter does not know come last, under their own name
    assert labels[-2:] == ["peak_heap", "stats.drops"]
    assert values["stats.drops"] == "99"


def test_summary_rows_show_missing_values_as_na():
    values = dict(summary_rows({"short_afct_us": NAN, "flows_total": 3}))
    assert values == {"Flows": "3", "Short flows (≤ 100 KB) mean FCT": "n/a"}


def test_long_lived_goodput_uses_the_horizon_for_flows_still_running():
    # Two never-ending flows (the engine's unbounded size) and one ordinary flow. The first stopped at 100 µs
    # with 1.25 MB delivered (100 Gbps); the second still runs at the horizon (200 µs) with 0.5 MB (20 Gbps
    # over its 200 µs). The unbounded size is beyond float64's exact integers: it must still be recognised.
    unbounded = (2**64 - 1) // 4
    schema = FLOW_SCHEMA.append(pa.field("bytes_delivered", pa.int64()))
    rows = [
        flow(1, unbounded, state="unfinished", finish_us=100.0, bytes_delivered=1_250_000),
        flow(2, unbounded, state="unfinished", bytes_delivered=500_000),
        flow(3, 1_000, fct=10.0, bytes_delivered=1_000),
    ]
    s = summarize(pa.Table.from_pylist(rows, schema=schema), ports_table([], []), {"sim_time_us": 200.0})
    assert s["long_lived_flows"] == 2
    assert s["long_lived_goodput_min_gbps"] == pytest.approx(20.0)
    assert s["long_lived_goodput_max_gbps"] == pytest.approx(100.0)
    assert s["long_lived_goodput_total_gbps"] == pytest.approx(120.0)
