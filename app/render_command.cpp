// `render VIEW PROFILE [--against B] --out F.png [--size WxH] [--range FROM:TO]`
// (`compare` also takes `--op NAME` for traces and `--align-op NAME` for replays)
#include <QApplication>
#include <QImageWriter>
#include <filesystem>
#include <iostream>

#include "app/commands.h"
#include "core/errors.h"
#include "core/workspace.h"
#include "views/common/render.h"
#include "views/view_kinds.h"

namespace stallscope {

namespace {

double parseNumber(const std::string& text, const char* what) {
    try {
        size_t used = 0;
        const double v = std::stod(text, &used);
        if (used != text.size()) throw std::invalid_argument(text);
        return v;
    } catch (const std::exception&) {
        throw InputError(std::string(what) + ": '" + text + "' is not a number");
    }
}

// Drawing text needs a GUI application; without a display it runs offscreen.
void ensureGuiApplication() {
    if (QCoreApplication::instance()) return;
    if (qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY") &&
        qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    static int argc = 1;
    static char name[] = "stallscope";
    static char* argv[] = {name, nullptr};
    new QApplication(argc, argv);
}

}  // namespace

int runRender(const cli::Options& o) {
    const std::vector<std::string>& positional = o.positional;
    const std::string out = o.value("--out"), against = o.value("--against"),
                      size = o.value("--size"), range = o.value("--range"), op = o.value("--op"),
                      alignOp = o.value("--align-op");
    if (positional.size() != 2) throw InputError("render: give VIEW and PROFILE");
    if (out.empty()) throw InputError("render: --out F.png is required");
    RenderOptions options;
    options.op = op;
    options.alignOp = alignOp;
    if ((!op.empty() || !alignOp.empty()) && positional[0] != "compare")
        throw InputError("render: --op and --align-op apply to the compare view");
    if (!size.empty()) {
        const auto x = size.find('x');
        if (x == std::string::npos) throw InputError("--size takes WxH, not '" + size + "'");
        options.size = QSize(static_cast<int>(parseNumber(size.substr(0, x), "--size width")),
                             static_cast<int>(parseNumber(size.substr(x + 1), "--size height")));
        options.sizeGiven = true;
        if (options.size.width() < 64 || options.size.height() < 64 ||
            options.size.width() > 16384 || options.size.height() > 16384)
            throw InputError("--size must be between 64x64 and 16384x16384");
    }
    if (!range.empty()) {
        const auto colon = range.find(':');
        if (colon == std::string::npos)
            throw InputError("--range takes FROM:TO, not '" + range + "'");
        options.from = parseNumber(range.substr(0, colon), "--range start");
        options.to = parseNumber(range.substr(colon + 1), "--range end");
        if (!(*options.to > *options.from)) throw InputError("--range end must exceed its start");
    }
    auto workspace = Workspace::openExisting(o.store);
    const ProfileInfo profile = workspace->resolveProfile(positional[1]);
    if (!against.empty()) options.against = workspace->resolveProfile(against);
    ensureGuiApplication();
    const QImage image = renderView(positional[0], *workspace, profile, options);
    QImageWriter writer(QString::fromStdString(out));
    if (!writer.write(image))
        throw InputError(out + ": cannot write image: " + writer.errorString().toStdString());
    return 0;
}

}  // namespace stallscope
