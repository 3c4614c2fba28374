#include "views/estimates/estimates_view.h"

#include "views/common/export.h"

#include <QFile>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QMouseEvent>
#include <QPainter>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QTableView>
#include <QTextStream>
#include <QToolButton>
#include <QToolTip>
#include <QVBoxLayout>
#include <QtConcurrent>
#include <cmath>

#include "views/common/chart_kit.h"

namespace stallscope {

namespace {

QString q(const std::string& s) {
    return QString::fromStdString(s);
}

QStandardItem* numberItem(double value, int decimals) {
    auto* item = new QStandardItem;
    const double scale = std::pow(10, decimals);
    item->setData(std::round(value * scale) / scale, Qt::DisplayRole);
    item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    return item;
}

QStandardItem* optionalItem(const std::optional<double>& value, int decimals) {
    return value ? numberItem(*value, decimals) : new QStandardItem;
}

}  // namespace

EstimatesViewData loadEstimatesViewData(const Workspace& workspace, const ProfileInfo& profile) {
    EstimatesViewData out;
    out.data = estimates::loadEstimates(workspace, profile.id);
    out.report = estimates::analyzeEstimates(out.data);
    return out;
}

EstimateScatterChart::EstimateScatterChart(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    setMinimumSize(300, 260);
}

void EstimateScatterChart::setData(const estimates::EstimateData* data) {
    data_ = data;
    update();
}

void EstimateScatterChart::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    points_.clear();
    if (!data_) {
        painter.fillRect(rect(), Qt::white);
        charts::paintMessage(painter, rect(), "Loading estimates…");
        return;
    }
    charts::paintEstimateScatter(painter, rect(), *data_, &points_);
}

QString EstimateScatterChart::hoverText(const QPointF& point) const {
    if (!data_) return {};
    for (const charts::ScatterPoint& p : points_) {
        if (QLineF(p.position, point).length() > 6) continue;
        const auto& r = data_->rows[p.row];
        return QString("%1 / %2 on %3\n%4: predicted %5 µs, measured %6 µs%7 (%8%)")
            .arg(q(r.workload), q(r.region), q(r.hardware), q(r.estimator))
            .arg(r.predictedUs, 0, 'g', 6)
            .arg(r.measuredUs.value_or(0), 0, 'g', 6)
            .arg(r.measuredShared ? " (from another estimator's row)" : "")
            .arg(r.errorPct().value_or(0), 0, 'f', 1);
    }
    return {};
}

void EstimateScatterChart::mouseMoveEvent(QMouseEvent* event) {
    const QString text = hoverText(event->position());
    if (text.isEmpty())
        QToolTip::hideText();
    else
        QToolTip::showText(event->globalPosition().toPoint(), text, this);
}

EstimateMapeChart::EstimateMapeChart(QWidget* parent) : QWidget(parent) {
    setMinimumSize(240, 160);
}

void EstimateMapeChart::setData(const EstimatesViewData* data) {
    data_ = data;
    update();
}

void EstimateMapeChart::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    if (!data_) {
        painter.fillRect(rect(), Qt::white);
        return;
    }
    charts::paintEstimateMape(painter, rect(), data_->data, data_->report);
}

EstimatesView::EstimatesView(const ProfileInfo& profile, const QString& workspacePath,
                             QWidget* parent)
    : ChartTablesFrame(profile, "Estimates: " + q(profile.name), QSize(1500, 900), parent),
      data_(std::make_unique<EstimatesViewData>()) {
    finishToolBar("estimates.csv");
    scatter_ = new EstimateScatterChart(this);
    mapeChart_ = new EstimateMapeChart(this);
    setCharts(scatter_, mapeChart_, 600);
    rowsModel_ = new QStandardItemModel(this);
    mapeModel_ = new QStandardItemModel(this);
    speedupModel_ = new QStandardItemModel(this);
    costModel_ = new QStandardItemModel(this);
    speedupTable_ = addTable(speedupModel_, "Speedup errors");
    mapeTable_ = addTable(mapeModel_, "MAPE");
    costTable_ = addTable(costModel_, "Cost vs. accuracy");
    rowsTable_ = addTable(rowsModel_, "Rows");
    startLoading(workspacePath, loadEstimatesViewData,
                 [this](EstimatesViewData data) { showData(std::move(data)); });
}

void EstimatesView::showData(EstimatesViewData data) {
    *data_ = std::move(data);
    const auto& d = data_->data;
    const auto& r = data_->report;
    {
        QString text = QString("%1 rows · %2 estimators · %3 hardware targets")
                           .arg(d.rows.size())
                           .arg(d.estimators.size())
                           .arg(d.hardware.size());
        for (const auto& m : r.byEstimator)
            text += QString(" · MAPE %1 %2%").arg(q(m.estimator)).arg(m.mapePct, 0, 'f', 1);
        setStatus(text);
    }
    scatter_->setData(&data_->data);
    mapeChart_->setData(data_.get());

    rowsModel_->clear();
    rowsModel_->setHorizontalHeaderLabels({"workload", "region", "hardware", "estimator",
                                           "predicted µs", "measured µs", "measured in", "error %",
                                           "wall s"});
    for (const auto& row : d.rows)
        rowsModel_->appendRow({new QStandardItem(q(row.workload)), new QStandardItem(q(row.region)),
                               new QStandardItem(q(row.hardware)),
                               new QStandardItem(q(row.estimator)), numberItem(row.predictedUs, 3),
                               optionalItem(row.measuredUs, 3),
                               new QStandardItem(!row.measuredUs      ? ""
                                                 : row.measuredShared ? "another row"
                                                                      : "this row"),
                               optionalItem(row.errorPct(), 2), optionalItem(row.wallS, 3)});
    mapeModel_->clear();
    mapeModel_->setHorizontalHeaderLabels({"estimator", "hardware", "rows", "MAPE %"});
    for (const auto& m : r.byEstimatorHardware)
        mapeModel_->appendRow({new QStandardItem(q(m.estimator)), new QStandardItem(q(m.hardware)),
                               numberItem(m.rows, 0), numberItem(m.mapePct, 2)});
    for (const auto& m : r.byEstimator)
        mapeModel_->appendRow({new QStandardItem(q(m.estimator)), new QStandardItem("(all)"),
                               numberItem(m.rows, 0), numberItem(m.mapePct, 2)});
    speedupModel_->clear();
    speedupModel_->setHorizontalHeaderLabels({"transition", "estimator", "workloads",
                                              "predicted speedup", "measured speedup", "error %",
                                              "|error| %"});
    for (const auto& s : r.speedupMeans)
        speedupModel_->appendRow({new QStandardItem(q(s.from) + " → " + q(s.to)),
                                  new QStandardItem(q(s.estimator)), numberItem(s.workloads, 0),
                                  numberItem(s.predictedSpeedup, 3),
                                  numberItem(s.measuredSpeedup, 3), numberItem(s.errorPct, 1),
                                  numberItem(s.absErrorPct, 1)});
    // Table V's last row: mean of the absolute errors; the signed mean (bias) beside it.
    for (const auto& s : r.speedupMeanAbs)
        speedupModel_->appendRow({new QStandardItem("mean absolute"),
                                  new QStandardItem(q(s.estimator)), numberItem(s.speedups, 0),
                                  new QStandardItem, new QStandardItem,
                                  numberItem(s.meanErrorPct, 1), numberItem(s.meanAbsErrorPct, 1)});
    costModel_->clear();
    costModel_->setHorizontalHeaderLabels({"estimator", "wall s", "timed rows", "MAPE %"});
    for (const auto& c : r.costs)
        costModel_->appendRow({new QStandardItem(q(c.estimator)), numberItem(c.wallS, 3),
                               numberItem(c.timedRows, 0),
                               c.rows ? numberItem(c.mapePct, 2) : new QStandardItem});
    for (QTableView* t : {rowsTable_, mapeTable_, speedupTable_, costTable_})
        t->resizeColumnsToContents();
}

bool EstimatesView::exportCsv(const QString& path, QString* error) const {
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
        if (error) *error = path + ": " + file.errorString();
        return false;
    }
    // CONTRACT §4 shape plus the error, so it imports back.
    QTextStream out(&file);
    out << "workload,region,hardware,estimator,predicted_us,measured_us,wall_s,error_pct\n";
    auto opt = [](const std::optional<double>& v) {
        return v ? QString::number(*v, 'g', 12) : QString();
    };
    for (const auto& r : data_->data.rows)
        out << exporting::csvField(q(r.workload)) << ',' << exporting::csvField(q(r.region)) << ','
            << exporting::csvField(q(r.hardware)) << ',' << exporting::csvField(q(r.estimator))
            << ',' << QString::number(r.predictedUs, 'g', 12) << ',' << opt(r.measuredUs) << ','
            << opt(r.wallS) << ',' << opt(r.errorPct()) << '\n';  // measured_us as shared
    out.flush();
    return file.error() == QFile::NoError;
}

namespace {

// Scatter on the left; MAPE bars above the speedup-error table on the right.
void paintEstimates(QPainter& painter, const QRectF& area, const EstimatesViewData& data) {
    const QRectF left(area.left(), area.top(), area.width() * 0.52, area.height());
    const QRectF right(left.right(), area.top(), area.width() - left.width(), area.height());
    const double mapeHeight = std::max(220.0, right.height() * 0.5);
    charts::paintEstimateScatter(painter, left, data.data);
    charts::paintEstimateMape(painter, QRectF(right.left(), right.top(), right.width(), mapeHeight),
                              data.data, data.report);
    charts::paintSpeedupTable(
        painter,
        QRectF(right.left(), right.top() + mapeHeight, right.width(), right.height() - mapeHeight),
        data.report);
    painter.setPen(QColor(0xd8, 0xd8, 0xd8));
    painter.drawLine(QPointF(left.right(), area.top() + 8),
                     QPointF(left.right(), area.bottom() - 8));
}

}  // namespace

void EstimatesView::paintAll(QPainter& painter, const QRectF& area) const {
    paintEstimates(painter, area, *data_);
}

QWidget* createEstimatesView(const ProfileInfo& profile, const QString& workspacePath) {
    return new EstimatesView(profile, workspacePath);
}

QImage renderEstimates(const Workspace& workspace, const ProfileInfo& profile,
                       const RenderOptions& options) {
    const EstimatesViewData data = loadEstimatesViewData(workspace, profile);
    QImage image(options.size, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::white);
    QPainter painter(&image);
    paintEstimates(painter, QRectF(0, 0, image.width(), image.height()), data);
    return image;
}

}  // namespace stallscope
