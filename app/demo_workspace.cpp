#include "app/demo_workspace.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <fstream>
#include <map>

#include "core/errors.h"
#include "core/profile_source.h"
#include "core/replay/generate.h"
#include "core/replay/jsonl_writer.h"
#include "core/sqlite.h"
#include "core/workspace.h"
#include "importers/import_service.h"

namespace stallscope {
namespace {

constexpr const char* kScenarios[] = {"allgather", "allgather-pinned", "matmul-starved",
                                      "fragmentation"};
// Measured and hand-made examples of the other kinds, so every view has something to show.
constexpr const char* kResources[] = {"noise-probe-demo.csv",     "cpi-demo.csv",
                                      "estimates-demo.csv",       "train-step-trace.json",
                                      "offload-before.xplane.pb", "offload-after.xplane.pb"};
// A multi-host run: its ranks are copied into a directory imported as one profile.
constexpr const char* kRunDirectory = "demo-run";
constexpr int kRunRanks = 4;

// Importers read files: a bundled input is copied next to the generated ones.
std::string copyResource(const std::string& resource, const std::string& path) {
    QFile in(QString::fromStdString(resource));
    if (!in.open(QIODevice::ReadOnly))
        throw Failure("the bundled demo file " + resource + " is missing");
    const QByteArray bytes = in.readAll();
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.constData(), bytes.size());
    if (!out) throw Failure(path + ": cannot write the demo file");
    return path;
}

// The profile name an import gives a file: its name without the last extension.
std::string profileNameOf(const std::string& fileName) {
    return fileName.substr(0, fileName.rfind('.'));
}

}  // namespace

void ensureDemoWorkspace(const std::string& storePath) {
    auto workspace = Workspace::open(storePath);
    if (!workspace->profiles().empty()) return;
    QTemporaryDir dir;
    if (!dir.isValid()) throw Failure("cannot create a temporary directory");
    const std::string directory = dir.path().toStdString();
    std::vector<std::string> files;
    std::map<std::string, std::string> sourceOfName;  // profile name -> what it came from
    for (const char* scenario : kScenarios) {
        const std::string path = directory + "/" + scenario + ".jsonl";
        std::ofstream out(path, std::ios::binary);
        replay::writeJsonl(replay::generateWorkload(scenario), out);
        out.close();
        if (!out) throw Failure(path + ": cannot write the demo workload");
        files.push_back(path);
        sourceOfName[scenario] = std::string("generated demo workload (") + scenario + ")";
    }
    for (const char* name : kResources) {
        const std::string resource = std::string(":/demo/") + name;
        files.push_back(copyResource(resource, directory + "/" + name));
        sourceOfName[profileNameOf(name)] = resource;
    }
    Progress progress;
    std::vector<ImportedProfile> imported =
        importFiles(*workspace, ImportRequest{files, "", ""}, progress);
    {  // The run last (an import of several inputs takes runs first).
        const std::string run = directory + "/" + kRunDirectory;
        if (!QDir().mkpath(QString::fromStdString(run)))
            throw Failure(run + ": cannot create the demo run's directory");
        for (int rank = 0; rank < kRunRanks; ++rank) {
            const std::string file = "rank-" + std::to_string(rank) + ".pt.trace.json";
            copyResource(std::string(":/demo/") + kRunDirectory + "/" + file, run + "/" + file);
        }
        for (ImportedProfile& profile :
             importFiles(*workspace, ImportRequest{{run}, "", ""}, progress))
            imported.push_back(std::move(profile));
        sourceOfName[kRunDirectory] = "generated demo run (4 Kineto ranks, rank 2 slow in step 3)";
    }
    // The temporary copies are deleted when this returns: name what they were made from.
    sql::Transaction transaction(workspace->db());
    for (const ImportedProfile& profile : imported) {
        const auto source = sourceOfName.find(profile.name);
        const std::optional<ProfileInfo> stored = workspace->profile(profile.id);
        if (source != sourceOfName.end() && stored)
            recordProfileSource(*workspace, profile.id, source->second, stored->sourceSize);
    }
    transaction.commit();
}

}  // namespace stallscope
