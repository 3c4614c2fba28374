#include "app/import_runner.h"
#include "views/common/async_job.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QPointer>
#include <exception>

#include "core/errors.h"
#include "core/kinds.h"
#include "core/progress.h"
#include "core/trace/step_registration.h"
#include "core/workspace.h"
#include "importers/import_service.h"

namespace stallscope {
namespace {

QString describeImported(const std::vector<ImportedProfile>& imported) {
    QStringList names;
    for (const ImportedProfile& profile : imported)
        names << QStringLiteral("%1 (%2)").arg(QString::fromStdString(profile.name),
                                               QString::fromStdString(profile.kind));
    if (imported.size() == 1) return ImportRunner::tr("Imported %1").arg(names.front());
    return ImportRunner::tr("Imported %1 profiles: %2")
        .arg(imported.size())
        .arg(names.join(QStringLiteral(", ")));
}

}  // namespace

ImportRunner::ImportRunner(QObject* parent) : QObject(parent), job_(this) {}

ImportRunner::~ImportRunner() {
    cancel();
}

bool ImportRunner::start(const QString& workspacePath, const QStringList& files,
                         const QString& name, const QString& format, bool asOneRun) {
    if (running_) return false;
    running_ = true;
    currentFiles_ = files;

    // The listener runs on the worker, which may outlive this runner: it posts to the
    // application, and the runner is looked up again on the GUI thread.
    struct Throttle {
        QElapsedTimer sinceLast;
        std::string lastStage;
    };
    auto throttle = std::make_shared<Throttle>();
    const QPointer<ImportRunner> self(this);
    progress_ =
        std::make_shared<Progress>([self, throttle](double fraction, const std::string& stage) {
            const bool stageChanged = stage != throttle->lastStage;
            if (!stageChanged && fraction < 1.0 && throttle->sinceLast.isValid() &&
                throttle->sinceLast.elapsed() < kMinProgressIntervalMs)
                return;
            throttle->sinceLast.start();
            throttle->lastStage = stage;
            const QString stageText = QString::fromStdString(stage);
            QMetaObject::invokeMethod(
                QCoreApplication::instance(),
                [self, fraction, stageText] {
                    if (self && self->running_) emit self->progressChanged(fraction, stageText);
                },
                Qt::QueuedConnection);
        });

    ImportRequest request;
    for (const QString& file : files) request.files.push_back(file.toStdString());
    request.name = name.toStdString();
    request.format = format.toStdString();
    request.asOne = asOneRun;

    std::shared_ptr<Progress> progress = progress_;
    const std::string path = workspacePath.toStdString();
    job_.start(
        [path, request, progress]() -> Outcome {
            Outcome outcome;
            try {
                std::unique_ptr<Workspace> workspace = Workspace::open(path);
                const std::vector<ImportedProfile> imported =
                    stallscope::importFiles(*workspace, request, *progress);
                outcome.ok = true;
                outcome.message = describeImported(imported);
                for (const ImportedProfile& profile : imported) outcome.profileIds << profile.id;
                // The step breakdown now, while the user waits for the import anyway, so the
                // trace's overview opens complete. It is stored on its own: the import has
                // landed whatever happens here (the view computes it then).
                for (const ImportedProfile& profile : imported) {
                    if (profile.kind != kinds::kTrace) continue;
                    try {
                        progress->report(1.0, "analysing steps of " + profile.name);
                        trace::loadOrAnalyzeSteps(*workspace, profile.id);
                    } catch (const std::exception&) {
                    }
                }
            } catch (const Cancelled&) {
                outcome.cancelled = true;
                outcome.message = tr("Import cancelled; nothing was stored");
            } catch (const std::exception& error) {
                // InputError and Failure messages already name the file and line.
                outcome.message = QString::fromStdString(error.what());
            }
            return outcome;
        },
        [this](Outcome outcome) { onWorkerFinished(outcome); });
    emit started(files);
    return true;
}

void ImportRunner::enqueue(const QString& workspacePath, const QStringList& files, bool asOneRun) {
    if (running_)
        queue_.append({workspacePath, files, asOneRun});
    else
        start(workspacePath, files, {}, {}, asOneRun);
}

void ImportRunner::cancel() {
    queue_.clear();
    if (running_ && progress_) progress_->cancel();
}

void ImportRunner::onWorkerFinished(const Outcome& outcome) {
    lastOutcome_ = outcome;
    running_ = false;
    progress_.reset();
    currentFiles_.clear();
    emit finished(lastOutcome_.ok, lastOutcome_.message, lastOutcome_.profileIds);
    if (!running_ && !queue_.isEmpty()) {
        const Queued next = queue_.takeFirst();
        start(next.workspacePath, next.files, {}, {}, next.asOneRun);
    }
}

}  // namespace stallscope
