#!/usr/bin/env python3
"""Ground truth for `stallscope whatif` on traces: a discrete-event model of a PyTorch training
step written apart from Stallscope's graph, run twice (as recorded, and with one change made),
writing both as Kineto traces and what each step measured.

The model, per rank and step (times in ns, every figure drawn from --seed):
  main thread   ProfilerStep#k: the DataLoader (input), an HtoD copy, the forward ops (Python
                before each launch, cudaLaunchKernel, the op's tail), then backward(): the main
                thread sleeps until the autograd thread has finished, then the optimizer's
                launches and `aten::item` holding a cudaStreamSynchronize.
  autograd      woken `wake` ns after the main thread went to sleep: the backward ops'
                launches, then (in a run of several ranks) the NCCL all-reduce's launch; the
                main thread wakes `wake` ns after it is done.
  GPU stream 7  each kernel starts at max(its launch + launch latency, the previous end + the
                stream's gap) and runs its duration; the all-reduce ends when the last rank's
                all-reduce started plus its transfer; the sync returns `ret` ns after the stream
                drained.
Changes (--change): kernel-speedup GLOB=F (those kernels F times faster), no-input-wait (the
DataLoader takes nothing), comm-speedup F (transfers F times faster), launch-overhead N (CUDA
graphs: each launch costs N, the host work between a thread's launches goes, the stream's gap
is at most N), rank-like-median (the slow rank's compute runs at the others' speed).
--queue N: the launch queue holds N launches: a launch returns no earlier than `unblock` ns after
the activity launched N launches before it on the stream ended (CUDA blocks a full queue so).
--host-scale S: the host's Python per op scaled by S (0.3: device-bound) instead of a draw.

usage: gen_whatif_pair.py OUT_DIR --change CHANGE [--ranks R] [--steps S] [--seed N]
                         [--queue N] [--host-scale S]
Writes OUT_DIR/before[/rank-R].pt.trace.json, OUT_DIR/after[...] and OUT_DIR/expected.json:
{"before_step_ns","after_step_ns","before_steps":[...],"after_steps":[...],"whatif_args":[...]}
(a run's step is its slowest rank's; medians are nearest-rank).
"""
import argparse
import fnmatch
import json
import os
import random

KERNELS = ["volta_sgemm_128x64_nn", "ampere_sgemm_64x32_tn", "void elementwise_kernel<float>",
           "void reduce_kernel<512>", "cudnn::bn_fw_tr_1C11_kernel"]


def nearest_rank_median(values):
    ordered = sorted(values)
    return ordered[(len(ordered) + 1) // 2 - 1]


class Workload:
    """What every run of the scenario shares, drawn once from the seed."""

    def __init__(self, rng, ranks, steps, queue=None, host_scale_override=None):
        self.ranks, self.steps, self.queue = ranks, steps, queue
        self.lat = rng.randint(3_000, 8_000)        # launch -> kernel start on an idle stream
        self.gap = rng.randint(800, 2_000)          # between kernels on a busy stream
        self.wake = rng.randint(40_000, 120_000)    # a sleeping thread woken by another
        self.ret = rng.randint(2_000, 6_000)        # a sync returning after the stream drained
        self.launch = rng.randint(4_000, 9_000)     # a cudaLaunchKernel call
        self.input = [rng.randint(8_000_000, 20_000_000) for _ in range(steps)]
        self.copy = rng.randint(200_000, 600_000)
        self.transfer = rng.randint(3_000_000, 6_000_000) if ranks > 1 else 0

        # Device-bound, balanced or host-bound: the host's Python per op scaled against kernels.
        host_scale = rng.choice([0.3, 1.0, 6.0, 20.0])
        if host_scale_override is not None:
            host_scale = host_scale_override

        def ops(n, python_lo, python_hi):
            return [{"kernel": rng.choice(KERNELS), "dur": rng.randint(60_000, 900_000),
                     "python": int(rng.randint(python_lo, python_hi) * host_scale),
                     "tail": rng.randint(2_000, 9_000)}
                    for _ in range(n)]
        self.forward = ops(rng.randint(25, 40), 20_000, 90_000)
        self.backward = ops(rng.randint(25, 40), 10_000, 40_000)
        self.optimizer = ops(rng.randint(4, 8), 5_000, 20_000)
        # Rank 0 is the slow one (its compute 1.2-1.5x), others jitter by up to 2 %.
        self.speed = [rng.uniform(1.2, 1.5) if r == 0 and ranks > 2 else rng.uniform(1.0, 1.02)
                      for r in range(ranks)]
        # Drawn last: the draws above stay those of every seed before --queue existed.
        self.unblock = rng.randint(1_000, 3_000)  # a blocked launch returning after a slot frees


class Change:
    def __init__(self, text):
        self.kernel_globs, self.no_input, self.comm, self.launch_ns, self.median = [], False, 1.0, None, False
        name, _, value = text.partition("=")
        if name == "kernel-speedup":
            glob, _, factor = value.rpartition("=")
            self.kernel_globs.append((glob, float(factor)))
            self.args = ["--kernel-speedup", value]
        elif name == "no-input-wait":
            self.no_input, self.args = True, ["--no-input-wait"]
        elif name == "comm-speedup":
            self.comm, self.args = float(value), ["--comm-speedup", value]
        elif name == "launch-overhead":
            self.launch_ns, self.args = int(value), ["--launch-overhead", value]
        elif name == "rank-like-median":
            self.median, self.args = True, ["--rank-like-median"]
        else:
            raise SystemExit("unknown change " + text)


class Rank:
    """One rank's threads and stream while the run is simulated step by step."""

    def __init__(self, w, r, change, clock):
        self.w, self.r, self.change = w, r, change
        speed = w.speed[r]
        if change and change.median and r == 0 and w.ranks > 2:
            speed = nearest_rank_median(w.speed)
        self.speed = speed
        self.main = self.autograd = clock
        self.stream = clock
        self.corr = r * 1_000_000
        self.noise = random.Random(1000 + r)
        self.events = []
        self.graph = change is not None and change.launch_ns is not None
        self.ends = []  # the stream's activities' ends, in launch order

    def call_length(self, t, call):
        """A launch call at t: `call` long, unless the queue is full: then it returns `unblock`
        after the activity launched `queue` launches before it ended."""
        q = self.w.queue
        if q and len(self.ends) >= q:
            return max(call, self.ends[-q] + self.w.unblock - t)
        return call

    def x(self, name, cat, ts, dur, tid, args=None, pid=None):
        e = {"ph": "X", "cat": cat, "name": name, "pid": 100 + self.r if pid is None else pid,
             "tid": tid, "ts": ts / 1000.0, "dur": dur / 1000.0}
        if args:
            e["args"] = args
        self.events.append(e)

    def kernel_ns(self, op):
        ns = op["dur"] * self.speed
        for glob, factor in (self.change.kernel_globs if self.change else []):
            if fnmatch.fnmatchcase(op["kernel"], glob):
                ns /= factor
        return int(round(ns))

    def host_ns(self, ns, first_of_stretch):
        # CUDA graphs replay a stretch's launches: only the host work before its first stays.
        return ns if (not self.graph or first_of_stretch) else 0

    def jitter(self):
        """This launch's latency and stream gap: the workload's, varied per launch (the same
        draws before and after the change)."""
        return (int(self.w.lat * self.noise.uniform(0.7, 1.3)),
                int(self.w.gap * self.noise.uniform(0.5, 1.5)))

    def launch_on_stream(self, t, name, dur, cat="kernel"):
        self.corr += 1
        call = self.call_length(t, self.change.launch_ns if self.graph else self.w.launch)
        self.x("cudaLaunchKernel" if cat == "kernel" else "cudaMemcpyAsync", "cuda_runtime", t,
               call, 1, {"correlation": self.corr})
        lat, gap = self.jitter()
        if self.graph:
            gap = min(gap, self.change.launch_ns)
        start = max(t + lat, self.stream + gap)
        self.x(name, cat, start, dur, 7, {"correlation": self.corr, "device": 0, "stream": 7},
               pid=0)
        self.stream = start + dur
        self.ends.append(self.stream)
        return t + call, start

    def run_ops(self, t, ops, tid_name, first_stretch):
        for i, op in enumerate(ops):
            begin = t
            t += self.host_ns(op["python"], first_stretch and i == 0)
            t, _ = self.launch_on_stream(t, op["kernel"], self.kernel_ns(op))
            t += self.host_ns(op["tail"], False)
            self.x(tid_name + str(i), "cpu_op", begin, t - begin, 1 if tid_name[0] != "b" else 2)
        return t

    def step_until_collective(self, k):
        w, t = self.w, self.main
        self.step_start = t
        if not (self.change and self.change.no_input) and w.input[k] > 0:
            self.x("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", "user_annotation",
                   t, w.input[k], 1)
            t += w.input[k]
        t, _ = self.launch_on_stream(t, "Memcpy HtoD (Pinned -> Device)", w.copy, cat="gpu_memcpy")
        # (in a CUDA graph the copy's launch starts the stretch: the forward's Python goes too)
        t = self.run_ops(t, w.forward, "aten::linear#", False)
        self.main_sleeps = t
        # The autograd thread sleeps between backward passes; backward() wakes it.
        a = max(self.autograd, t + w.wake)
        a = self.run_ops_autograd(a)
        self.autograd_before_collective = a

    def run_ops_autograd(self, a):
        for i, op in enumerate(self.w.backward):
            begin = a
            a += self.host_ns(op["python"], i == 0)
            self.corr += 1
            call = self.call_length(a, self.change.launch_ns if self.graph else self.w.launch)
            self.x("cudaLaunchKernel", "cuda_runtime", a, call, 2, {"correlation": self.corr})
            lat, gap = self.jitter()
            gap = min(gap, self.change.launch_ns) if self.graph else gap
            start = max(a + lat, self.stream + gap)
            dur = self.kernel_ns(op)
            self.x(op["kernel"], "kernel", start, dur, 7,
                   {"correlation": self.corr, "device": 0, "stream": 7}, pid=0)
            self.stream = start + dur
            self.ends.append(self.stream)
            a += call + self.host_ns(op["tail"], False)
            self.x("autograd::engine::evaluate_function: MmBackward0", "cpu_op", begin, a - begin, 2)
        return a

    def collective_start(self):
        a = self.autograd_before_collective
        self.corr += 1
        call = self.call_length(a, self.change.launch_ns if self.graph else self.w.launch)
        self.x("cudaLaunchKernel", "cuda_runtime", a, call, 2, {"correlation": self.corr})
        lat, gap = self.jitter()
        gap = min(gap, self.change.launch_ns) if self.graph else gap
        self.coll_corr = self.corr
        self.coll_start = max(a + lat, self.stream + gap)
        self.autograd = a + call
        return self.coll_start

    def finish_step(self, k, coll_end):
        w = self.w
        if coll_end is not None:
            self.x("ncclKernel_AllReduce_RING_LL_Sum_float", "kernel", self.coll_start,
                   coll_end - self.coll_start, 7,
                   {"correlation": self.coll_corr, "device": 0, "stream": 7}, pid=0)
            self.stream = coll_end
            self.ends.append(coll_end)
        else:
            self.autograd = self.autograd_before_collective
        t = self.autograd + w.wake  # backward() returns on the main thread
        self.x("Optimizer.step#SGD.step", "cpu_op", t, 1, 1)
        t = self.run_ops(t, w.optimizer, "aten::add_#", True)
        sync_start = t
        t = max(t + 3_000, self.stream + w.ret)
        self.x("cudaStreamSynchronize", "cuda_runtime", sync_start, t - sync_start, 1,
               {"correlation": 0})
        self.x("aten::item", "cpu_op", sync_start - 1_000, t - sync_start + 2_000, 1)
        t += 1_000
        self.x("ProfilerStep#%d" % k, "user_annotation", self.step_start, t - self.step_start, 1)
        self.main = t
        return t - self.step_start

    def document(self):
        meta = [{"ph": "M", "name": "process_name", "pid": 100 + self.r, "args": {"name": "python"}},
                {"ph": "M", "name": "thread_name", "pid": 100 + self.r, "tid": 1,
                 "args": {"name": "thread 1 (python)"}},
                {"ph": "M", "name": "thread_name", "pid": 100 + self.r, "tid": 2,
                 "args": {"name": "thread 2 (autograd)"}},
                {"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "GPU 0"}},
                {"ph": "M", "name": "thread_name", "pid": 0, "tid": 7, "args": {"name": "stream 7"}}]
        doc = {"schemaVersion": 1, "traceEvents": meta + self.events}
        if self.w.ranks > 1:
            doc["distributedInfo"] = {"backend": "nccl", "rank": self.r, "world_size": self.w.ranks}
        return doc


def simulate(w, change):
    clock = 1_000_000_000_000  # ns; small enough that µs with three decimals stay exact
    ranks = [Rank(w, r, change, clock + r * 7_000) for r in range(w.ranks)]
    steps = []
    for k in range(w.steps):
        for rank in ranks:
            rank.step_until_collective(k)
        coll_end = None
        if w.ranks > 1:
            last = max(rank.collective_start() for rank in ranks)
            coll_end = last + int(round(w.transfer / (change.comm if change else 1.0)))
        steps.append(max(rank.finish_step(k, coll_end) for rank in ranks))
    return ranks, steps


def write(ranks, out):
    if len(ranks) == 1:
        with open(out + ".pt.trace.json", "w") as f:
            json.dump(ranks[0].document(), f, separators=(",", ":"))
        return
    os.makedirs(out, exist_ok=True)
    for rank in ranks:
        with open(os.path.join(out, "rank-%d.pt.trace.json" % rank.r), "w") as f:
            json.dump(rank.document(), f, separators=(",", ":"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--change", required=True)
    ap.add_argument("--ranks", type=int, default=1)
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--queue", type=int, default=None)
    ap.add_argument("--host-scale", type=float, default=None)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    w = Workload(random.Random(a.seed), a.ranks, a.steps, a.queue, a.host_scale)
    change = Change(a.change)
    before, before_steps = simulate(w, None)
    after, after_steps = simulate(w, change)
    write(before, os.path.join(a.out, "before"))
    write(after, os.path.join(a.out, "after"))
    with open(os.path.join(a.out, "expected.json"), "w") as f:
        json.dump({"before_step_ns": nearest_rank_median(before_steps),
                   "after_step_ns": nearest_rank_median(after_steps),
                   "before_steps": before_steps, "after_steps": after_steps,
                   "whatif_args": change.args}, f, indent=1)


if __name__ == "__main__":
    main()
