// Noise-injection commands: `absorption PROFILE --json` and `noise-probe --out F.csv`.
#include <unistd.h>

#include <QJsonDocument>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "app/commands.h"
#include "app/terminal.h"
#include "core/errors.h"
#include "core/kinds.h"
#include "core/noise/absorption.h"
#include "core/noise/probe.h"
#include "core/progress.h"
#include "core/workspace.h"

namespace stallscope {

namespace {

std::string number(double v) {
    return QString::number(v, 'g', 6).toStdString();
}

}  // namespace

int runAbsorption(const cli::Options& o) {
    const bool json = o.has("--json");
    auto workspace = Workspace::openExisting(o.store);
    const ProfileInfo profile = workspace->resolveProfile(o.only());
    if (profile.kind != kinds::kNoise)
        throw InputError("absorption: profile '" + profile.name + "' is a " + profile.kind +
                         " profile, not a noise profile");
    const noise::AbsorptionReport report = noise::analyzeProfile(*workspace, profile.id);
    if (json) {
        std::cout << QJsonDocument(noise::absorptionJson(report))
                         .toJson(QJsonDocument::Indented)
                         .toStdString();
        return 0;
    }
    std::printf("%-28s %-18s %-12s %8s %-12s %8s %8s %s\n", "machine", "region", "mode", "abs_raw",
                "interval", "abs_rel", "k2", "params");
    std::vector<std::string> notes;
    for (const noise::Curve& c : report.curves) {
        const std::string absRaw = (c.fit.degraded ? "" : ">=") + number(c.fit.k1);
        // The k1 interval; "?" marks a knee that could not be placed (its note follows).
        const std::string interval = number(c.fit.k1Low) + "-" +
                                     (c.fit.k1High ? number(*c.fit.k1High) : std::string("")) +
                                     (c.fit.uncertain ? "?" : "");
        std::printf("%-28.28s %-18.18s %-12s %8s %-12s %8s %8s %s\n", c.machine.c_str(),
                    c.region.c_str(), c.mode.c_str(), absRaw.c_str(), interval.c_str(),
                    c.absRel() ? number(*c.absRel()).c_str() : "-",
                    c.fit.k2 ? number(*c.fit.k2).c_str() : "none",
                    noise::paramsLabel(c.params).c_str());
        if (c.fit.uncertain)
            notes.push_back(c.region + " " + c.mode +
                            (c.params.empty() ? "" : " (" + noise::paramsLabel(c.params) + ")") +
                            ": " + c.fit.note);
    }
    for (const std::string& note : notes) std::printf("? %s\n", note.c_str());
    for (const noise::Classification& cl : report.classifications)
        std::printf("%s / %s%s: %s%s (%s)\n", cl.machine.c_str(), cl.region.c_str(),
                    cl.params.empty() ? "" : (" " + noise::paramsLabel(cl.params)).c_str(),
                    noise::className(cl.cls), cl.uncertain ? " (uncertain)" : "",
                    cl.evidence.text.c_str());
    return 0;
}

int runNoiseProbe(const cli::Options& o) {
    noise::probe::ProbeOptions options;
    const std::string out = o.value("--out");
    options.quick = o.has("--quick");
    if (const std::string v = o.value("--threads"); !v.empty()) {
        try {
            size_t used = 0;
            options.threads = std::stoi(v, &used);
            if (used != v.size()) throw std::invalid_argument(v);
        } catch (const std::exception&) {
            throw InputError("--threads: '" + v + "' is not a whole number");
        }
        if (options.threads < 1 || options.threads > 256)
            throw InputError("--threads must be in 1..256");
    }
    if (!o.positional.empty())
        throw InputError("unknown argument " + o.positional.front() + " for 'noise-probe'");
    if (out.empty()) throw InputError("noise-probe: --out F.csv is required");
    // Write next to the target and rename at the end: an interrupted probe leaves no half file.
    const std::string partial = out + ".partial";
    {
        std::ofstream csv(partial);
        if (!csv) throw InputError(out + ": cannot open for writing");
        csv.precision(9);
        Progress progress(terminalProgressBar());
        const CancelOnInterrupt interrupt(progress);
        try {
            noise::probe::runProbe(options, csv, progress);
        } catch (...) {
            std::remove(partial.c_str());
            throw;
        }
        if (!csv) throw Failure(out + ": write failed");
    }
    if (std::rename(partial.c_str(), out.c_str()) != 0)
        throw Failure(out + ": cannot rename " + partial);
    std::cout << out << '\n';
    return 0;
}

}  // namespace stallscope
