#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/input_stream.h"
#include "core/progress.h"
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
