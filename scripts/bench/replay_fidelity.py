#!/usr/bin/env python3
"""replay_fidelity.py - how closely a recorded replay followed the recording.

Usage: replay_fidelity.py RECORDED.csv REPLAYED.csv

Both files are `st-format cat --csv -t block_rq_issue,block_rq_issue_stamped`
of one device: the recording's requests, and those a replayer issued while
st-record recorded it. Each replayed request is matched to a recorded one by
(op, sector, bytes), the k-th replayed to the k-th recorded in time order.
Prints one tab-separated line:

  issued  matched  in_order  span_ratio  slip_p50_us  slip_p99_us  slip_max_us

issued: the replayed requests; matched: those with a recorded twin.
in_order: of the consecutive requests each submitting task issued, the
fraction whose recorded twins are in the same order.
span_ratio: the matched requests' span (first to last) replayed over
recorded. slip: how much later than its twin each matched request came,
against a schedule that starts where no request is early: its time from
the replay's first minus its twin's from the recording's first, less the
smallest such difference. A replayer that holds an absolute schedule has
slips near 0; one that only keeps the gaps between I/Os drifts.
"""
import csv
import sys
from collections import defaultdict


def requests(path):
    """(ts, tid, key) of every issued request, in time order."""
    rows = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            op = int(r["opf"], 16) & 0xFF
            rows.append((int(r["ts"]), r["tid"], (op, int(r["sector"]), int(r["bytes"]))))
    rows.sort()
    return rows


def quantile(sorted_values, q):
    """Nearest rank, as st-analyze reports quantiles."""
    if not sorted_values:
        return float("nan")
    rank = max(1, -(-len(sorted_values) * q // 1))
    return sorted_values[int(rank) - 1]


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: replay_fidelity.py RECORDED.csv REPLAYED.csv")
    recorded, replayed = requests(sys.argv[1]), requests(sys.argv[2])
    twins = defaultdict(list)  # key -> recorded indexes, newest last
    for i, (_, _, key) in enumerate(recorded):
        twins[key].append(i)
    for key in twins:
        twins[key].reverse()
    matched = []  # (replayed ts, tid, recorded index)
    for ts, tid, key in replayed:
        if twins.get(key):
            matched.append((ts, tid, twins[key].pop()))
    if not matched:
        print(len(replayed), 0, "nan", "nan", "nan", "nan", "nan", sep="\t")
        return
    t0_rep = matched[0][0]
    rec_times = [recorded[i][0] for _, _, i in matched]
    t0_rec = min(rec_times)
    diffs = [ts - t0_rep - (recorded[i][0] - t0_rec) for ts, _, i in matched]
    early = min(diffs)
    slips = sorted((d - early) / 1e3 for d in diffs)
    span_ratio = (matched[-1][0] - t0_rep) / max(1, max(rec_times) - t0_rec)
    by_task = defaultdict(list)
    for ts, tid, i in matched:
        by_task[tid].append(i)
    pairs = sum(len(v) - 1 for v in by_task.values())
    ordered = sum(b > a for v in by_task.values() for a, b in zip(v, v[1:]))
    print(len(replayed), len(matched), "%.4f" % (ordered / pairs if pairs else 1.0), "%.4f" % span_ratio,
          "%.1f" % quantile(slips, 0.50), "%.1f" % quantile(slips, 0.99), "%.1f" % slips[-1], sep="\t")


if __name__ == "__main__":
    main()
