#pragma once

#include <QJsonObject>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/input_stream.h"
#include "core/progress.h"
#include "core/trace/trace_writer.h"
#include "core/workspace.h"

namespace stallscope {

// What an importer sees of a file when asked whether it can read it.
struct Sniff {
    std::string path;
    std::string_view head;  // first decompressed bytes (up to 4 KiB)
    Compression compression = Compression::None;
    // The first n decompressed bytes (fewer at the end of the file), for a detector that must
    // read further than `head` to see the document's structure; empty when not available. The
    // view is valid until the next call.
    std::function<std::string_view(size_t n)> readAhead;
};

struct ImportContext {
    Workspace& workspace;
    InputFile& input;
    Progress& progress;
    int64_t profileId;
    std::string metadataJson = "{}";  // the importer may set a JSON object describing the profile
};

// One host's (or rank's) file of a multi-host run, read into a recording of its own (on a
// worker thread) that is replayed into the writer all hosts share.
struct HostImportContext {
    trace::TraceSink& sink;
    InputFile& input;
    Progress& progress;
    uint32_t hostTrack;    // the file's top-level tracks go below this one
    int64_t firstPid = 0;  // process ids of the file continue from here (XProf plane indices)
    // Filled by the importer:
    QJsonObject metadata;  // what run() would record for the file alone
    int64_t pidsUsed = 0;  // process ids taken from firstPid on
    std::string hostName;  // the name the file gives its host ("" when it names none)
    // Where the file's times sit on a clock every host shares, when the file says: the time to
    // add to its timestamps (XProf profile_start_time, Kineto baseTimeNanoseconds).
    std::optional<int64_t> clockBaseNs;
    std::string clockSource;
    // Set by importers whose process ids come from firstPid: moves the host's ids to start at
    // another first id (the run reads hosts in parallel, each from firstPid 0, and places them
    // once the hosts before are known). Called on the sink the host was read into.
    std::function<void(trace::TraceSink& sink, QJsonObject& metadata, int64_t firstPid)>
        renumberPids;
};

class Importer {
  public:
    virtual ~Importer() = default;
    virtual std::string format() const = 0;  // --format value, e.g. "replay-jsonl"
    virtual std::string kind() const = 0;    // profile kind, e.g. "replay"
    virtual std::string description() const = 0;
    // 0: cannot read it; higher: more certain (content match beats extension match).
    virtual int detect(const Sniff& sniff) const = 0;
    // Reads ctx.input into ctx.workspace under ctx.profileId. Runs inside the import's
    // transaction; throws InputError (naming file and line/offset) on bad input.
    virtual void run(ImportContext& ctx) const = 0;
    // Other files run() reads along with `path` into the same profile (e.g. the sibling ranks of
    // a Chakra trace set), from the name alone (the file is not opened). An import given several
    // of them makes one profile, not one each.
    virtual std::vector<std::string> companions(const std::string& /*path*/) const { return {}; }
    // Whether files of this format can be hosts of one multi-host run (readHost).
    virtual bool readsHosts() const { return false; }
    // Reads one host's file below ctx.hostTrack; the caller owns the sink. May run on several
    // threads at once (one file each): an importer keeps no mutable state outside ctx.
    virtual void readHost(HostImportContext& ctx) const;
};

// Version of the JSON parser the importers use (simdjson), for the About box.
std::string jsonParserVersion();

// The formats Stallscope reads, in detection order.
const std::vector<const Importer*>& importers();
const Importer* findImporter(std::string_view format);
// Throws InputError naming the file when no importer recognises it.
const Importer* detectImporter(const Sniff& sniff);

struct ImportRequest {
    std::vector<std::string> files;
    std::string name;    // profile name; default: the file name without extensions
    std::string format;  // empty: detect
    // All files are the hosts (ranks) of one run: one trace profile with a host level (a
    // directory among `files` is always one run of its own).
    bool asOne = false;
    // Write through a rollback journal when the workspace is this connection's alone and the
    // inputs are large (DirectWrites): the command line, where nobody reads beside the import.
    bool directWrites = false;
};

struct ImportedProfile {
    int64_t id = 0;
    std::string kind;
    std::string name;
};

// Imports every file of the request in one transaction: on any error or cancellation nothing
// is stored and the exception propagates (InputError, Cancelled, Failure).
std::vector<ImportedProfile> importFiles(Workspace& workspace, const ImportRequest& request,
                                         Progress& progress);

}  // namespace stallscope
