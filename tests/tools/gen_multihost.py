#!/usr/bin/env python3
"""Writes the per-rank PyTorch/Kineto traces of a distributed run with a planted straggler, and
what `stallscope hosts --json` must say about them, computed from the generator's own numbers.

Each rank's file `rank-<r>.pt.trace.json[.gz]` is Kineto's object form: distributedInfo with the
rank, traceEvents with a host thread holding `ProfilerStep#k` slices and their launch calls, a
GPU stream (`stream 7`) holding the kernels, and baseTimeNanoseconds (Kineto writes `ts`
relative to it; here every rank has its own base). Within a step a rank runs the same kernels
as every other rank; step k of rank r lasts the common step time plus a per-(rank, step) jitter
of idle time, and the straggler rank runs `straggler_op` longer in the straggler step, so that
step is longer by that much and `straggler_op` is the op whose per-rank total varies most.

usage: gen_multihost.py OUT_DIR --hosts N [--steps S] [--kernels K] [--target-mb MB]
                        [--straggler-rank R] [--straggler-step K] [--straggler-pct P]
                        [--no-base] [--gzip] [--seed N] [--expected FILE]
Kernels per step: --kernels, or enough for --target-mb per file.
"""
import argparse
import gzip
import json
import os
import random


def nearest_rank_median(values):
    ordered = sorted(values)
    return ordered[max(1, (len(ordered) + 1) // 2) - 1]


def us(ns):
    # Kineto's microseconds with ns decimals: exact for whole ns.
    return "%d.%03d" % (ns // 1000, ns % 1000)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--hosts", type=int, required=True)
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--kernels", type=int, default=0)
    ap.add_argument("--target-mb", type=float, default=0)
    ap.add_argument("--straggler-rank", type=int, default=-1)
    ap.add_argument("--straggler-step", type=int, default=3)
    ap.add_argument("--straggler-pct", type=float, default=40.0)
    ap.add_argument("--no-base", action="store_true")
    ap.add_argument("--gzip", action="store_true")
    ap.add_argument("--seed", type=int, default=15)
    ap.add_argument("--expected")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    n, steps = a.hosts, a.steps
    straggler = a.straggler_rank if a.straggler_rank >= 0 else n // 2
    # One kernel with its launch is about 330 bytes of JSON.
    kernels = a.kernels or max(4, int(a.target_mb * 1e6 / 330 / steps))
    kernel_ns = 20_000
    gap_ns = 2_000
    op_ns = 50_000  # straggler_op, every step on every rank
    compute_ns = kernels * (kernel_ns + gap_ns) + op_ns
    step_base = compute_ns + 100_000
    extra_ns = int(step_base * a.straggler_pct / 100)
    # Idle jitter per (rank, step): distinct values, so each step has one slowest rank.
    jitter = [[rng.randrange(0, step_base // 1000) * 16 + r for _ in range(steps)] for r in range(n)]
    bases = [1_700_000_000_000_000_000 + rng.randrange(0, 10**9) for _ in range(n)]
    # Each rank starts its first step at its own (relative) time.
    first_start = [5_000_000 + rng.randrange(0, 10**6) for _ in range(n)]

    os.makedirs(a.out, exist_ok=True)
    durations = [[0] * steps for _ in range(n)]
    starts = [[0] * steps for _ in range(n)]
    slices = [0] * n
    op_totals = [dict() for _ in range(n)]
    for r in range(n):
        events = [
            '{"ph":"M","name":"process_name","pid":1000,"tid":0,"args":{"name":"python3"}}',
            '{"ph":"M","name":"thread_name","pid":1000,"tid":1000,"args":{"name":"python3"}}',
            '{"ph":"M","name":"process_name","pid":0,"tid":0,"args":{"name":"python3"}}',
            '{"ph":"M","name":"process_labels","pid":0,"tid":0,"args":{"labels":"GPU 0"}}',
            '{"ph":"M","name":"thread_name","pid":0,"tid":7,"args":{"name":"stream 7"}}',
        ]
        t = first_start[r]
        corr = 1
        def add(name, ts, dur, pid, tid, args=None):
            slices[r] += 1
            if pid == 0:
                op_totals[r][name] = op_totals[r].get(name, 0) + dur
            text = '{"ph":"X","cat":"%s","name":"%s","pid":%d,"tid":%d,"ts":%s,"dur":%s' % (
                "kernel" if pid == 0 else "cpu_op", name, pid, tid, us(ts), us(dur))
            if args:
                text += ',"args":' + json.dumps(args, separators=(",", ":"))
            events.append(text + "}")
        for k in range(steps):
            op = op_ns + (extra_ns if (r == straggler and k == a.straggler_step) else 0)
            dur = step_base + jitter[r][k] + (op - op_ns)
            starts[r][k], durations[r][k] = t, dur
            add("ProfilerStep#%d" % k, t, dur, 1000, 1000)
            kt = t + 10_000
            for i in range(kernels):
                name = "gemm_kernel" if i % 2 == 0 else "elementwise_kernel"
                add("cudaLaunchKernel", kt - 5_000, 3_000, 1000, 1000, {"correlation": corr})
                add(name, kt, kernel_ns, 0, 7, {"correlation": corr, "stream": 7, "device": 0})
                corr += 1
                kt += kernel_ns + gap_ns
            add("straggler_op", kt, op, 0, 7, {"correlation": corr, "stream": 7, "device": 0})
            corr += 1
            t += dur + 1_000  # the next step begins after a short gap
        doc = '{"schemaVersion":1,"distributedInfo":{"backend":"nccl","rank":%d,"world_size":%d},' % (r, n)
        doc += '"traceEvents":[\n' + ",\n".join(events) + "\n]"
        if not a.no_base:
            doc += ',"baseTimeNanoseconds":%d' % bases[r]
        doc += "}\n"
        name = os.path.join(a.out, "rank-%d.pt.trace.json" % r)
        if a.gzip:
            with gzip.open(name + ".gz", "wt", compresslevel=1) as f:
                f.write(doc)
        else:
            with open(name, "w") as f:
                f.write(doc)

    names = ["rank %d" % r for r in range(n)]
    stragglers = []
    for k in range(steps):
        times = [durations[r][k] for r in range(n)]
        slowest = max(range(n), key=lambda r: times[r])
        median = nearest_rank_median(times)
        stragglers.append({"step": k, "step_name": "ProfilerStep#%d" % k, "host": names[slowest],
                           "step_time": times[slowest],
                           "excess_pct": (times[slowest] - median) / median * 100})
    all_ops = sorted({o for t in op_totals for o in t})
    spreads = {o: max(t.get(o, 0) for t in op_totals) - min(t.get(o, 0) for t in op_totals)
               for o in all_ops}
    varying = max(all_ops, key=lambda o: (spreads[o], o))
    if a.no_base:
        offsets = [starts[0][0] - starts[r][0] for r in range(n)]
    else:
        offsets = [b - min(bases) for b in bases]
    expected = {
        "hosts": [{"name": names[r], "slices": slices[r], "steps": steps,
                   "step_time_median": nearest_rank_median(durations[r]),
                   "offset_ns": offsets[r]} for r in range(n)],
        "stragglers": stragglers,
        "straggler": {"host": names[straggler], "step": a.straggler_step},
        "op_varying_most": varying,
    }
    if a.expected:
        with open(a.expected, "w") as f:
            json.dump(expected, f, indent=1)


if __name__ == "__main__":
    main()
