#!/usr/bin/env python3
"""Kineto-like training trace for the step breakdown benchmark (deterministic).

Usage: gen_kineto_steps.py OUT.json SLICES [--loader-us N] [--seed S]

Each step: ProfilerStep#N on the main thread, the DataLoader (--loader-us, default 200 µs),
then kernels: an aten op holding a cudaLaunchKernel (with its ac2g flow) that starts a kernel
on stream 7 (GEMM, attention or elementwise); every 50th launch is an H2D copy; each step ends
with an NCCL all-reduce on stream 13 overlapping the last kernels, and a cudaStreamSynchronize.
About three slices per kernel; SLICES is the total slice count aimed at.
"""
import argparse
import random

parser = argparse.ArgumentParser()
parser.add_argument("out")
parser.add_argument("slices", type=int)
parser.add_argument("--loader-us", type=float, default=200.0)
parser.add_argument("--kernels-per-step", type=int, default=1000)
parser.add_argument("--seed", type=int, default=18)
args = parser.parse_args()

rng = random.Random(args.seed)
HOST, TID, GPU = 100, 100, 0
KERNELS = ["ampere_bf16_s16816gemm_128x128", "flash_fwd_kernel", "vectorized_elementwise_kernel",
           "reduce_kernel", "sm90_xmma_gemm_bf16bf16"]


def us(ns):
    return f"{ns // 1000}.{ns % 1000:03d}"


out = open(args.out, "w")
out.write('{"traceEvents":[\n')
out.write(f'{{"ph":"M","name":"process_name","pid":{HOST},"tid":0,"args":{{"name":"python3"}}}},\n')
out.write(f'{{"ph":"M","name":"process_labels","pid":{GPU},"tid":0,"args":{{"labels":"GPU 0"}}}},\n')
out.write(f'{{"ph":"M","name":"thread_name","pid":{GPU},"tid":7,"args":{{"name":"stream 7 "}}}},\n')
out.write(f'{{"ph":"M","name":"thread_name","pid":{GPU},"tid":13,"args":{{"name":"stream 13 "}}}},\n')
slices = 0
corr = 0
t = 1_000_000  # ns
step = 0
buf = []
while slices < args.slices:
    step_start = t
    loader = int(args.loader_us * 1000)
    buf.append(f'{{"ph":"X","cat":"user_annotation","name":"enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__","pid":{HOST},"tid":{TID},"ts":{us(t)},"dur":{us(loader)}}}')
    slices += 1
    t += loader
    gpu_free = t
    for k in range(args.kernels_per_step):
        corr += 1
        op = rng.randint(3000, 9000)
        launch_at = t + rng.randint(500, 1500)
        launch = rng.randint(2000, 5000)
        kernel = "Memcpy HtoD (Pinned -> Device)" if k % 50 == 49 else rng.choice(KERNELS)
        cat = "gpu_memcpy" if kernel.startswith("Memcpy") else "kernel"
        dur = rng.randint(2000, 40000)
        start = max(gpu_free, launch_at + rng.randint(3000, 6000))
        buf.append(f'{{"ph":"X","cat":"cpu_op","name":"aten::op{k % 40}","pid":{HOST},"tid":{TID},"ts":{us(t)},"dur":{us(op)}}}')
        buf.append(f'{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":{HOST},"tid":{TID},"ts":{us(launch_at)},"dur":{us(launch)},"args":{{"correlation":{corr}}}}}')
        buf.append(f'{{"ph":"s","id":{corr},"pid":{HOST},"tid":{TID},"ts":{us(launch_at)},"cat":"ac2g","name":"ac2g"}}')
        buf.append(f'{{"ph":"X","cat":"{cat}","name":"{kernel}","pid":{GPU},"tid":7,"ts":{us(start)},"dur":{us(dur)},"args":{{"device":0,"stream":7,"correlation":{corr}}}}}')
        buf.append(f'{{"ph":"f","id":{corr},"pid":{GPU},"tid":7,"ts":{us(start)},"cat":"ac2g","name":"ac2g","bp":"e"}}')
        slices += 3
        gpu_free = start + dur
        t += op + rng.randint(200, 800)
        if len(buf) > 20000:
            out.write(",\n".join(buf) + ",\n")
            buf.clear()
    nccl = rng.randint(100_000, 400_000)
    buf.append(f'{{"ph":"X","cat":"kernel","name":"ncclKernel_AllReduce_RING_LL_Sum_bfloat16","pid":{GPU},"tid":13,"ts":{us(gpu_free - nccl // 2)},"dur":{us(nccl)},"args":{{"device":0,"stream":13}}}}')
    sync_end = max(t, gpu_free + nccl // 2) + 1000
    buf.append(f'{{"ph":"X","cat":"cuda_runtime","name":"cudaStreamSynchronize","pid":{HOST},"tid":{TID},"ts":{us(t)},"dur":{us(sync_end - t)}}}')
    t = sync_end + 2000
    buf.append(f'{{"ph":"X","cat":"user_annotation","name":"ProfilerStep#{step}","pid":{HOST},"tid":{TID},"ts":{us(step_start)},"dur":{us(t - step_start)}}}')
    slices += 3
    step += 1
out.write(",\n".join(buf) + "\n]}\n")
out.close()
print(f"{slices} slices, {step} steps, {corr} kernels")
