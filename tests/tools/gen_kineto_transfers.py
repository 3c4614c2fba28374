#!/usr/bin/env python3
"""Writes a large PyTorch/Kineto-style trace for timing the transfer derivation: one host thread
launching kernels (cudaLaunchKernel + kernel on stream 7, bound by correlation and ac2g flows),
every 50th iteration an async HtoD copy waited by a cudaStreamSynchronize.

usage: gen_kineto_transfers.py OUT.json TARGET_MB
"""
import json
import sys


def main(out, target_mb):
    target = target_mb * 1_000_000
    written = 0
    ts = 1_700_000_000_000_000  # epoch µs, as Kineto writes
    corr = 0
    with open(out, "w") as f:
        f.write('{"schemaVersion": 1, "traceEvents": [\n')
        first = True
        def emit(e):
            nonlocal written, first
            text = ("" if first else ",\n") + json.dumps(e, separators=(",", ":"))
            first = False
            f.write(text)
            written += len(text)
        i = 0
        while written < target:
            corr += 1
            emit({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                  "ts": ts, "dur": 4, "args": {"correlation": corr, "cbid": 211}})
            emit({"ph": "s", "cat": "ac2g", "name": "ac2g", "id": corr, "pid": 1, "tid": 1, "ts": ts})
            emit({"ph": "X", "cat": "kernel", "name": "void gemm_kernel<float>(float*)", "pid": 0,
                  "tid": 7, "ts": ts + 5, "dur": 20,
                  "args": {"correlation": corr, "device": 0, "stream": 7, "grid": [80, 1, 1]}})
            emit({"ph": "f", "cat": "ac2g", "name": "ac2g", "id": corr, "pid": 0, "tid": 7,
                  "ts": ts + 5, "bp": "e"})
            ts += 6
            if i % 50 == 0:
                corr += 1
                emit({"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 1,
                      "tid": 1, "ts": ts, "dur": 5, "args": {"correlation": corr, "cbid": 41}})
                emit({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pinned -> Device)",
                      "pid": 0, "tid": 9, "ts": ts + 6, "dur": 40,
                      "args": {"correlation": corr, "device": 0, "stream": 9, "bytes": 1 << 20}})
                corr += 1
                emit({"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "pid": 1,
                      "tid": 1, "ts": ts + 10, "dur": 40, "args": {"correlation": corr}})
                ts += 60
            i += 1
        f.write("\n]}\n")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
