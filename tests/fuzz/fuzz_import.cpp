// libFuzzer entry point over one importer's real path: the input is written to a file (importers
// read files: decompression, peeking and hashing included), every detector looks at it, and the
// importer reads it into a workspace inside a transaction that is rolled back, so each run starts
// from the same empty workspace. The project's own input error (InputError) is the expected end
// of a bad input; anything else escaping, and any sanitizer report, is a finding.
//
// Chrome JSON is also read a second way: the windows the import's workers parse
// (EventPipeline) must give what one reader reading it all gives (events, end state, error);
// a difference aborts.
//
// Built once per format with STALLSCOPE_FUZZ_FORMAT (the --format name) and
// STALLSCOPE_FUZZ_SUFFIX (the file name's ending, which some detectors and importers look at).
#include <google/protobuf/stubs/logging.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "core/errors.h"
#include "core/import_buffers.h"
#include "core/input_stream.h"
#include "core/progress.h"
#include "core/sqlite.h"
#include "core/workspace.h"
#include "importers/chrome/event_pipeline.h"
#include "importers/import_service.h"

using namespace stallscope;

namespace {

struct State {
    std::string dir;
    std::string input;
    std::unique_ptr<Workspace> workspace;
    const Importer* importer = nullptr;
};

State& state() {
    static State s;
    return s;
}

// What a read of a Chrome JSON file gave: every event's fields, the end state, the error.
std::string readChrome(const std::string& path, bool windows) {
    std::string out;
    InputFile input(path);
    chrome::EventReader reader(input);
    auto add = [&out](const chrome::RawEvent& ev) {
        for (const std::string_view field :
             {ev.ph, ev.name, ev.cat, ev.id, ev.bp, ev.scope, ev.pid, ev.tid, ev.bindId, ev.args})
            out.append(field).push_back('|');
        out += std::to_string(ev.tsNs) + "." + std::to_string(ev.tsPs) + "|" +
               std::to_string(ev.durNs) + "." + std::to_string(ev.durPs) + "|" +
               std::to_string(ev.offset) + "|" + std::to_string(ev.repairs) + "\n";
    };
    try {
        if (windows) {
            chrome::EventPipeline pipeline(reader);
            while (const chrome::EventBatch* batch = pipeline.next())
                for (const chrome::RawEvent& ev : batch->events) add(ev);
        } else {
            chrome::RawEvent ev;
            while (reader.next(ev)) add(ev);
        }
    } catch (const InputError& e) {
        out += std::string("error: ") + e.what();
    }
    for (const auto& [key, value] : reader.topLevel()) out += key + "=" + value + ";";
    return out + reader.displayTimeUnit() + "|" + std::to_string(reader.missingClose()) + "|" +
           std::to_string(reader.trailingOffset());
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    State& s = state();
    // A directory of this process's own, on tmpfs when there is one: a file is written per run.
    // A crash or timeout skips the cleanup at exit, so directories of processes that are gone
    // are removed here.
    namespace fs = std::filesystem;
    const fs::path base = fs::is_directory("/dev/shm") ? "/dev/shm" : "/tmp";
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(base, ec)) {
        const std::string name = entry.path().filename().string();
        if (!name.starts_with("stallscope-fuzz-")) continue;
        const std::string pid = name.substr(16);
        const bool numeric =
            !pid.empty() && pid.find_first_not_of("0123456789") == std::string::npos;
        if (numeric && !fs::exists("/proc/" + pid, ec)) fs::remove_all(entry.path(), ec);
    }
    s.dir = (base / ("stallscope-fuzz-" + std::to_string(::getpid()))).string();
    fs::create_directories(s.dir);
    s.input = s.dir + "/input" + STALLSCOPE_FUZZ_SUFFIX;
    s.workspace = Workspace::open(s.dir + "/ws.sqlite");
    s.importer = findImporter(STALLSCOPE_FUZZ_FORMAT);
    // Small buffers: little to allocate per run, and the overflow paths (spilled runs, a
    // growing JSON window) taken on small inputs.
    importBuffers().traceRecords = 256;
    importBuffers().xprofTraceRecords = 256;
    importBuffers().jsonWindow = 4096;
    importBuffers().fileChunk = 4096;
    importBuffers().lineWindow = 16384;
    // The generated XSpace/replay parsers log every invalid UTF-8 string they refuse.
    google::protobuf::SetLogHandler(nullptr);
    if (!s.importer) std::abort();
    std::atexit([] { std::filesystem::remove_all(state().dir); });
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    State& s = state();
    {
        FILE* f = std::fopen(s.input.c_str(), "wb");
        if (!f) std::abort();
        if (size > 0 && std::fwrite(data, 1, size, f) != size) std::abort();
        std::fclose(f);
    }
    try {
        if (std::string_view(STALLSCOPE_FUZZ_FORMAT) == "chrome-json") {
            const std::string a = readChrome(s.input, true), b = readChrome(s.input, false);
            if (a != b) {
                std::fprintf(stderr, "WINDOWS:\n%s\nONE:\n%s\n", a.c_str(), b.c_str());
                std::abort();
            }
        }
        InputFile input(s.input);
        // Every detector sees the input, as `import` without --format does.
        const std::string head(input.peek(4096));
        Sniff sniff{s.input, head, input.compression(),
                    [&input](size_t n) { return input.peek(n); }};
        for (const Importer* importer : importers()) importer->detect(sniff);

        sql::Transaction rollback(s.workspace->db());  // never committed
        ProfileInfo info;
        info.name = "fuzz";
        info.kind = s.importer->kind();
        info.sourcePath = s.input;
        const int64_t id = s.workspace->insertProfile(info);
        Progress progress;
        ImportContext ctx{*s.workspace, input, progress, id};
        s.importer->run(ctx);
    } catch (const InputError&) {
        // The expected outcome for a bad file: a message naming the file and offset.
    }
    return 0;
}
