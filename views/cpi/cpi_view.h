#pragma once

#include <QAbstractTableModel>
#include <QImage>
#include <QList>
#include <QWidget>
#include <memory>

#include "core/cpi/cpi.h"
#include "core/workspace.h"
#include "views/common/chart_tables_frame.h"
#include "views/common/render.h"
#include "views/common/suggestion_item.h"
#include "views/cpi/cpi_charts.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QStandardItemModel;
class QTabWidget;
class QTableView;

namespace stallscope {

// Everything the CPI view shows, computed on a worker thread.
struct CpiViewData {
    cpi::CpiData raw;
    cpi::CpiData classes;
    cpi::MapeReport mape;
    std::vector<cpi::CpiSuggestion> suggestions;
    cpi::MetricTable metrics;  // every kernel's stored metrics (Nsight Compute, GPGPU-Sim, Sniper)
    QString notice;
};

// Kernel x metric table over a MetricTable: one row per (kernel, source), one column per metric
// with its unit in the header; numeric columns sort by value, absent cells last.
class KernelMetricModel : public QAbstractTableModel {
    Q_OBJECT
  public:
    explicit KernelMetricModel(QObject* parent = nullptr);
    void setTable(const cpi::MetricTable* table);
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;
    void sort(int column, Qt::SortOrder order = Qt::AscendingOrder) override;
    // A row per metric (metric, unit, then a column per kernel) instead of a row per kernel.
    void setTransposed(bool transposed);
    bool transposed() const { return transposed_; }

  private:
    void resetOrder();
    const cpi::MetricTable* table_ = nullptr;
    bool transposed_ = false;
    std::vector<size_t> order_;  // display row -> table row (a kernel's, or a metric's)
};

// Reads a profile's stacks and analyses them (SQL: not on the GUI thread).
CpiViewData loadCpiViewData(const Workspace& workspace, const ProfileInfo& profile);

// The stacked-bar chart: paints with charts::paintStackChart and shows the hovered segment's
// cycles and share as a tooltip.
class CpiStackChart : public QWidget {
    Q_OBJECT
  public:
    explicit CpiStackChart(QWidget* parent = nullptr);
    void setData(const cpi::CpiData* data, bool normalized);
    // A line under the chart's title (the profile's notice).
    void setNotice(const QString& notice);
    // Tooltip text at a point of the widget; empty over no bar.
    QString hoverText(const QPointF& point) const;
    const std::vector<charts::StackSegment>& segments() const { return segments_; }

  protected:
    void paintEvent(QPaintEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;

  private:
    const cpi::CpiData* data_ = nullptr;
    bool normalized_ = false;
    QString notice_;
    std::vector<charts::StackSegment> segments_;
};

class CpiMapeChart : public QWidget {
    Q_OBJECT
  public:
    explicit CpiMapeChart(QWidget* parent = nullptr);
    void setData(const cpi::MapeReport* mape, std::vector<std::string> models);

  protected:
    void paintEvent(QPaintEvent* event) override;

  private:
    const cpi::MapeReport* mape_ = nullptr;
    std::vector<std::string> models_;
};

// CPI stacks of one profile: stacked bars per kernel (hw and each model side by side), raw
// categories or GSI classes, absolute or normalized, a MAPE panel, sortable tables, export.
class CpiView : public ChartTablesFrame {
    Q_OBJECT
  public:
    CpiView(const ProfileInfo& profile, const QString& workspacePath, QWidget* parent = nullptr);
    ~CpiView() override;

    void setClasses(bool classes);
    void setNormalized(bool normalized);
    bool classes() const { return classes_; }
    bool normalized() const { return normalized_; }

    CpiStackChart* stackChart() const { return stackChart_; }
    QTableView* stacksTable() const { return stacksTable_; }
    QTableView* mapeTable() const { return mapeTable_; }
    QTableView* metricsTable() const { return metricsTable_; }
    KernelMetricModel* metricsModel() const { return metricsModel_; }
    QCheckBox* metricsAsRows() const { return metricsAsRows_; }
    const CpiViewData& viewData() const { return *data_; }
    // Up to this many kernels, the metrics table starts with a row per metric.
    static constexpr size_t kMetricsAsRowsKernels = 3;

    // Export of the current mode; false (with a message) when the file cannot be written.
    bool exportCsv(const QString& path, QString* error = nullptr) const override;

  signals:
    // What the suggestions dock should list for this profile.
    void suggestionsChanged(const QList<SuggestionItem>& suggestions);

  protected:
    void paintAll(QPainter& painter, const QRectF& area) const override;

  private:
    void showData(CpiViewData data);
    void showMetricsAsRows(bool asRows);
    void refresh();
    const cpi::CpiData& current() const;

    std::unique_ptr<CpiViewData> data_;
    bool classes_ = false;
    bool normalized_ = false;
    QComboBox* categoryMode_;
    QComboBox* scaleMode_;
    QCheckBox* metricsAsRows_;
    CpiStackChart* stackChart_;
    CpiMapeChart* mapeChart_;
    QTableView* stacksTable_;
    QTableView* mapeTable_;
    QTableView* errorsTable_;
    QTableView* metricsTable_;
    KernelMetricModel* metricsModel_;
    QStandardItemModel* stacksModel_;
    QStandardItemModel* mapeModel_;
    QStandardItemModel* errorsModel_;
};

QWidget* createCpiView(const ProfileInfo& profile, const QString& workspacePath);

// `render cpi PROFILE`: the stacked bars above the MAPE panel; for a profile without stacks
// (an Nsight Compute export without warp-state metrics) the kernel metrics table and the
// profile's notice.
QImage renderCpi(const Workspace& workspace, const ProfileInfo& profile,
                 const RenderOptions& options);

}  // namespace stallscope
