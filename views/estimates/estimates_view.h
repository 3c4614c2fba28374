#pragma once

#include <QImage>
#include <QWidget>
#include <memory>

#include "core/estimates/estimates.h"
#include "core/workspace.h"
#include "views/common/chart_tables_frame.h"
#include "views/common/render.h"
#include "views/estimates/estimates_chart.h"

class QLabel;
class QStandardItemModel;
class QTableView;

namespace stallscope {

struct EstimatesViewData {
    estimates::EstimateData data;
    estimates::EstimateReport report;
};

// SQL: not on the GUI thread.
EstimatesViewData loadEstimatesViewData(const Workspace& workspace, const ProfileInfo& profile);

class EstimateScatterChart : public QWidget {
    Q_OBJECT
  public:
    explicit EstimateScatterChart(QWidget* parent = nullptr);
    void setData(const estimates::EstimateData* data);
    QString hoverText(const QPointF& point) const;

  protected:
    void paintEvent(QPaintEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;

  private:
    const estimates::EstimateData* data_ = nullptr;
    std::vector<charts::ScatterPoint> points_;
};

class EstimateMapeChart : public QWidget {
    Q_OBJECT
  public:
    explicit EstimateMapeChart(QWidget* parent = nullptr);
    void setData(const EstimatesViewData* data);

  protected:
    void paintEvent(QPaintEvent* event) override;

  private:
    const EstimatesViewData* data_ = nullptr;
};

// Cross-fidelity estimates of one profile: predicted vs. measured scatter with y = x, MAPE bars,
// and tables of rows, MAPE, speedup errors (Table V) and estimator cost against accuracy.
class EstimatesView : public ChartTablesFrame {
    Q_OBJECT
  public:
    EstimatesView(const ProfileInfo& profile, const QString& workspacePath,
                  QWidget* parent = nullptr);

    const EstimatesViewData& viewData() const { return *data_; }
    EstimateScatterChart* scatter() const { return scatter_; }
    QTableView* speedupTable() const { return speedupTable_; }
    QTableView* rowsTable() const { return rowsTable_; }

    bool exportCsv(const QString& path, QString* error = nullptr) const override;

  protected:
    void paintAll(QPainter& painter, const QRectF& area) const override;

  private:
    void showData(EstimatesViewData data);

    std::unique_ptr<EstimatesViewData> data_;
    EstimateScatterChart* scatter_;
    EstimateMapeChart* mapeChart_;
    QTableView* rowsTable_;
    QTableView* mapeTable_;
    QTableView* speedupTable_;
    QTableView* costTable_;
    QStandardItemModel* rowsModel_;
    QStandardItemModel* mapeModel_;
    QStandardItemModel* speedupModel_;
    QStandardItemModel* costModel_;
};

QWidget* createEstimatesView(const ProfileInfo& profile, const QString& workspacePath);

// `render estimates PROFILE`: scatter beside the MAPE bars.
QImage renderEstimates(const Workspace& workspace, const ProfileInfo& profile,
                       const RenderOptions& options);

}  // namespace stallscope
