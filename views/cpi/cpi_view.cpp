#include "views/cpi/cpi_view.h"

#include "views/common/export.h"
#include "views/common/table_kit.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonDocument>
#include <QJsonObject>
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

namespace stallscope {

namespace {

QString q(const std::string& s) {
    return QString::fromStdString(s);
}

QStandardItem* numberItem(double value, int decimals = 0) {
    auto* item = new QStandardItem;
    // The number itself is the display role so columns sort numerically.
    // Whole numbers as integers: a double would be shown as "1.20187e+06".
    if (decimals == 0)
        item->setData(static_cast<qlonglong>(std::llround(value)), Qt::DisplayRole);
    else
        item->setData(std::round(value * std::pow(10, decimals)) / std::pow(10, decimals),
                      Qt::DisplayRole);
    item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    return item;
}

}  // namespace

CpiViewData loadCpiViewData(const Workspace& workspace, const ProfileInfo& profile) {
    CpiViewData out;
    out.raw = cpi::loadCpiData(workspace, profile.id);
    out.metrics = cpi::loadMetricTable(workspace, profile.id);
    out.classes = cpi::toGsiClasses(out.raw);
    out.mape = cpi::computeMape(out.raw);
    out.suggestions = cpi::cpiSuggestions(out.raw);
    out.notice = QJsonDocument::fromJson(QByteArray::fromStdString(profile.metadataJson))
                     .object()
                     .value("notice")
                     .toString();
    return out;
}

// ---------------------------------------------------------------------------------------------

KernelMetricModel::KernelMetricModel(QObject* parent) : QAbstractTableModel(parent) {}

void KernelMetricModel::setTable(const cpi::MetricTable* table) {
    beginResetModel();
    table_ = table;
    resetOrder();
    endResetModel();
}

void KernelMetricModel::setTransposed(bool transposed) {
    if (transposed == transposed_) return;
    beginResetModel();
    transposed_ = transposed;
    resetOrder();
    endResetModel();
}

void KernelMetricModel::resetOrder() {
    order_.resize(!table_ ? 0 : transposed_ ? table_->columns() : table_->rows.size());
    for (size_t i = 0; i < order_.size(); ++i) order_[i] = i;
}

int KernelMetricModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() || !table_ ? 0 : static_cast<int>(order_.size());
}

int KernelMetricModel::columnCount(const QModelIndex& parent) const {
    if (parent.isValid() || !table_) return 0;
    return static_cast<int>((transposed_ ? table_->rows.size() : table_->columns()) + 2);
}

QVariant KernelMetricModel::data(const QModelIndex& index, int role) const {
    if (!table_ || !index.isValid()) return {};
    const size_t line = order_[static_cast<size_t>(index.row())];
    const int column = index.column();
    if (column < 2) {
        if (role != Qt::DisplayRole && role != Qt::ToolTipRole && role != tablekit::kSortRole)
            return {};
        if (transposed_) return q(column == 0 ? table_->names[line] : table_->units[line]);
        const auto& r = table_->rows[line];
        return q(column == 0 ? r.kernel : r.source);
    }
    // A kernel's row and a metric's column, whichever way round they are shown.
    const size_t kernel = transposed_ ? static_cast<size_t>(column - 2) : line;
    const size_t metric = transposed_ ? line : static_cast<size_t>(column - 2);
    switch (role) {
        case Qt::DisplayRole:
            return q(table_->cellText(kernel, metric));
        case Qt::TextAlignmentRole:
            return std::isnan(table_->value(kernel, metric))
                       ? QVariant(int(Qt::AlignLeft | Qt::AlignVCenter))
                       : QVariant(int(Qt::AlignRight | Qt::AlignVCenter));
        case tablekit::kSortRole: {
            const double v = table_->value(kernel, metric);
            return std::isnan(v) ? QVariant() : QVariant(v);
        }
        default:
            return {};
    }
}

QVariant KernelMetricModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || !table_) return {};
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole) return {};
    if (section == 0) return transposed_ ? "metric" : "kernel";
    if (section == 1) return transposed_ ? "unit" : "source";
    const size_t index = static_cast<size_t>(section - 2);
    if (transposed_) {
        const auto& r = table_->rows[index];
        return role == Qt::ToolTipRole ? q(r.kernel + "\n" + r.source) : q(r.kernel);
    }
    const QString unit = q(table_->units[index]);
    return q(table_->names[index]) + (unit.isEmpty() ? QString() : " [" + unit + "]");
}

void KernelMetricModel::sort(int column, Qt::SortOrder order) {
    if (!table_) return;
    emit layoutAboutToBeChanged();
    const bool ascending = order == Qt::AscendingOrder;
    if (column < 0) {
        for (size_t i = 0; i < order_.size(); ++i) order_[i] = i;  // file order
    } else if (column < 2) {
        auto text = [&](size_t line) -> const std::string& {
            if (transposed_) return column == 0 ? table_->names[line] : table_->units[line];
            return column == 0 ? table_->rows[line].kernel : table_->rows[line].source;
        };
        std::stable_sort(order_.begin(), order_.end(), [&](size_t a, size_t b) {
            return ascending ? text(a) < text(b) : text(b) < text(a);
        });
    } else {
        const size_t fixed = static_cast<size_t>(column - 2);
        auto value = [&](size_t line) {
            return transposed_ ? table_->value(fixed, line) : table_->value(line, fixed);
        };
        auto cell = [&](size_t line) {
            return transposed_ ? table_->cellText(fixed, line) : table_->cellText(line, fixed);
        };
        // Numbers by value, then text cells by text, then absent cells, in either order.
        std::stable_sort(order_.begin(), order_.end(), [&](size_t a, size_t b) {
            const double va = value(a), vb = value(b);
            const bool na = std::isnan(va), nb = std::isnan(vb);
            if (na != nb) return nb;
            if (!na) return ascending ? va < vb : vb < va;
            const std::string ta = cell(a), tb = cell(b);
            if (ta.empty() != tb.empty()) return tb.empty();
            return ascending ? ta < tb : tb < ta;
        });
    }
    emit layoutChanged();
}

// ---------------------------------------------------------------------------------------------

CpiStackChart::CpiStackChart(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    setMinimumSize(320, 220);
}

void CpiStackChart::setNotice(const QString& notice) {
    notice_ = notice;
    update();
}

void CpiStackChart::setData(const cpi::CpiData* data, bool normalized) {
    data_ = data;
    normalized_ = normalized;
    segments_.clear();
    update();
}

void CpiStackChart::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    segments_.clear();
    if (!data_) {
        painter.fillRect(rect(), Qt::white);
        charts::paintMessage(painter, rect(), "Loading CPI stacks…");
        return;
    }
    charts::StackChartOptions options;
    options.normalized = normalized_;
    options.notice = notice_;
    charts::paintStackChart(painter, rect(), *data_, options, &segments_);
}

QString CpiStackChart::hoverText(const QPointF& point) const {
    if (!data_) return {};
    for (const charts::StackSegment& s : segments_) {
        // Thin bars: accept a pixel of slack around them.
        if (!s.rect.adjusted(-0.5, 0, 0.5, 0).contains(point)) continue;
        const cpi::KernelStack& stack = data_->stacks[static_cast<size_t>(s.stack)];
        const std::string meaning = cpi::categoryMeaning(s.category);
        return QString("%1\n%2 — %3%4\n%5 cycles (%6% of %7)")
            .arg(q(stack.kernel), q(stack.source), q(s.category),
                 meaning.empty() ? QString() : " (" + q(meaning) + ")")
            .arg(QLocale().toString(s.cycles, 'f', 0))
            .arg(s.share * 100, 0, 'f', 1)
            .arg(QLocale().toString(stack.total(), 'f', 0));
    }
    return {};
}

void CpiStackChart::mouseMoveEvent(QMouseEvent* event) {
    const QString text = hoverText(event->position());
    if (text.isEmpty())
        QToolTip::hideText();
    else
        QToolTip::showText(event->globalPosition().toPoint(), text, this);
}

CpiMapeChart::CpiMapeChart(QWidget* parent) : QWidget(parent) {
    setMinimumSize(240, 160);
}

void CpiMapeChart::setData(const cpi::MapeReport* mape, std::vector<std::string> models) {
    mape_ = mape;
    models_ = std::move(models);
    update();
}

void CpiMapeChart::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    if (!mape_) {
        painter.fillRect(rect(), Qt::white);
        return;
    }
    charts::paintMapeChart(painter, rect(), *mape_, models_);
}

// ---------------------------------------------------------------------------------------------

CpiView::CpiView(const ProfileInfo& profile, const QString& workspacePath, QWidget* parent)
    : ChartTablesFrame(profile, "CPI stacks: " + q(profile.name), QSize(1400, 900), parent),
      data_(std::make_unique<CpiViewData>()) {
    categoryMode_ = new QComboBox(this);
    categoryMode_->addItems({"Raw categories", "GSI classes"});
    categoryMode_->setToolTip(
        "Show the categories as the tool reported them, or folded into "
        "the GSI stall classes (Base, Idle, Ctrl, Sync, MemData, MemStruct, "
        "ComData, ComStruct)");
    scaleMode_ = new QComboBox(this);
    scaleMode_->addItems({"Absolute cycles", "Normalized (100%)"});
    addToolBarWidget(new QLabel("Categories:", this));
    addToolBarWidget(categoryMode_);
    addToolBarWidget(scaleMode_);
    finishToolBar("cpi-stacks.csv");

    stackChart_ = new CpiStackChart(this);
    mapeChart_ = new CpiMapeChart(this);
    setCharts(stackChart_, mapeChart_, 700);
    stacksModel_ = new QStandardItemModel(this);
    mapeModel_ = new QStandardItemModel(this);
    errorsModel_ = new QStandardItemModel(this);
    metricsModel_ = new KernelMetricModel(this);
    stacksTable_ = addTable(stacksModel_, "Stacks");
    mapeTable_ = addTable(mapeModel_, "MAPE");
    errorsTable_ = addTable(errorsModel_, "Kernel errors");
    // Metric columns can be many and wide: no stretched last column.
    metricsTable_ = addTable(metricsModel_, "Metrics");
    metricsTable_->horizontalHeader()->setStretchLastSection(false);
    metricsTable_->horizontalHeader()->setSortIndicatorShown(true);

    metricsAsRows_ = new QCheckBox("Metrics as rows", this);
    metricsAsRows_->setToolTip("Metrics table: a row per metric and a column per kernel");
    addToolBarWidget(metricsAsRows_);
    connect(metricsAsRows_, &QCheckBox::toggled, this, &CpiView::showMetricsAsRows);
    connect(categoryMode_, &QComboBox::currentIndexChanged, this,
            [this](int index) { setClasses(index == 1); });
    connect(scaleMode_, &QComboBox::currentIndexChanged, this,
            [this](int index) { setNormalized(index == 1); });
    startLoading(workspacePath, loadCpiViewData,
                 [this](CpiViewData data) { showData(std::move(data)); });
}

// The metrics model points into data_, which goes before the child widgets: a table hidden
// while they are torn down would ask the model for headers over freed rows.
CpiView::~CpiView() {
    metricsModel_->setTable(nullptr);
}

void CpiView::showData(CpiViewData data) {
    *data_ = std::move(data);
    {
        QString text = QString("%1 kernels, %2 sources, %3 kernels with metrics")
                           .arg(data_->raw.kernels.size())
                           .arg(data_->raw.sources.size())
                           .arg(data_->metrics.rows.size());
        for (const cpi::ModelMape& m : data_->mape.overall)
            text += QString(" · MAPE %1 %2%").arg(q(m.model)).arg(m.mapePct, 0, 'f', 2);
        if (!data_->notice.isEmpty()) text += " · " + data_->notice;
        setStatus(text);
    }
    mapeChart_->setData(&data_->mape, data_->raw.sources);
    stackChart_->setNotice(data_->notice);
    metricsModel_->setTable(&data_->metrics);
    // A few kernels with many metrics (an Nsight Compute export of one kernel has 58) read as
    // a column per kernel, a row per metric: otherwise one row shows about three metrics.
    const cpi::MetricTable& metrics = data_->metrics;
    metricsAsRows_->setChecked(metrics.rows.size() <= kMetricsAsRowsKernels &&
                               metrics.columns() > metrics.rows.size());
    showMetricsAsRows(metricsAsRows_->isChecked());
    // A profile without stacks is its metrics.
    if (data_->raw.stacks.empty() && !data_->metrics.rows.empty())
        tabs()->setCurrentWidget(metricsTable_);
    refresh();
    QList<SuggestionItem> items;
    for (const cpi::CpiSuggestion& s : data_->suggestions) items.append({q(s.kind), q(s.text), 0});
    emit suggestionsChanged(items);
}

void CpiView::showMetricsAsRows(bool asRows) {
    metricsModel_->setTransposed(asRows);
    // Unsorted until the user asks: the file's order.
    metricsTable_->horizontalHeader()->setSortIndicator(-1, Qt::AscendingOrder);
    if (metricsModel_->columnCount() <= 200) metricsTable_->resizeColumnsToContents();
}

const cpi::CpiData& CpiView::current() const {
    return classes_ ? data_->classes : data_->raw;
}

void CpiView::setClasses(bool classes) {
    classes_ = classes;
    if (categoryMode_->currentIndex() != (classes ? 1 : 0))
        categoryMode_->setCurrentIndex(classes ? 1 : 0);
    if (isLoaded()) refresh();
}

void CpiView::setNormalized(bool normalized) {
    normalized_ = normalized;
    if (scaleMode_->currentIndex() != (normalized ? 1 : 0))
        scaleMode_->setCurrentIndex(normalized ? 1 : 0);
    if (isLoaded()) stackChart_->setData(&current(), normalized_);
}

void CpiView::refresh() {
    const cpi::CpiData& data = current();
    stackChart_->setData(&data, normalized_);

    stacksModel_->clear();
    QStringList headers{"kernel", "source", "group", "total cycles"};
    for (const std::string& c : data.categories) headers << q(c);
    stacksModel_->setHorizontalHeaderLabels(headers);
    for (const cpi::KernelStack& s : data.stacks) {
        QList<QStandardItem*> row{new QStandardItem(q(s.kernel)), new QStandardItem(q(s.source)),
                                  new QStandardItem(q(s.group)), numberItem(s.total())};
        for (const std::string& c : data.categories) {
            const auto it = s.cycles.find(c);
            row << numberItem(it == s.cycles.end() ? 0 : it->second);
        }
        stacksModel_->appendRow(row);
    }

    mapeModel_->clear();
    mapeModel_->setHorizontalHeaderLabels({"model", "group", "kernels", "MAPE %"});
    auto addMape = [&](const cpi::ModelMape& m) {
        mapeModel_->appendRow({new QStandardItem(q(m.model)),
                               new QStandardItem(m.group.empty() ? "(all)" : q(m.group)),
                               numberItem(m.kernels), numberItem(m.mapePct, 2)});
    };
    for (const cpi::ModelMape& m : data_->mape.overall) addMape(m);
    for (const cpi::ModelMape& m : data_->mape.byGroup) addMape(m);

    errorsModel_->clear();
    errorsModel_->setHorizontalHeaderLabels(
        {"kernel", "group", "model", "predicted", "measured", "error %"});
    for (const cpi::KernelError& e : data_->mape.kernels)
        errorsModel_->appendRow({new QStandardItem(q(e.kernel)), new QStandardItem(q(e.group)),
                                 new QStandardItem(q(e.model)), numberItem(e.predicted),
                                 numberItem(e.measured), numberItem(e.errorPct, 2)});
    stacksTable_->resizeColumnsToContents();
    mapeTable_->resizeColumnsToContents();
    errorsTable_->resizeColumnsToContents();
}

bool CpiView::exportCsv(const QString& path, QString* error) const {
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
        if (error) *error = path + ": " + file.errorString();
        return false;
    }
    // CONTRACT §3 shape, so an export imports back as the same stacks.
    QTextStream out(&file);
    out << "kernel,source,group,category,cycles\n";
    for (const cpi::KernelStack& s : current().stacks)
        for (const std::string& c : current().categories)
            if (const auto it = s.cycles.find(c); it != s.cycles.end())
                out << exporting::csvField(q(s.kernel)) << ',' << exporting::csvField(q(s.source))
                    << ',' << exporting::csvField(q(s.group)) << ',' << exporting::csvField(q(c))
                    << ',' << QString::number(it->second, 'g', 12) << '\n';
    out.flush();
    if (file.error() != QFile::NoError) {
        if (error) *error = path + ": " + file.errorString();
        return false;
    }
    return true;
}

namespace {

// The stacked bars above the MAPE panel (when there is a MAPE); without stacks, the kernel
// metrics under the profile's notice.
void paintCpi(QPainter& painter, const QRectF& area, const CpiViewData& data,
              const cpi::CpiData& stacks, bool normalized, const QString& title) {
    if (data.raw.stacks.empty()) {
        painter.fillRect(area, Qt::white);
        double noticeHeight = 0;
        if (!data.notice.isEmpty()) {
            noticeHeight = 56;
            painter.setPen(QColor(0x9a, 0x5b, 0x00));
            painter.drawText(QRectF(area.left() + 10, area.top() + 6, area.width() - 20, 50),
                             Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap,
                             "No CPI stacks: " + data.notice);
        }
        charts::paintMetricTable(painter,
                                 QRectF(area.left(), area.top() + noticeHeight, area.width(),
                                        area.height() - noticeHeight),
                                 data.metrics,
                                 "Kernel metrics" + (title.isEmpty() ? QString() : ": " + title));
        return;
    }
    const bool withMape = !data.mape.overall.empty();
    const QRectF top(area.left(), area.top(), area.width(),
                     withMape ? area.height() * 0.68 : area.height());
    charts::StackChartOptions options;
    options.normalized = normalized;
    options.notice = data.notice;
    if (!title.isEmpty())
        options.title =
            (normalized ? "CPI stacks (share of cycles): " : "CPI stacks (cycles): ") + title;
    charts::paintStackChart(painter, top, stacks, options);
    if (withMape)
        charts::paintMapeChart(
            painter, QRectF(area.left(), top.bottom(), area.width(), area.height() - top.height()),
            data.mape, data.raw.sources);
}

}  // namespace

void CpiView::paintAll(QPainter& painter, const QRectF& area) const {
    paintCpi(painter, area, *data_, current(), normalized_, q(profile_.name));
}

QWidget* createCpiView(const ProfileInfo& profile, const QString& workspacePath) {
    return new CpiView(profile, workspacePath);
}

QImage renderCpi(const Workspace& workspace, const ProfileInfo& profile,
                 const RenderOptions& options) {
    const CpiViewData data = loadCpiViewData(workspace, profile);
    QImage image(options.size, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::white);
    QPainter painter(&image);
    const QRectF area(0, 0, image.width(), image.height());
    if (data.raw.stacks.empty() && data.metrics.rows.empty()) {
        charts::paintMessage(painter, area,
                             "No CPI stacks in profile '" + q(profile.name) + "'." +
                                 (data.notice.isEmpty() ? QString() : "\n\n" + data.notice));
        return image;
    }
    paintCpi(painter, area, data, data.raw, false, q(profile.name));
    return image;
}

}  // namespace stallscope
