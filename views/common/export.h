#pragma once

// One way to export what a view shows: CSV text, PNG and SVG images. Views describe what they can
// export (ExportTarget) and the kit asks for the path (remembering the last folder), writes the
// file and reports the outcome in one place.

#include <QImage>
#include <QRectF>
#include <QSize>
#include <QString>
#include <QStringList>
#include <functional>
#include <vector>

class QPainter;
class QToolButton;
class QWidget;

namespace stallscope::exporting {

// A CSV field (RFC 4180): quoted when it holds a comma, quote or line break.
QString csvField(const QString& text);
// Fields joined by commas, each quoted as needed; no line end.
QString csvRow(const QStringList& fields);

// Writes `text` (UTF-8) to `path`. On failure returns false and, when given, sets `error` to a
// sentence naming the file and the reason.
bool writeTextFile(const QString& path, const QString& text, QString* error = nullptr);
// Writes `image` as PNG (or the format the suffix names).
bool writeImageFile(const QString& path, const QImage& image, QString* error = nullptr);
// Records what `paint` draws into an SVG document of `size` at `path`.
using PaintFunction = std::function<void(QPainter&, const QRectF&)>;
bool writeSvgFile(const QString& path, QSize size, const PaintFunction& paint,
                  const QString& title = {}, QString* error = nullptr);

enum class Format { Csv, Png, Svg };

// Something a view can export: a menu entry, the file name offered and how to write it.
struct ExportTarget {
    QString label;  // menu text, e.g. "Op deltas as CSV…"
    Format format = Format::Csv;
    QString suggestedName;  // e.g. "op-deltas.csv"
    // Writes the file; returns false with `error` set when it cannot.
    std::function<bool(const QString& path, QString* error)> write;
};

// Asks where to save (a save dialog in the last export folder, with `suggestedName` and the
// format's filter). Returns an empty string when the user cancels.
QString askSavePath(QWidget* parent, const QString& title, const QString& suggestedName,
                    Format format);

// Runs one target: asks for the path, writes, and reports. `report` receives the outcome
// ("Wrote op-deltas.csv" or the error); without it a failure shows a warning box.
using Report = std::function<void(const QString& message, bool isError)>;
void runExport(QWidget* parent, const ExportTarget& target, const Report& report = {});

// An "Export" tool button with a menu of `targets`.
QToolButton* exportButton(QWidget* parent, std::vector<ExportTarget> targets,
                          const Report& report = {});

}  // namespace stallscope::exporting
