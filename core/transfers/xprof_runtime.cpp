// Transfers of XProf GPU profiles without XLA op lines: the CUPTI/ROCm runtime calls XProf
// records, read into the evidence runtime_copies.cpp makes transfers of.

#include <algorithm>
#include <map>
#include <set>

#include "core/trace/hosts.h"
#include "core/trace/trace_args.h"
#include "core/transfers/runtime_copies.h"

namespace stallscope::transfers::detail {

using trace::SliceItem;
using trace::TraceStore;
using trace::TrackRow;

namespace {

// ---- XProf GPU profiles: the CUPTI/ROCm runtime calls XProf records ----

// XProf names a CUDA copy by its direction on both ends, the host's API call and the device's
// activity ("MemcpyH2D", memcpy_details "size:112 dest:4 async:1"); ROCm's copy activities
// say it in words ("CopyDeviceToDevice"). Empty when `name` is neither.
std::string xprofCopyDirection(std::string_view name) {
    static const std::pair<std::string_view, const char*> kDirections[] = {
        {"MemcpyH2D", "HtoD"},          {"MemcpyD2H", "DtoH"},        {"MemcpyD2D", "DtoD"},
        {"MemcpyP2P", "PtoP"},          {"CopyHostToDevice", "HtoD"}, {"CopyDeviceToHost", "DtoH"},
        {"CopyDeviceToDevice", "DtoD"}, {"CopyPeerToPeer", "PtoP"}};
    for (const auto& [known, direction] : kDirections)
        if (name == known) return direction;
    return {};
}
// Runtime and driver API copies ("hipMemcpyHtoDAsync", "cuMemcpyDtoHAsync_v2").
bool isApiCopy(std::string_view name) {
    return (name.starts_with("cu") || name.starts_with("hip")) &&
           name.find("Memcpy") != std::string_view::npos;
}
std::string apiCopyDirection(std::string_view name) {
    for (const char* direction : {"HtoD", "DtoH", "DtoD"})
        if (name.find(direction) != std::string_view::npos) return direction;
    return name.find("Peer") != std::string_view::npos ? "PtoP" : "";
}
bool isXprofSync(std::string_view name) {
    if (const auto v = name.find("_v"); v != std::string_view::npos) name = name.substr(0, v);
    return isSync(name) || name == "cuStreamSynchronize" || name == "cuCtxSynchronize" ||
           name == "cuEventSynchronize";
}
// A field of XProf's memcpy_details ("kind:Unknown size:0 dest:512 async:1"); -1 when absent.
int64_t detailField(std::string_view details, std::string_view field) {
    for (size_t at = details.find(field); at != std::string_view::npos;
         at = details.find(field, at + 1)) {
        if ((at > 0 && details[at - 1] != ' ') || at + field.size() >= details.size() ||
            details[at + field.size()] != ':')
            continue;
        int64_t value = 0;
        bool digits = false;
        for (size_t i = at + field.size() + 1;
             i < details.size() && std::isdigit(uint8_t(details[i])); ++i, digits = true)
            value = value * 10 + (details[i] - '0');
        return digits ? value : -1;
    }
    return -1;
}
std::string memcpyDetails(const TraceStore& store, uint64_t args) {
    const auto member = store.argsMember(args, "memcpy_details");
    return member ? trace::memberValue(*member).value_or("") : "";
}

// GPU planes ("/device:GPU:4") without XLA Ops lines (those are the XLA derivation's) and the
// host plane's threads: copies bound by correlation_id, host syncs as waits.
}  // namespace

std::vector<const TrackRow*> xprofRuntimePlanes(const TraceStore& store) {
    const TrackHosts hosts(store);
    std::vector<const TrackRow*> gpus, hostPlanes;
    std::set<int> hostsWithGpus;
    for (const TrackRow* plane : trace::processTracks(store)) {
        if (plane->name.starts_with("/host:")) {
            hostPlanes.push_back(plane);
            continue;
        }
        if (!plane->name.starts_with("/device:GPU:")) continue;
        const std::vector<const TrackRow*> lines = store.children(plane->id);
        if (std::any_of(lines.begin(), lines.end(), [](const TrackRow* line) {
                return line->name == "XLA Ops" || line->name.starts_with("XLA Ops (");
            }))
            continue;
        gpus.push_back(plane);
        hostsWithGpus.insert(hosts.of(plane->id));
    }
    // A host's threads are read only when it has such a GPU (TPU hosts: not at all).
    for (const TrackRow* plane : hostPlanes)
        if (hostsWithGpus.count(hosts.of(plane->id))) gpus.push_back(plane);
    return gpus;
}

// What an XProf event name is to the runtime-copy derivation, decided once per string rather
// than once per slice (a GPU profile's host threads hold millions of slices).
struct XprofNames {
    enum Kind : uint8_t { Other, Copy, Blit, Collective, Sync, ApiCopy };
    std::vector<Kind> kind;
    std::vector<std::string> direction;  // of a Copy or an ApiCopy ("HtoD"), "" when unsaid
    explicit XprofNames(const TraceStore& store)
        : kind(store.textCount(), Other), direction(store.textCount()) {
        for (uint32_t id = 0; id < store.textCount(); ++id) {
            const std::string& name = store.text(id);
            if (std::string named = xprofCopyDirection(name); !named.empty()) {
                kind[id] = Copy;
                direction[id] = std::move(named);
            } else if (name.starts_with("__amd_rocclr_copyBuffer")) {
                kind[id] = Blit;
            } else if (isXprofSync(name)) {
                kind[id] = Sync;
            } else if (isApiCopy(name)) {
                kind[id] = ApiCopy;
                direction[id] = apiCopyDirection(name);
            } else if (!collectiveKind(name).empty() || isUnsizedCollective(name)) {
                kind[id] = Collective;
            }
        }
    }
};

Evidence xprofRuntimeEvidence(const TraceStore& store, const TrackHosts& hosts) {
    Evidence ev;
    const XprofNames names(store);
    struct CallCopy {
        std::string direction;
        int64_t bytes = 0;
    };
    std::unordered_map<int64_t, CallCopy> callCopies;  // async calls' direction and size
    for (const TrackRow* plane : xprofRuntimePlanes(store)) {
        const bool gpu = plane->name.starts_with("/device:GPU:");
        const std::vector<const TrackRow*> lines = store.children(plane->id);
        const int64_t device =
            gpu ? std::atoll(plane->name.c_str() + std::string_view("/device:GPU:").size()) : -1;
        for (const TrackRow* line : lines) {
            if (line->slices == 0) continue;
            const int host = hosts.of(line->id);
            int64_t stream = -1;
            std::string streamDirection;
            if (gpu) {
                if (!line->name.starts_with("Stream #")) continue;
                stream = std::atoll(line->name.c_str() + 8);
                const auto open = line->name.find('(');
                if (open != std::string::npos) {
                    const std::string kind =
                        line->name.substr(open + 1, line->name.find(')', open) - open - 1);
                    streamDirection = xprofCopyDirection(kind);
                    if (kind.starts_with("Memcpy") && streamDirection.empty())
                        streamDirection = "?";  // MemcpyOther: a copy, direction from its call
                }
            }
            store.forEachChunk(line->id, [&](const std::vector<SliceItem>& chunk) {
                for (const SliceItem& s : chunk) {
                    if (s.kind != trace::ItemKind::Slice || s.name >= names.kind.size()) continue;
                    const XprofNames::Kind kind = names.kind[s.name];
                    const auto correlation = [&] {
                        return TrackHosts::scoped(host, argNumber(store, s.args, "correlation_id"));
                    };
                    if (gpu) {
                        const bool copy = kind == XprofNames::Copy || kind == XprofNames::Blit ||
                                          !streamDirection.empty();
                        if (!copy) {
                            if (kind == XprofNames::Collective) ++ev.unsizedCollectives;
                            continue;
                        }
                        std::string direction =
                            kind == XprofNames::Copy ? names.direction[s.name] : std::string();
                        if (direction.empty() && streamDirection != "?")
                            direction = streamDirection;
                        Activity act;
                        act.slice = s;
                        act.track = line->id;
                        act.host = host;
                        act.device = device;
                        act.stream = stream;
                        act.link = direction;
                        act.bytes =
                            std::max<int64_t>(0, detailField(memcpyDetails(store, s.args), "size"));
                        ev.activities.emplace_back(correlation(), std::move(act));
                        continue;
                    }
                    if (kind == XprofNames::Sync) {
                        ev.syncs[line->id].push_back(Call{s, line->id});
                        continue;
                    }
                    if (kind != XprofNames::Copy && kind != XprofNames::ApiCopy) continue;
                    const std::string details = memcpyDetails(store, s.args);
                    // XProf's CUDA calls state it; API names end in "Async".
                    const int64_t asyncField = detailField(details, "async");
                    const bool async = asyncField >= 0
                                           ? asyncField == 1
                                           : store.text(s.name).find("Async") != std::string::npos;
                    const int64_t id = correlation();
                    if (id < 0) continue;
                    if (!async) {
                        ev.synchronousCopies.insert(id);
                        continue;
                    }
                    ev.issues[id] = Call{s, line->id};
                    callCopies[id] = {names.direction[s.name],
                                      std::max<int64_t>(0, detailField(details, "size"))};
                }
            });
        }
    }
    // A ROCm blit kernel or a MemcpyOther copy takes its direction from its call, and a size
    // the device does not state from the call's; a copy no one states a size of is counted.
    std::erase_if(ev.activities, [&](auto& entry) {
        auto& [id, act] = entry;
        const auto call = callCopies.find(id);
        if (call != callCopies.end()) {
            if (act.link.empty()) act.link = call->second.direction;
            if (act.bytes == 0) act.bytes = call->second.bytes;
        }
        if (act.link.empty()) act.link = "copy";
        if (act.bytes > 0 || call == callCopies.end()) return false;
        ++ev.unsizedCopies;
        return true;
    });
    return ev;
}

}  // namespace stallscope::transfers::detail
