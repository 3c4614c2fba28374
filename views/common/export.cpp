#include "views/common/export.h"

#include <QFile>
#include <QFileInfo>
#include <QMenu>
#include <QMessageBox>
#include <QPainter>
#include <QSettings>
#include <QSvgGenerator>
#include <QToolButton>

#include "core/open_workspaces.h"
#include "views/common/file_dialogs.h"

namespace stallscope::exporting {

namespace {

constexpr const char* kLastFolderKey = "export/lastFolder";

QString filterFor(Format format) {
    switch (format) {
        case Format::Csv:
            return QObject::tr("CSV files (*.csv)");
        case Format::Png:
            return QObject::tr("PNG images (*.png)");
        case Format::Svg:
            return QObject::tr("SVG images (*.svg)");
    }
    return {};
}

void setError(QString* error, const QString& text) {
    if (error) *error = text;
}

// Writing over the open workspace would destroy it (and opening it drops its locks).
bool refusedAsWorkspace(const QString& path, QString* error) {
    if (!isOpenWorkspaceFile(path.toStdString())) return false;
    setError(error, QObject::tr("%1 is the open workspace; not overwriting it").arg(path));
    return true;
}

}  // namespace

QString csvField(const QString& text) {
    if (!text.contains(',') && !text.contains('"') && !text.contains('\n') && !text.contains('\r'))
        return text;
    QString quoted = text;
    quoted.replace('"', QStringLiteral("\"\""));
    return '"' + quoted + '"';
}

QString csvRow(const QStringList& fields) {
    QStringList quoted;
    quoted.reserve(fields.size());
    for (const QString& field : fields) quoted << csvField(field);
    return quoted.join(',');
}

bool writeTextFile(const QString& path, const QString& text, QString* error) {
    if (refusedAsWorkspace(path, error)) return false;
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate | QIODevice::Text)) {
        setError(error, QObject::tr("Cannot write %1: %2").arg(path, file.errorString()));
        return false;
    }
    const QByteArray bytes = text.toUtf8();
    if (file.write(bytes) != bytes.size() || !file.flush()) {
        setError(error, QObject::tr("Cannot write %1: %2").arg(path, file.errorString()));
        return false;
    }
    return true;
}

bool writeImageFile(const QString& path, const QImage& image, QString* error) {
    if (refusedAsWorkspace(path, error)) return false;
    if (image.isNull() || !image.save(path)) {
        setError(error, QObject::tr("Cannot write %1").arg(path));
        return false;
    }
    return true;
}

bool writeSvgFile(const QString& path, QSize size, const PaintFunction& paint, const QString& title,
                  QString* error) {
    if (refusedAsWorkspace(path, error)) return false;
    QSvgGenerator generator;
    generator.setFileName(path);
    generator.setSize(size);
    generator.setViewBox(QRect(QPoint(0, 0), size));
    if (!title.isEmpty()) generator.setTitle(title);
    QPainter painter;
    if (!painter.begin(&generator)) {
        setError(error, QObject::tr("Cannot write %1").arg(path));
        return false;
    }
    paint(painter, QRectF(QPointF(0, 0), QSizeF(size)));
    if (!painter.end() || !QFileInfo(path).exists()) {
        setError(error, QObject::tr("Cannot write %1").arg(path));
        return false;
    }
    return true;
}

QString askSavePath(QWidget* parent, const QString& title, const QString& suggestedName,
                    Format format) {
    QSettings settings;
    const QString folder = settings.value(kLastFolderKey).toString();
    const QString start = folder.isEmpty() ? suggestedName : folder + '/' + suggestedName;
    const QString path = dialogs::askSaveFile(parent, title, start, filterFor(format));
    if (!path.isEmpty()) settings.setValue(kLastFolderKey, QFileInfo(path).absolutePath());
    return path;
}

void runExport(QWidget* parent, const ExportTarget& target, const Report& report) {
    QString title = target.label;
    title.remove(QStringLiteral("…"));
    const QString path = askSavePath(parent, title, target.suggestedName, target.format);
    if (path.isEmpty()) return;
    QString error;
    const bool ok = target.write(path, &error);
    if (ok) {
        if (report) report(QObject::tr("Wrote %1").arg(QFileInfo(path).fileName()), false);
        return;
    }
    if (error.isEmpty()) error = QObject::tr("Cannot write %1").arg(path);
    if (report)
        report(error, true);
    else
        QMessageBox::warning(parent, QObject::tr("Export failed"), error);
}

QToolButton* exportButton(QWidget* parent, std::vector<ExportTarget> targets,
                          const Report& report) {
    auto* button = new QToolButton(parent);
    button->setText(QObject::tr("Export"));
    button->setToolTip(QObject::tr("Export what this view shows as CSV, PNG or SVG"));
    button->setPopupMode(QToolButton::InstantPopup);
    auto* menu = new QMenu(button);
    for (ExportTarget& target : targets) {
        QAction* action = menu->addAction(target.label);
        QObject::connect(action, &QAction::triggered, button,
                         [parent, target, report] { runExport(parent, target, report); });
    }
    button->setMenu(menu);
    return button;
}

}  // namespace stallscope::exporting
