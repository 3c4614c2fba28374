#pragma once

// The frame the table-kind views share (CPI stacks, cross-fidelity estimates): a tool bar (the
// view's own controls, Export, a status line), two charts stacked on the left, tables in tabs on
// the right, and the profile loaded off the GUI thread. Exports (PNG/SVG) draw with the view's
// paintAll, the same function `render` uses.

#include <QImage>
#include <QList>
#include <QRectF>
#include <QSize>
#include <QString>
#include <QWidget>

#include "core/workspace.h"
#include "views/common/async_job.h"
#include "views/common/export.h"

class QAbstractItemModel;
class QHBoxLayout;
class QLabel;
class QPainter;
class QSplitter;
class QTabWidget;
class QTableView;

namespace stallscope {

class ChartTablesFrame : public QWidget {
    Q_OBJECT
  public:
    bool isLoaded() const { return loaded_; }
    QString statusText() const;

    virtual bool exportCsv(const QString& path, QString* error = nullptr) const = 0;
    bool exportPng(const QString& path) const;
    bool exportSvg(const QString& path) const;
    // The charts as exported (white background, exportSize()).
    QImage exportImage() const;
    QSize exportSize() const { return exportSize_; }

  signals:
    void loaded();

  protected:
    // `exportTitle` names the SVG document ("CPI stacks: <profile>"); `csvLabel` the CSV menu
    // entry's file ("cpi-stacks.csv").
    ChartTablesFrame(const ProfileInfo& profile, QString exportTitle, QSize exportSize,
                     QWidget* parent);

    // The view's own controls go here (left of Export and the status line).
    void addToolBarWidget(QWidget* widget);
    // Adds Export (CSV of `csvName`, PNG, SVG) and the status line after the view's controls.
    void finishToolBar(const QString& csvName);
    // The charts on the left: `top` above `bottom`, in `topShare` of 1,000 of the height.
    void setCharts(QWidget* top, QWidget* bottom, int topShare);
    // A sortable, read-only table of `model` in a new tab.
    QTableView* addTable(QAbstractItemModel* model, const QString& title);
    QTabWidget* tabs() const { return tabs_; }
    void setStatus(const QString& text);

    // Loads the profile's data on the thread pool (`load` gets a read-only workspace) and hands
    // it to `show` on the GUI thread, then emits loaded(). A failure shows in the status line.
    template <typename Load, typename Show>
    void startLoading(const QString& workspacePath, Load load, Show show) {
        const std::string path = workspacePath.toStdString();
        const ProfileInfo profile = profile_;
        loadJob_.start(
            [path, profile, load = std::move(load)]() {
                auto workspace = Workspace::open(path, Workspace::Mode::ReadOnly);
                return load(*workspace, profile);
            },
            [this, show = std::move(show)](auto data) {
                loaded_ = true;
                show(std::move(data));
                emit loaded();
            });
    }

    virtual void paintAll(QPainter& painter, const QRectF& area) const = 0;

    const ProfileInfo profile_;

  private:
    void loadFailed(const QString& message);

    QString exportTitle_;
    QSize exportSize_;
    bool loaded_ = false;
    QHBoxLayout* toolBar_ = nullptr;
    QLabel* status_ = nullptr;
    QSplitter* split_ = nullptr;
    QSplitter* charts_ = nullptr;
    QTabWidget* tabs_ = nullptr;
    async::JobSlot loadJob_;
};

}  // namespace stallscope
