// XProf XSpace and Chakra ET import throughput on generated files: writes a large XSpace (MB/s,
// events/s) and a large Chakra rank set (nodes/s), imports each into a fresh workspace and prints
// the figures with the peak memory.
//
//   bench_trace_formats [--xspace-mb N] [--chakra-nodes N] [--ranks R] [--keep DIR]
//
// Defaults: a 200 MB XSpace (4 TPU planes and a host plane, XLA-like lines, nested and
// overlapping events, event-metadata stats) and 2,000,000 Chakra nodes over 8 ranks (compute,
// send/recv and collective nodes chained by data and control dependencies, no start times: the
// importer schedules them). Files are written as they are generated, one plane or a block of
// nodes at a time, so generation adds little to the peak memory.
#include <sys/resource.h>

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "core/trace/trace_store.h"
#include "core/workspace.h"
#include "importers/import_service.h"
#include "tests/benchmarks/bench_usage.h"

using namespace stallscope;
using bench::cpuSeconds;
using bench::peakRssMb;

namespace {

// Protobuf wire format, what the generators need.
void varint(std::string& out, uint64_t v) {
    while (v >= 0x80) {
        out.push_back(char(v | 0x80));
        v >>= 7;
    }
    out.push_back(char(v));
}
void tag(std::string& out, int number, int wireType) {
    varint(out, (uint64_t(number) << 3) | uint64_t(wireType));
}
void intField(std::string& out, int number, uint64_t v) {
    tag(out, number, 0);
    varint(out, v);
}
void bytesField(std::string& out, int number, std::string_view bytes) {
    tag(out, number, 2);
    varint(out, bytes.size());
    out.append(bytes);
}
std::string sub(int number, const std::string& body) {
    std::string out;
    bytesField(out, number, body);
    return out;
}

// --- XSpace ------------------------------------------------------------------------------------

constexpr int kOpKinds = 2000;
const char* const kCategories[] = {
    "convolution", "fusion", "all-reduce",      "copy",
    "broadcast",   "reduce", "data formatting", "non-fusion elementwise"};

// One TPU-like plane of about `bytes` bytes: XLA Modules (long steps), XLA Ops (ops nested two
// deep inside each step), Async XLA Ops (copies that overlap without nesting) and XLA TraceMe.
std::string devicePlane(int index, size_t bytes, std::mt19937_64& rng, uint64_t& events) {
    std::string plane;
    intField(plane, 1, uint64_t(index + 1));
    bytesField(plane, 2, "/device:TPU:" + std::to_string(index));
    const char* const statNames[] = {"hlo_category",       "flops",
                                     "bytes_accessed",     "program_id",
                                     "shape_with_layout",  "device_offset_ps",
                                     "device_duration_ps", "device_type_string"};
    for (int s = 0; s < 8; ++s) {
        std::string meta;
        intField(meta, 1, uint64_t(s + 1));
        bytesField(meta, 2, statNames[s]);
        std::string entry;
        intField(entry, 1, uint64_t(s + 1));
        bytesField(entry, 2, meta);
        bytesField(plane, 5, entry);
    }
    for (int m = 1; m <= kOpKinds + 2; ++m) {
        std::string meta;
        intField(meta, 1, uint64_t(m));
        const std::string display = m == 1   ? "jit_step"
                                    : m == 2 ? "copy-start"
                                             : "fusion." + std::to_string(m);
        bytesField(meta, 2,
                   "%" + display + " = f32[8,1024,1024]{2,1,0:T(8,128)} " + kCategories[m % 8] +
                       "(f32[8,1024,1024]{2,1,0} %param." + std::to_string(m) + ")");
        bytesField(meta, 4, display);
        std::string category;
        intField(category, 1, 1);
        bytesField(category, 5, kCategories[m % 8]);
        bytesField(meta, 5, category);
        std::string flops;
        intField(flops, 1, 2);
        intField(flops, 4, uint64_t(m) * 1000003);
        bytesField(meta, 5, flops);
        std::string accessed;
        intField(accessed, 1, 3);
        intField(accessed, 4, uint64_t(m) * 4096);
        bytesField(meta, 5, accessed);
        std::string program;
        intField(program, 1, 4);
        intField(program, 3, 12190760917235803885ull);
        bytesField(meta, 5, program);
        std::string entry;
        intField(entry, 1, uint64_t(m));
        bytesField(entry, 2, meta);
        bytesField(plane, 4, entry);
    }
    std::string type;
    intField(type, 1, 8);
    bytesField(type, 5, "TPU bench");
    bytesField(plane, 6, type);

    // Event layout: steps of ~200 ops in two levels; each event carries two stats.
    auto event = [&](std::string& line, uint64_t metadata, uint64_t offsetPs, uint64_t durPs,
                     bool stats) {
        std::string e;
        intField(e, 1, metadata);
        intField(e, 2, offsetPs);
        intField(e, 3, durPs);
        if (stats) {
            std::string s1, s2;
            intField(s1, 1, 6);
            intField(s1, 3, offsetPs - 1000);
            intField(s2, 1, 7);
            intField(s2, 3, durPs);
            bytesField(e, 4, s1);
            bytesField(e, 4, s2);
        }
        bytesField(line, 4, e);
        ++events;
    };
    std::string modules, ops, async, traceme;
    intField(modules, 1, 1);
    bytesField(modules, 2, "XLA Modules");
    intField(ops, 1, 2);
    bytesField(ops, 2, "XLA Ops");
    intField(async, 1, 3);
    bytesField(async, 2, "Async XLA Ops");
    intField(traceme, 1, 4);
    bytesField(traceme, 2, "XLA TraceMe");
    for (auto* l : {&modules, &ops, &async, &traceme}) intField(*l, 3, 1'000'000'000);
    uint64_t t = 0;
    while (modules.size() + ops.size() + async.size() + traceme.size() < bytes) {
        const uint64_t stepStart = t;
        uint64_t op = t + 5000;
        for (int i = 0; i < 100; ++i) {
            const uint64_t d = 20'000 + rng() % 3'000'000;  // 20 ns .. 3 us, in ps
            event(ops, 3 + rng() % kOpKinds, op, d, true);
            // Two nested ops inside.
            event(ops, 3 + rng() % kOpKinds, op + d / 10, d / 3, true);
            event(ops, 3 + rng() % kOpKinds, op + d / 2, d / 3, true);
            if (i % 10 == 0) event(async, 2, op, d * 4, false);  // overlaps the next ones
            op += d + 1000 + rng() % 50'000;
        }
        event(modules, 1, stepStart, op - stepStart, false);
        event(traceme, 1, stepStart, 2000, false);
        t = op + 100'000;
    }
    for (auto* l : {&modules, &ops, &async, &traceme}) bytesField(plane, 3, *l);
    return plane;
}

void writeXSpace(const std::string& path, size_t bytes, uint64_t& events) {
    std::ofstream out(path, std::ios::binary);
    std::mt19937_64 rng(42);
    const int planes = 4;
    for (int p = 0; p < planes; ++p) {
        const std::string plane = devicePlane(p, bytes / planes, rng, events);
        std::string field;
        tag(field, 1, 2);
        varint(field, plane.size());
        out << field << plane;
    }
    std::string host;
    intField(host, 1, 100);
    bytesField(host, 2, "/host:CPU");
    out << sub(1, host) << sub(4, "bench-host");
}

// --- Chakra ------------------------------------------------------------------------------------

// One rank's file: GlobalMetadata then `nodes` nodes; every fifth node is a send or a receive,
// every 500th an all-reduce; each node depends on the previous one (data) and, every third
// node, on the one before it (control).
void writeChakraRank(const std::string& path, uint64_t nodes, int rank, int ranks) {
    std::ofstream out(path, std::ios::binary);
    auto frame = [&](const std::string& message) {
        std::string length;
        varint(length, message.size());
        out << length << message;
    };
    std::string meta;
    bytesField(meta, 1, "0.0.4");
    frame(meta);
    std::string block;
    for (uint64_t id = 0; id < nodes; ++id) {
        std::string node;
        intField(node, 1, id);
        int type = 4;  // COMP_NODE
        if (id % 500 == 499)
            type = 7;  // COMM_COLL_NODE
        else if (id % 5 == 1)
            type = 5;  // COMM_SEND_NODE
        else if (id % 5 == 3)
            type = 6;  // COMM_RECV_NODE
        const char* const names[] = {
            "", "", "", "", "COMP_NODE_", "COMM_SEND_NODE_", "COMM_RECV_NODE_", "COMM_COLL_NODE_"};
        bytesField(node, 2, names[type] + std::to_string(id));
        intField(node, 3, uint64_t(type));
        if (id >= 2 && id % 3 == 0) intField(node, 4, id - 2);
        if (id >= 1) intField(node, 5, id - 1);
        if (type == 4) intField(node, 7, 1 + id % 13);
        if (type != 4) {
            std::string attr;
            bytesField(attr, 1, "comm_type");
            intField(attr, 9, type == 7 ? 0 : uint64_t(type));
            bytesField(node, 10, attr);
            attr.clear();
            bytesField(attr, 1, "comm_size");
            intField(attr, 9, 1 << 20);
            bytesField(node, 10, attr);
            if (type != 7) {
                attr.clear();
                bytesField(attr, 1, type == 5 ? "comm_dst" : "comm_src");
                intField(attr, 7, uint64_t((rank + (type == 5 ? 1 : ranks - 1)) % ranks));
                bytesField(node, 10, attr);
            }
        }
        varint(block, node.size());
        block += node;
        if (block.size() > (1 << 20)) {
            out << block;
            block.clear();
        }
    }
    out << block;
}

struct Imported {
    double seconds = 0, cpu = 0;
    long importPeakMb = 0;  // peak RSS when the import returns (before reading it back)
    std::string stages;
    QJsonObject meta;
    QJsonObject info;
};

Imported importTimed(const std::string& store, const std::string& file) {
    std::filesystem::remove(store);
    auto ws = Workspace::open(store);
    QElapsedTimer timer;
    // Time spent per import stage ("reading planes", "building timeline", ...).
    std::string stage;
    double stageStart = 0;
    std::vector<std::pair<std::string, double>> stages;
    Progress progress([&](double, const std::string& s) {
        if (s == stage) return;
        const double now = double(timer.nsecsElapsed()) / 1e9;
        if (!stage.empty()) stages.emplace_back(stage, now - stageStart);
        stage = s;
        stageStart = now;
    });
    const double cpu0 = cpuSeconds();
    timer.start();
    const auto out = importFiles(*ws, ImportRequest{{file}, {}, {}}, progress);
    Imported r;
    r.seconds = double(timer.nsecsElapsed()) / 1e9;
    r.cpu = cpuSeconds() - cpu0;
    r.importPeakMb = peakRssMb();
    if (!stage.empty()) stages.emplace_back(stage, r.seconds - stageStart);
    for (const auto& [name, seconds] : stages)
        if (seconds >= 0.01 && name.rfind("imported", 0) != 0)
            r.stages += (r.stages.empty() ? "" : ", ") + name + " " +
                        std::to_string(int(seconds * 1000)) + " ms";
    const ProfileInfo p = *ws->profile(out.at(0).id);
    r.meta = QJsonDocument::fromJson(QByteArray::fromStdString(p.metadataJson)).object();
    r.info = trace::TraceStore(*ws, p.id).infoJson();
    return r;
}

}  // namespace

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    double xspaceMb = 200;
    uint64_t chakraNodes = 2'000'000;
    int ranks = 8;
    std::string keep;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        if (a == "--xspace-mb")
            xspaceMb = std::atof(argv[i + 1]);
        else if (a == "--chakra-nodes")
            chakraNodes = std::strtoull(argv[i + 1], nullptr, 10);
        else if (a == "--ranks")
            ranks = std::max(1, std::atoi(argv[i + 1]));
        else if (a == "--keep")
            keep = argv[i + 1];
        else {
            std::fprintf(stderr,
                         "usage: bench_trace_formats [--xspace-mb N] [--chakra-nodes N] "
                         "[--ranks R] [--keep DIR]\n");
            return 2;
        }
    }
    QTemporaryDir tmp;
    const std::string dir = keep.empty() ? tmp.path().toStdString() : keep;
    std::filesystem::create_directories(dir);

    if (xspaceMb > 0) {
        const std::string file = dir + "/bench.xplane.pb";
        uint64_t events = 0;
        QElapsedTimer gen;
        gen.start();
        writeXSpace(file, size_t(xspaceMb * 1e6), events);
        const double mb = double(std::filesystem::file_size(file)) / 1e6;
        std::printf("XSpace: generated %.1f MB, %llu events in %.1f s\n", mb,
                    static_cast<unsigned long long>(events), double(gen.nsecsElapsed()) / 1e9);
        const Imported r = importTimed(dir + "/xspace.sqlite", file);
        std::printf(
            "XSpace import: %.1f MB in %.2f s = %.1f MB/s, %.0f events/s (%lld slices, %lld "
            "tracks), peak RSS %ld MB\n",
            mb, r.seconds, mb / r.seconds, double(events) / r.seconds,
            static_cast<long long>(r.info.value("slices").toInteger()),
            static_cast<long long>(r.info.value("tracks").toInteger()), peakRssMb());
        std::printf(
            "  CPU %.2f s = %.1f MB/s; peak RSS at the end of the import %ld MB; stages: %s\n",
            r.cpu, mb / r.cpu, r.importPeakMb, r.stages.c_str());
        std::fflush(stdout);
    }
    if (chakraNodes > 0) {
        const uint64_t perRank = chakraNodes / uint64_t(ranks);
        QElapsedTimer gen;
        gen.start();
        uint64_t bytes = 0;
        for (int r = 0; r < ranks; ++r) {
            const std::string file = dir + "/bench." + std::to_string(r) + ".et";
            writeChakraRank(file, perRank, r, ranks);
            bytes += std::filesystem::file_size(file);
        }
        std::printf("Chakra: generated %d ranks x %llu nodes (%.1f MB) in %.1f s\n", ranks,
                    static_cast<unsigned long long>(perRank), double(bytes) / 1e6,
                    double(gen.nsecsElapsed()) / 1e9);
        const Imported r = importTimed(dir + "/chakra.sqlite", dir + "/bench.0.et");
        const double nodes = double(r.meta.value("nodes").toInteger());
        std::printf(
            "Chakra import: %.0f nodes, %lld dependencies in %.2f s = %.0f nodes/s "
            "(%.1f MB/s), peak RSS %ld MB\n",
            nodes, static_cast<long long>(r.meta.value("dependencies").toInteger()), r.seconds,
            nodes / r.seconds, double(bytes) / 1e6 / r.seconds, peakRssMb());
        std::printf(
            "  CPU %.2f s = %.0f nodes/s; peak RSS at the end of the import %ld MB; stages: %s\n",
            r.cpu, nodes / r.cpu, r.importPeakMb, r.stages.c_str());
        std::fflush(stdout);
    }
    return 0;
}
