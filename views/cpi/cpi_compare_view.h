#pragma once

// Before/after of two CPI-stack profiles (issue 8 "other kinds"): the summary line, CPI stacks of
// A and B side by side per kernel with per-category deltas, delta tables with CSV export, and the
// headless render.

#include <QImage>
#include <QRectF>
#include <QWidget>
#include <vector>

#include "core/compare/kind_compare.h"
#include "core/cpi/cpi.h"
#include "core/workspace.h"
#include "views/common/async_job.h"
#include "views/common/render.h"

class QComboBox;
class QLabel;
class QTabWidget;
class QTableWidget;

namespace stallscope {

struct CpiCompareData {
    cpi::CpiData a, b;
    CpiComparison raw, classes;  // raw categories, and folded into GSI classes
};
// Reads both profiles' stacks and compares them (SQL: off the GUI thread).
CpiCompareData loadCpiCompare(const Workspace& workspace, int64_t a, int64_t b);
CpiCompareData compareCpiData(cpi::CpiData a, cpi::CpiData b);

// The matched stacks as one CpiData whose sources are "A·<source>" and "B·<source>", so the CPI
// stack chart draws A's and B's bars next to each other in each kernel's group.
cpi::CpiData sideBySideStacks(const CpiComparison& c);

// One bar of the per-category delta chart.
struct CategoryDeltaBar {
    std::string category;
    double a = 0, b = 0;
    QRectF rect;  // empty when the delta is 0
};
// Δ cycles (B − A) per category of one matched stack (`stack` indexes c.stacks) or, with
// stack = -1, summed over every kernel of the primary source: horizontal bars left (fewer
// cycles) or right (more) of a zero line, in the category's colour. Returns the bars drawn.
std::vector<CategoryDeltaBar> paintCategoryDeltas(QPainter& painter, const QRectF& area,
                                                  const CpiComparison& c, int stack = -1);

class CpiCompareView : public QWidget {
    Q_OBJECT
  public:
    enum class Table { Kernels, Categories, Sources };
    CpiCompareView(const ProfileInfo& a, const ProfileInfo& b, const QString& workspacePath,
                   QWidget* parent = nullptr);
    explicit CpiCompareView(CpiCompareData data, QWidget* parent = nullptr);

    bool isLoaded() const { return loaded_; }
    void setClasses(bool classes);
    bool classes() const { return classes_; }
    // Which stack the delta chart shows (index into current().stacks, -1: primary source sum).
    void setDeltaStack(int stack);
    int deltaStack() const { return deltaStack_; }
    const CpiComparison& current() const;
    QString summary() const;
    QTableWidget* kernelTable() const { return kernels_; }
    QTableWidget* categoryTable() const { return categories_; }
    QTableWidget* sourceTable() const { return sources_; }
    QString csv(Table table) const;
    bool exportCsv(Table table, const QString& path, QString* error = nullptr) const;
    // The charts as drawn in the view and by `render compare`.
    void paintCharts(QPainter& painter, const QRectF& area) const;

  signals:
    void loaded();

  private:
    void showLoadError(const QString& error);
    async::JobSlot loadJob_{this, [this](const QString& error) { showLoadError(error); }};
    void build();
    void showData(CpiCompareData data);
    void refresh();

    CpiCompareData data_;
    cpi::CpiData sideBySide_;
    bool loaded_ = false, classes_ = false;
    int deltaStack_ = -1;
    QLabel* summary_ = nullptr;
    QLabel* unmatched_ = nullptr;
    QComboBox* mode_ = nullptr;
    QWidget* charts_ = nullptr;
    QTabWidget* tabs_ = nullptr;
    QTableWidget* kernels_ = nullptr;
    QTableWidget* categories_ = nullptr;
    QTableWidget* sources_ = nullptr;
};

QImage renderCpiCompare(const Workspace& workspace, const ProfileInfo& profile,
                        const RenderOptions& options);

}  // namespace stallscope
