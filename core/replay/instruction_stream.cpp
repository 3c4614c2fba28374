#include "core/replay/instruction_stream.h"

namespace stallscope::replay {

uint32_t Machine::findSpace(std::string_view n) const {
    for (uint32_t i = 0; i < spaces.size(); ++i)
        if (spaces[i].name == n) return i;
    return kNone;
}

uint32_t Machine::findLink(uint32_t src, uint32_t dst) const {
    for (uint32_t i = 0; i < links.size(); ++i)
        if (links[i].src == src && links[i].dst == dst) return i;
    return kNone;
}

std::string Machine::linkName(uint32_t link) const {
    const Link& l = links.at(link);
    return spaces.at(l.src).name + "->" + spaces.at(l.dst).name;
}

size_t InstructionStream::dmaIndexById(int64_t id) const {
    for (size_t i = 0; i < dmas.size(); ++i)
        if (dmas[i].id == id) return i;
    return kNone;
}

void InstrRecord::clear() {
    index = -1;
    op = unit = {};
    cost = busy = hlo = cycle = stall = wait = std::nullopt;
    rd.clear();
    wr.clear();
    mrd.clear();
    mwr.clear();
    hasDma = false;
    dmaId = 0;
    dmaSrc = dmaDst = {};
}

InstructionStreamBuilder::InstructionStreamBuilder() = default;

uint32_t InstructionStreamBuilder::intern(std::string_view s) {
    auto it = stringIds_.find(s);
    if (it != stringIds_.end()) return it->second;
    const auto id = static_cast<uint32_t>(trace_.strings.size());
    trace_.strings.emplace_back(s);
    stringIds_.emplace(std::string(s), id);
    return id;
}

void InstructionStreamBuilder::setMachine(Machine machine) {
    if (hasMachine_) throw InstructionStreamError("a second machine record");
    if (machine.spaces.empty()) throw InstructionStreamError("machine declares no memory spaces");
    for (size_t i = 0; i < machine.links.size(); ++i) {
        const Link& l = machine.links[i];
        if (l.bytesPerCycle <= 0) throw InstructionStreamError("link bandwidth must be positive");
        // One base latency and one FIFO per link: a second declaration would be ambiguous.
        if (machine.findLink(l.src, l.dst) != i)
            throw InstructionStreamError("link " + machine.linkName(static_cast<uint32_t>(i)) +
                                         " declared twice");
    }
    trace_.machine = std::move(machine);
    hasMachine_ = true;
}

void InstructionStreamBuilder::addHlo(Hlo hlo) {
    if (hloIndex_.count(hlo.id))
        throw InstructionStreamError("hlo id " + std::to_string(hlo.id) + " declared twice");
    hloIndex_.emplace(hlo.id, static_cast<uint32_t>(trace_.hlos.size()));
    trace_.hlos.push_back(std::move(hlo));
}

Region InstructionStreamBuilder::toRegion(const InstrRecord::RegionRecord& r, const char* what) {
    const uint32_t space = trace_.machine.findSpace(r.space);
    if (space == kNone)
        throw InstructionStreamError(std::string(what) + " names unknown memory space '" +
                                     std::string(r.space) + "'");
    if (r.address < 0 || r.bytes < 0)
        throw InstructionStreamError(std::string(what) + " has a negative address or size");
    const uint64_t spaceBytes = trace_.machine.spaces[space].bytes;
    const auto address = static_cast<uint64_t>(r.address);
    const auto bytes = static_cast<uint64_t>(r.bytes);
    if (spaceBytes && (address > spaceBytes || bytes > spaceBytes - address))
        throw InstructionStreamError(std::string(what) + " [" + std::string(r.space) + ", " +
                                     std::to_string(address) + ", " + std::to_string(bytes) +
                                     "] lies outside its space (" + std::to_string(spaceBytes) +
                                     " bytes)");
    return Region{space, address, bytes};
}

void InstructionStreamBuilder::addInstr(const InstrRecord& rec) {
    if (!hasMachine_) throw InstructionStreamError("instruction before the machine record");
    const auto n = static_cast<int64_t>(trace_.instrs.size());
    if (rec.index != n)
        throw InstructionStreamError("instruction index " + std::to_string(rec.index) + " where " +
                                     std::to_string(n) +
                                     " was expected (indices must be 0, 1, 2, ... without gaps)");
    if (rec.op.empty()) throw InstructionStreamError("instruction without an 'op'");
    Instr in;
    in.op = intern(rec.op);
    in.unit = intern(rec.unit.empty() ? std::string_view("scalar") : rec.unit);
    if (rec.cost && *rec.cost < 0) throw InstructionStreamError("negative cost");
    if (rec.busy && *rec.busy < 0) throw InstructionStreamError("negative busy");
    in.cost = static_cast<uint32_t>(rec.cost.value_or(1));
    in.busy = static_cast<uint32_t>(rec.busy.value_or(in.cost));
    if (rec.hlo) {
        auto it = hloIndex_.find(*rec.hlo);
        if (it == hloIndex_.end())
            throw InstructionStreamError("hlo " + std::to_string(*rec.hlo) +
                                         " used before its hlo record");
        in.hlo = it->second;
    }
    in.regBegin = static_cast<uint32_t>(trace_.regRefs.size());
    for (auto r : rec.rd) trace_.regRefs.push_back(intern(r));
    for (auto r : rec.wr) trace_.regRefs.push_back(intern(r));
    in.regReads = static_cast<uint16_t>(rec.rd.size());
    in.regWrites = static_cast<uint16_t>(rec.wr.size());
    in.memBegin = static_cast<uint32_t>(trace_.memRefs.size());
    for (const auto& r : rec.mrd) trace_.memRefs.push_back(toRegion(r, "memory read"));
    for (const auto& r : rec.mwr) trace_.memRefs.push_back(toRegion(r, "memory write"));
    in.memReads = static_cast<uint16_t>(rec.mrd.size());
    in.memWrites = static_cast<uint16_t>(rec.mwr.size());

    const auto self = static_cast<uint32_t>(n);
    if (rec.op == "dma.issue") {
        if (!rec.hasDma) throw InstructionStreamError("dma.issue without a 'dma' object");
        if (dmaIndex_.count(rec.dmaId))
            throw InstructionStreamError("DMA id " + std::to_string(rec.dmaId) + " issued twice");
        Dma d;
        d.id = rec.dmaId;
        d.src = toRegion(rec.dmaSrc, "DMA source");
        d.dst = toRegion(rec.dmaDst, "DMA destination");
        if (d.src.bytes != d.dst.bytes)
            throw InstructionStreamError("DMA " + std::to_string(d.id) +
                                         " source and destination sizes differ");
        d.link = trace_.machine.findLink(d.src.space, d.dst.space);
        if (d.link == kNone)
            throw InstructionStreamError("DMA " + std::to_string(d.id) + " uses undeclared link " +
                                         trace_.machine.spaces[d.src.space].name + "->" +
                                         trace_.machine.spaces[d.dst.space].name);
        d.issueInstr = self;
        in.kind = InstrKind::DmaIssue;
        in.dma = static_cast<uint32_t>(trace_.dmas.size());
        dmaIndex_.emplace(d.id, in.dma);
        openDmas_.emplace(d.id, in.dma);
        trace_.dmas.push_back(d);
    } else if (rec.op == "dma.wait") {
        if (!rec.wait) throw InstructionStreamError("dma.wait without a 'wait' DMA id");
        auto it = openDmas_.find(*rec.wait);
        if (it == openDmas_.end())
            throw InstructionStreamError(dmaIndex_.count(*rec.wait)
                                             ? "WAIT of DMA " + std::to_string(*rec.wait) +
                                                   ", already waited"
                                             : "WAIT of unknown DMA " + std::to_string(*rec.wait));
        in.kind = InstrKind::DmaWait;
        in.dma = it->second;
        trace_.dmas[it->second].waitInstr = self;
        openDmas_.erase(it);
    } else if (rec.hasDma) {
        throw InstructionStreamError("'dma' object on an instruction that is not dma.issue");
    }

    if (rec.cycle || rec.stall) {
        if (!anyMeasured_) {
            trace_.measuredCycle.assign(trace_.instrs.size(), -1);
            trace_.measuredStall.assign(trace_.instrs.size(), -1);
            anyMeasured_ = true;
        }
    }
    if (anyMeasured_) {
        trace_.measuredCycle.push_back(rec.cycle.value_or(-1));
        trace_.measuredStall.push_back(rec.stall.value_or(-1));
    }
    trace_.instrs.push_back(in);
}

InstructionStream InstructionStreamBuilder::finish() {
    if (!hasMachine_) throw InstructionStreamError("no machine record");
    trace_.lightweightOps.assign(trace_.strings.size(), false);
    for (const auto& name : trace_.machine.lightweight) {
        auto it = stringIds_.find(name);
        if (it != stringIds_.end()) trace_.lightweightOps[it->second] = true;
    }
    InstructionStream out = std::move(trace_);
    trace_ = InstructionStream{};
    return out;
}

}  // namespace stallscope::replay
