#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora (tests/fuzz/corpus/<format>/): small hand-made inputs
that reach each importer's main paths, plus the project's own demo resources cut small. With
--samples DIR it also cuts the real files of ../shared/samples into OUT (for a local campaign;
those are not copied into the project)."""
import gzip, json, os, sqlite3, sys, zlib

def put(out, fmt, name, data):
    d = os.path.join(out, fmt); os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), 'wb') as f: f.write(data if isinstance(data, bytes) else data.encode())

def varint(v):
    b = bytearray()
    while True:
        c = v & 0x7f; v >>= 7
        b.append(c | (0x80 if v else 0))
        if not v: return bytes(b)
def field(n, wt, payload):
    tag = varint(n << 3 | wt)
    if wt == 0: return tag + varint(payload)
    if wt == 2: return tag + varint(len(payload)) + payload
    if wt == 1: return tag + payload
    raise ValueError
def s(n, text): return field(n, 2, text.encode() if isinstance(text, str) else text)

def chrome(out):
    epoch = 1712186718000000
    ev = [
        {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "python"}},
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": "main"}},
        {"ph": "X", "name": "aten::mm", "pid": 1, "tid": 2, "ts": epoch, "dur": 12.5, "args": {"External id": 3}},
        {"ph": "B", "name": "step", "pid": 1, "tid": 2, "ts": epoch + 1},
        {"ph": "E", "pid": 1, "tid": 2, "ts": epoch + 9.0005},
        {"ph": "B", "name": "never", "pid": 1, "tid": 2, "ts": epoch + 10},
        {"ph": "f", "id": 4, "cat": "ac2g", "name": "ac2g", "pid": 0, "tid": 7, "ts": epoch + 3, "bp": "e"},
        {"ph": "X", "name": "kernel", "pid": 0, "tid": 7, "ts": epoch + 3, "dur": 2},
        {"ph": "s", "id": 4, "cat": "ac2g", "name": "ac2g", "pid": 1, "tid": 2, "ts": epoch + 1},
        {"ph": "b", "cat": "net", "name": "req", "id": "0x1", "pid": 1, "ts": epoch},
        {"ph": "n", "cat": "net", "name": "mark", "id": "0x1", "pid": 1, "ts": epoch + 1},
        {"ph": "e", "cat": "net", "name": "req", "id": "0x1", "pid": 1, "ts": epoch + 4},
        {"ph": "S", "cat": "x", "name": "legacy", "id": 9, "pid": 1, "ts": epoch},
        {"ph": "T", "cat": "x", "name": "legacy", "id": 9, "pid": 1, "ts": epoch + 1},
        {"ph": "F", "cat": "x", "name": "legacy", "id": 9, "pid": 1, "ts": epoch + 2},
        {"ph": "C", "name": "mem", "pid": 1, "ts": epoch, "args": {"used": 10, "free": "20"}},
        {"ph": "i", "name": "g", "s": "g", "pid": "", "tid": "", "ts": epoch + 5},
        {"ph": "X", "name": "v2", "pid": 1, "tid": 3, "ts": epoch, "dur": 1, "bind_id": "0xa", "flow_out": True},
        {"ph": "X", "name": "v2in", "pid": 1, "tid": 4, "ts": epoch + 2, "dur": 1, "bind_id": "0xa", "flow_in": True},
    ]
    doc = {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "GPU"}], "traceEvents": ev, "traceName": "t"}
    put(out, 'chrome-json', 'kineto.json', json.dumps(doc))
    put(out, 'chrome-json', 'array.json', json.dumps(ev[:6]))
    put(out, 'chrome-json', 'late_events.json', json.dumps({"metadata": {"x": "y" * 5000}, "traceEvents": ev[2:5]}))
    put(out, 'chrome-json', 'nonstandard.json',
        '{"traceEvents":[{"ph":"X","name":"m","pid":0,"tid":"s 7","ts":"5.5","dur":1,"args":{"bw":inf,"q":nan,"t":"a\x01b"}}]}')
    put(out, 'chrome-json', 'gzip.json.gz', gzip.compress(json.dumps(ev[:4]).encode()))

def xspace(out):
    stat_meta = lambda id_, name: s(5, varint(id_) and (field(1, 0, id_) + s(2, field(1, 0, id_) + s(2, name))))
    def event_meta(id_, name, display=''):
        meta = field(1, 0, id_) + s(2, name) + (s(4, display) if display else b'')
        return s(4, field(1, 0, id_) + s(2, meta))
    def stat_md(id_, name):
        return s(5, field(1, 0, id_) + s(2, field(1, 0, id_) + s(2, name)))
    def stat(fieldno, meta_id, value): return s(fieldno, field(1, 0, meta_id) + value)
    def event(meta_id, off, dur, stats=b''):
        return s(4, field(1, 0, meta_id) + field(2, 0, off) + field(3, 0, dur) + stats)
    plane = field(1, 0, 5) + s(2, '/device:TPU:0')
    plane += stat_md(1, 'hlo_category') + stat_md(2, 'flops') + stat_md(3, 'device_type_string')
    plane += event_meta(10, '%copy-start = (f32[8,128]{1,0:T(8,128)S(5)}) copy-start(f32[8,128]{1,0} %p)', 'copy-start')
    plane += event_meta(11, '%copy-done = f32[8,128]{1,0} copy-done(%copy-start)', 'copy-done')
    plane += event_meta(12, '%fusion.1 = f32[8]{0} fusion(f32[8]{0} %p), kind=kLoop', 'fusion.1')
    plane += stat(6, 3, s(5, 'TPU v6e'))
    ops = field(1, 0, 1) + s(2, 'XLA Ops') + field(3, 0, 1000)
    ops += event(10, 0, 500) + event(12, 600, 2250, stat(4, 2, field(4, 0, 42))) + event(11, 3000, 9000)
    plane += s(3, ops)
    asy = field(1, 0, 2) + s(2, 'Async XLA Ops') + field(3, 0, 1000) + event(10, 0, 12000)
    plane += s(3, asy)
    agg = field(1, 0, 3) + s(2, 'Aggregated') + field(3, 0, 1000) + s(4, field(1, 0, 12) + field(5, 0, 3) + field(3, 0, 700))
    plane += s(3, agg)
    put(out, 'xprof-xspace', 'tpu.xplane.pb', s(1, plane) + s(1, field(1, 0, 6) + s(2, '/host:metadata')) + s(4, 'host-a'))

def chakra(out):
    frame = lambda m: varint(len(m)) + m
    attr_str = lambda name, v: s(2, s(1, name) + s(29, v))  # attr in GlobalMetadata
    meta = frame(s(1, '0.0.4') + attr_str('schema', '1.0.2-chakra.0.0.4'))
    node_attr = lambda name, fieldno, v: s(10, s(1, name) + field(fieldno, 0, v))
    n0 = frame(field(1, 0, 0) + s(2, 'COMP_NODE_a') + field(3, 0, 4) + field(7, 0, 7) + node_attr('num_ops', 9, 100))
    n1 = frame(field(1, 0, 1) + s(2, 'COMM_COLL_NODE_ar') + field(3, 0, 7) + s(5, varint(0)) + field(7, 0, 5)
               + node_attr('comm_type', 7, 0) + node_attr('comm_size', 9, 1048576))
    n2 = frame(field(1, 0, 2) + s(2, 'COMM_SEND_NODE_s') + field(3, 0, 5) + s(4, varint(1)) + field(6, 0, 20) + field(7, 0, 3))
    put(out, 'chakra-et', 'with_metadata.0.et', meta + n0 + n1 + n2)
    put(out, 'chakra-et', 'no_metadata.0.et', frame(s(2, 'COMP_NODE_a') + field(3, 0, 4) + field(7, 0, 7)) + n1)

REPLAY = '''{"record":"machine","name":"toy-tpu","clock_ghz":1.0,"spaces":[{"name":"hbm","bytes":17179869184},{"name":"dcache","bytes":16777216}],"links":[{"src":"hbm","dst":"dcache","base_latency":400,"bytes_per_cycle":64}],"dcache":{"space":"dcache","page_bytes":512,"bucket_pages":256},"lightweight":["mov","add"]}
{"record":"hlo","id":0,"name":"fusion.1","first_i":0,"last_i":3}
{"record":"instr","i":0,"op":"sld","unit":"scalar","rd":["s1"],"wr":["s2"],"mrd":[["dcache",4096,64]]}
{"record":"instr","i":1,"op":"add","unit":"scalar","rd":["s2"],"wr":["s3"]}
{"record":"instr","i":2,"op":"dma.issue","unit":"dma","rd":["s3"],"dma":{"id":3,"src":["hbm",65536,4096],"dst":["dcache",8192,4096]}}
{"record":"instr","i":3,"op":"dma.wait","unit":"dma","wait":3}
'''

def csvs(out):
    put(out, 'replay-jsonl', 'contract.jsonl', REPLAY)
    put(out, 'noise-csv', 'runs.csv', 'machine,region,mode,k,rep,time_ns,param.n\n' + ''.join(
        f'm,loop,{mode},{k},{r},{100 + max(0, k - 4) * 3 + r},8\n' for mode in ('fp_add64', 'memory_ld64') for k in range(0, 12, 2) for r in range(2)))
    put(out, 'noise-csv', 'cycles.csv', 'region,mode,k,cycles\nloop,int_add,0,10\nloop,int_add,4,11\n')
    put(out, 'cpi-csv', 'stacks.csv', 'kernel,source,category,cycles,group\ngemm_1,hw,long_scoreboard,"1,200",gemm\ngemm_1,AMALI,selected,800,gemm\nrelu,hw,wait,50,ele\n')
    put(out, 'estimates-csv', 'estimates.csv', 'workload,region,hardware,estimator,predicted_us,measured_us,wall_s\nllm,attn,a100,roofline,3,4,0.1\nllm,mlp,h100,sim,5,4.5,30\n')
    put(out, 'ncu-csv', 'details.csv', '==PROF== Connected to process 1\n"ID","Process ID","Kernel Name","Section Name","Metric Name","Metric Unit","Metric Value","Rule Name","Rule Type","Rule Description"\n'
        '"0","1","k","GPU Speed Of Light Throughput","Elapsed Cycles","cycle","13,485","","",""\n'
        '"0","1","k","GPU Speed Of Light Throughput","","","","SOLBottleneck","OPT","text"\n'
        '"0","1","k","Warp State Statistics","Warp Cycles Per Issued Instruction","cycle","12.5","","",""\n')
    put(out, 'ncu-csv', 'raw.csv', '"ID","Kernel Name","gpc__cycles_elapsed.max","smsp__average_warp_latency_issue_stalled_barrier.ratio"\n"","","cycle","inst"\n"0","k","1000","0.5"\n')
    put(out, 'ncu-csv', 'empty.csv', '==PROF== Connected to process 1\n==WARNING== No kernels were profiled.\n')
    put(out, 'gpgpusim-log', 'two.log', '''GPGPU-Sim uArch: simulation start
kernel_name = first
kernel_launch_uid = 1 3
gpu_sim_cycle = 1000
gpu_sim_insn = 500
gpu_tot_sim_cycle = 1000
gpgpu_n_stall_shd_mem = 40
gpgpu_stall_shd_mem[s_mem][bk_conf] = 40
gpgpu_simulation_rate = 12 (inst/sec)
Stall:100	W0_Idle:200	W0_Scoreboard:300	W1:0	W2:400
GPGPU-Sim uArch: Shader 0 bind to kernel 2 'second'
kernel_name =
kernel_launch_uid =
gpu_sim_cycle = 8
gpu_tot_sim_cycle = 1008
Stall:400	W0_Idle:200	W0_Scoreboard:900	W1:0	W2:1000
''')

def sniper(out):
    path = os.path.join(out, 'sniper-stats'); os.makedirs(path, exist_ok=True)
    db_path = os.path.join(path, 'sim.stats.sqlite3')
    if os.path.exists(db_path): os.remove(db_path)
    db = sqlite3.connect(db_path)
    db.executescript('''CREATE TABLE names (nameid INTEGER, objectname TEXT, metricname TEXT);
CREATE TABLE prefixes (prefixid INTEGER, prefixname TEXT);
CREATE TABLE "values" (prefixid INTEGER, nameid INTEGER, core INTEGER, value INTEGER);''')
    names = ['performance_model.elapsed_time', 'performance_model.instruction_count', 'rob_timer.cpiBase',
             'rob_timer.cpiDataCacheL1', 'rob_timer.cpiBranchPredictor', 'core.instructions']
    for i, n in enumerate(names):
        o, m = n.split('.', 1); db.execute('INSERT INTO names VALUES (?,?,?)', (i, o, m))
    db.execute("INSERT INTO prefixes VALUES (1, 'roi-begin')"); db.execute("INSERT INTO prefixes VALUES (2, 'roi-end')")
    for p, scale in ((1, 0), (2, 1)):
        for i, v in enumerate([1000000, 2000, 600000, 300000, 100000, 2000]):
            db.execute('INSERT INTO "values" VALUES (?,?,?,?)', (p, i, 0, v * scale))
    db.commit(); db.close()

def samples(src, out):
    """Real files cut small, for a local campaign (kept outside the project)."""
    cuts = {'chrome-json': ['real/hta_alexnet_trace.json.gz', 'kineto/before_fix_trace.json', 'chrome/flow_simple.json', 'chrome/nestable_async.json'],
            'ncu-csv': ['ncu/kernel_0001_67bdb7e29d1bb4e0ca0aec954ef18af3.details.csv'],
            'gpgpusim-log': ['real/accelsim_halUW_benchmark_1_stream_clean.log'],
            'chakra-et': ['chakra/custom_allreduce.0.et', 'real/chakra_resnet50_dp_2023/resnet50_DataParallel.0.et'],
            'xprof-xspace': ['xprof/tpu_inference_2.xplane.pb']}
    for fmt, files in cuts.items():
        for f in files:
            p = os.path.join(src, f)
            if not os.path.exists(p): continue
            data = open(p, 'rb').read()
            if p.endswith('.gz'): data = gzip.decompress(data)
            put(out, fmt, 'sample_' + os.path.basename(f).replace('.gz', ''), data[:65536])

if __name__ == '__main__':
    out = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith('--') else os.path.join(os.path.dirname(os.path.abspath(__file__)), 'corpus')
    if '--samples' in sys.argv:
        samples(sys.argv[sys.argv.index('--samples') + 1], out)
    else:
        chrome(out); xspace(out); chakra(out); csvs(out); sniper(out)
