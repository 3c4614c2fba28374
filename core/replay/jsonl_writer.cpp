#include "core/replay/jsonl_writer.h"

#include <charconv>
#include <string>

#include "core/json_escape.h"

namespace stallscope::replay {

namespace {

using json::appendString;

template <class T>
void appendNumber(std::string& out, T value) {
    char buf[32];
    const auto result = std::to_chars(buf, buf + sizeof buf, value);
    out.append(buf, result.ptr);
}

void appendKey(std::string& out, std::string_view key) {
    out += ',';
    appendString(out, key);
    out += ':';
}

void appendRegion(std::string& out, const InstructionStream& trace, const Region& r) {
    out += '[';
    appendString(out, trace.machine.spaces[r.space].name);
    out += ',';
    appendNumber(out, r.address);
    out += ',';
    appendNumber(out, r.bytes);
    out += ']';
}

void appendMachine(std::string& out, const InstructionStream& trace) {
    const Machine& m = trace.machine;
    out += "{\"record\":\"machine\"";
    appendKey(out, "name");
    appendString(out, m.name);
    appendKey(out, "clock_ghz");
    appendNumber(out, m.clockGhz);
    appendKey(out, "spaces");
    out += '[';
    for (size_t i = 0; i < m.spaces.size(); ++i) {
        if (i) out += ',';
        out += "{\"name\":";
        appendString(out, m.spaces[i].name);
        appendKey(out, "bytes");
        appendNumber(out, m.spaces[i].bytes);
        out += '}';
    }
    out += ']';
    appendKey(out, "links");
    out += '[';
    for (size_t i = 0; i < m.links.size(); ++i) {
        const Link& l = m.links[i];
        if (i) out += ',';
        out += "{\"src\":";
        appendString(out, m.spaces[l.src].name);
        appendKey(out, "dst");
        appendString(out, m.spaces[l.dst].name);
        appendKey(out, "base_latency");
        appendNumber(out, l.baseLatency);
        appendKey(out, "bytes_per_cycle");
        appendNumber(out, l.bytesPerCycle);
        out += '}';
    }
    out += ']';
    if (m.dcache) {
        appendKey(out, "dcache");
        out += "{\"space\":";
        appendString(out, m.spaces[m.dcache->space].name);
        appendKey(out, "page_bytes");
        appendNumber(out, m.dcache->pageBytes);
        appendKey(out, "bucket_pages");
        appendNumber(out, m.dcache->bucketPages);
        out += '}';
    }
    appendKey(out, "lightweight");
    out += '[';
    for (size_t i = 0; i < m.lightweight.size(); ++i) {
        if (i) out += ',';
        appendString(out, m.lightweight[i]);
    }
    out += "]}\n";
}

}  // namespace

void writeJsonl(const InstructionStream& trace, std::ostream& out,
                const std::vector<uint32_t>* origIndex) {
    std::string buf;
    buf.reserve(1 << 20);
    auto flushIfLarge = [&] {
        if (buf.size() >= (1 << 20) - 4096) {
            out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
            buf.clear();
        }
    };
    appendMachine(buf, trace);
    for (const Hlo& h : trace.hlos) {
        buf += "{\"record\":\"hlo\",\"id\":";
        appendNumber(buf, h.id);
        appendKey(buf, "name");
        appendString(buf, h.name);
        appendKey(buf, "category");
        appendString(buf, h.category);
        buf += "}\n";
    }
    const bool measured = trace.hasMeasurements();
    for (size_t i = 0; i < trace.instrs.size(); ++i) {
        const Instr& in = trace.instrs[i];
        buf += "{\"record\":\"instr\",\"i\":";
        appendNumber(buf, i);
        appendKey(buf, "op");
        appendString(buf, trace.opName(in));
        appendKey(buf, "unit");
        appendString(buf, trace.unitName(in));
        if (in.cost != 1) {
            appendKey(buf, "cost");
            appendNumber(buf, in.cost);
        }
        if (in.busy != in.cost) {
            appendKey(buf, "busy");
            appendNumber(buf, in.busy);
        }
        if (in.hlo != kNone) {
            appendKey(buf, "hlo");
            appendNumber(buf, trace.hlos[in.hlo].id);
        }
        auto regList = [&](std::string_view key, std::span<const uint32_t> regs) {
            if (regs.empty()) return;
            appendKey(buf, key);
            buf += '[';
            for (size_t k = 0; k < regs.size(); ++k) {
                if (k) buf += ',';
                appendString(buf, trace.strings[regs[k]]);
            }
            buf += ']';
        };
        regList("rd", trace.regsRead(in));
        regList("wr", trace.regsWritten(in));
        auto memList = [&](std::string_view key, std::span<const Region> regions) {
            if (regions.empty()) return;
            appendKey(buf, key);
            buf += '[';
            for (size_t k = 0; k < regions.size(); ++k) {
                if (k) buf += ',';
                appendRegion(buf, trace, regions[k]);
            }
            buf += ']';
        };
        memList("mrd", trace.memRead(in));
        memList("mwr", trace.memWritten(in));
        if (in.kind == InstrKind::DmaIssue) {
            const Dma& d = trace.dmas[in.dma];
            appendKey(buf, "dma");
            buf += "{\"id\":";
            appendNumber(buf, d.id);
            appendKey(buf, "src");
            appendRegion(buf, trace, d.src);
            appendKey(buf, "dst");
            appendRegion(buf, trace, d.dst);
            buf += '}';
        } else if (in.kind == InstrKind::DmaWait) {
            appendKey(buf, "wait");
            appendNumber(buf, trace.dmas[in.dma].id);
        }
        if (measured) {
            if (trace.measuredCycle[i] >= 0) {
                appendKey(buf, "cycle");
                appendNumber(buf, trace.measuredCycle[i]);
            }
            if (trace.measuredStall[i] >= 0) {
                appendKey(buf, "stall");
                appendNumber(buf, trace.measuredStall[i]);
            }
        }
        if (origIndex) {
            appendKey(buf, "orig_i");
            appendNumber(buf, (*origIndex)[i]);
        }
        buf += "}\n";
        flushIfLarge();
    }
    out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
}

}  // namespace stallscope::replay
