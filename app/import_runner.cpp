#include "app/import_runner.h"

#include <QElapsedTimer>
#include <QFileInfo>
#include <QtConcurrent>
#include <exception>
#include <mutex>

#include "core/errors.h"
#include "core/progress.h"
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

ImportRunner::ImportRunner(QObject* parent) : QObject(parent) {
    pool_.setMaxThreadCount(1);
    connect(&watcher_, &QFutureWatcher<Outcome>::finished, this, &ImportRunner::onWorkerFinished);
}

ImportRunner::~ImportRunner() {
    cancel();
    waitForFinished();
}

bool ImportRunner::start(const QString& workspacePath, const QStringList& files,
                         const QString& name, const QString& format) {
    if (running_) return false;
    running_ = true;

    // The listener runs on the worker; it posts to this object, which outlives the worker
    // because the destructor waits for it.
    struct Throttle {
        QElapsedTimer sinceLast;
        std::string lastStage;
    };
    auto throttle = std::make_shared<Throttle>();
    progress_ =
        std::make_shared<Progress>([this, throttle](double fraction, const std::string& stage) {
            const bool stageChanged = stage != throttle->lastStage;
            if (!stageChanged && fraction < 1.0 && throttle->sinceLast.isValid() &&
                throttle->sinceLast.elapsed() < kMinProgressIntervalMs)
                return;
            throttle->sinceLast.start();
            throttle->lastStage = stage;
            const QString stageText = QString::fromStdString(stage);
            QMetaObject::invokeMethod(
                this,
                [this, fraction, stageText] {
                    if (running_) emit progressChanged(fraction, stageText);
                },
                Qt::QueuedConnection);
        });

    ImportRequest request;
    for (const QString& file : files) request.files.push_back(file.toStdString());
    request.name = name.toStdString();
    request.format = format.toStdString();

    std::shared_ptr<Progress> progress = progress_;
    const std::string path = workspacePath.toStdString();
    watcher_.setFuture(QtConcurrent::run(&pool_, [path, request, progress]() -> Outcome {
        Outcome outcome;
        try {
            std::unique_ptr<Workspace> workspace = Workspace::open(path);
            const std::vector<ImportedProfile> imported =
                stallscope::importFiles(*workspace, request, *progress);
            outcome.ok = true;
            outcome.message = describeImported(imported);
            for (const ImportedProfile& profile : imported) outcome.profileIds << profile.id;
        } catch (const Cancelled&) {
            outcome.cancelled = true;
            outcome.message = tr("Import cancelled; nothing was stored");
        } catch (const std::exception& error) {
            // InputError and Failure messages already name the file and line.
            outcome.message = QString::fromStdString(error.what());
        }
        return outcome;
    }));
    emit started(files);
    return true;
}

void ImportRunner::cancel() {
    if (running_ && progress_) progress_->cancel();
}

void ImportRunner::waitForFinished() {
    watcher_.waitForFinished();
}

void ImportRunner::onWorkerFinished() {
    lastOutcome_ = watcher_.result();
    running_ = false;
    progress_.reset();
    emit finished(lastOutcome_.ok, lastOutcome_.message, lastOutcome_.profileIds);
}

}  // namespace stallscope
