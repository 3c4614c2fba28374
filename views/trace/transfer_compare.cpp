#include "views/trace/transfer_compare.h"

#include <QEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QHelpEvent>
#include <QJsonArray>
#include <QLabel>
#include <QPainter>
#include <QScrollArea>
#include <QSplitter>
#include <QTableWidget>
#include <QToolButton>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "core/transfers/transfers_registration.h"
#include "views/common/chart_kit.h"
#include "views/common/export.h"
#include "views/common/format.h"
#include "views/common/table_kit.h"

namespace stallscope {

namespace {

// The transfer tracks' colours (transfer_tracks.cpp), so a lifetime reads the same here.
const QColor kBaseColor(250, 205, 110);
const QColor kQueueColor(200, 200, 200);
const QColor kTransferColor(60, 120, 190);
const QColor kStallColor(215, 60, 50);
const QColor kEndColorA(60, 110, 200);
const QColor kEndColorB(230, 120, 30);

constexpr double kLane = 10, kRowGap = 8, kLabelWidth = 170, kAxisHeight = 34;

QString signedNs(double ns) {
    const QString sign = ns < 0 ? QStringLiteral("\u2212") : ns > 0 ? "+" : "";
    return sign + format::nanoseconds(std::abs(ns));
}

QTableWidgetItem* nsCell(double ns) {
    return tablekit::numberCell(ns, format::nanoseconds(ns));
}
QTableWidgetItem* deltaNsCell(double ns) {
    auto* item = tablekit::numberCell(ns, signedNs(ns));
    if (ns < 0) item->setForeground(QColor(20, 130, 60));
    if (ns > 0) item->setForeground(QColor(190, 40, 30));
    return item;
}

QString lifetimeText(const transfers::Transfer& t, int64_t runStart) {
    return QObject::tr(
               "issued +%1, on the link +%2 → +%3, waited at +%4: stall %5 (base %6, "
               "transfer %7)")
        .arg(format::nanoseconds(double(t.issue - runStart)),
             format::nanoseconds(double(t.transferStart - runStart)),
             format::nanoseconds(double(t.complete - runStart)),
             format::nanoseconds(double(t.wait - runStart)), format::nanoseconds(double(t.stall())),
             format::nanoseconds(double(t.baseStall)),
             format::nanoseconds(double(t.transferStall)));
}

}  // namespace

TransferComparisonData loadTransferComparison(Workspace& workspace, int64_t a, int64_t b) {
    TransferComparisonData data;
    data.a = std::make_shared<const transfers::Analysis>(transfers::ofProfile(workspace, a));
    data.b = std::make_shared<const transfers::Analysis>(transfers::ofProfile(workspace, b));
    data.comparison = compare::compareTransfers(*data.a, *data.b);
    return data;
}

// --- lifetime chart ----------------------------------------------------------------------------

TransferLifetimeChart::TransferLifetimeChart(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    setMinimumHeight(120);
}

void TransferLifetimeChart::setRun(TransferRunPair run) {
    run_ = std::move(run);
    updateGeometry();
    update();
}

QSize TransferLifetimeChart::sizeHint() const {
    const double rows = double(std::max<size_t>(run_.transfers.size(), 1));
    // Room for the legend on two lines (it wraps in narrow charts).
    return {640, int(std::ceil(24 + rows * (2 * kLane + kRowGap) + kAxisHeight + 44))};
}

TransferLifetimeChart::Layout TransferLifetimeChart::paintChart(QPainter& painter,
                                                                const QRectF& area) const {
    Layout layout;
    const QFont font = charts::beginChart(painter, area, 9);
    const QFontMetricsF fm(font);
    if (run_.transfers.empty()) {
        charts::paintMessage(painter, area,
                             QObject::tr("No matched transfers: pick a run in the table."));
        painter.restore();
        return layout;
    }
    const double line = fm.height();
    QFont bold = font;
    bold.setBold(true);
    painter.setFont(bold);
    painter.setPen(Qt::black);
    painter.drawText(QRectF(area.left() + 8, area.top() + 2, area.width() - 16, line),
                     Qt::AlignLeft | Qt::AlignVCenter,
                     QObject::tr("%1, run %2: A (before) %3 · B (after) %4")
                         .arg(run_.program)
                         .arg(run_.run)
                         .arg(format::nanoseconds(double(run_.lengthA)),
                              format::nanoseconds(double(run_.lengthB))));
    painter.setFont(font);

    // One scale from each run's start to the later of: the runs' ends, the last completion.
    int64_t span = std::max<int64_t>({run_.lengthA, run_.lengthB, 1});
    for (const auto& [a, b] : run_.transfers) {
        span = std::max({span, a->complete - run_.startA, a->wait + a->stall() - run_.startA,
                         b->complete - run_.startB, b->wait + b->stall() - run_.startB});
    }
    const double top = area.top() + line + 10;
    const double rowHeight = 2 * kLane + kRowGap;
    const double height = double(run_.transfers.size()) * rowHeight;
    layout.plot = QRectF(area.left() + kLabelWidth, top,
                         std::max(10.0, area.width() - kLabelWidth - 16), height);
    const QRectF& plot = layout.plot;
    auto x = [&](int64_t offset) {
        return plot.left() + double(offset) / double(span) * plot.width();
    };

    // Grid and axis.
    const double tick = format::tickStep(double(span), 6);
    painter.setPen(QColor(90, 90, 90));
    for (double v = 0; v <= double(span) + 1e-9; v += tick) {
        const double px = x(int64_t(v));
        painter.setPen(QColor(232, 232, 232));
        painter.drawLine(QPointF(px, plot.top()), QPointF(px, plot.bottom()));
        painter.setPen(QColor(90, 90, 90));
        painter.drawText(QRectF(px - 50, plot.bottom() + 3, 100, line), Qt::AlignCenter,
                         format::nanoseconds(v));
    }
    painter.drawText(QRectF(plot.left(), plot.bottom() + line + 4, plot.width(), line),
                     Qt::AlignRight | Qt::AlignVCenter, QObject::tr("time from the run's start"));

    auto lane = [&](const transfers::Transfer& t, int64_t start, double y, std::vector<QRectF>& out,
                    std::vector<QRectF>& stalls) {
        const QRectF laneRect(plot.left(), y, plot.width(), kLane);
        out.push_back(laneRect);
        auto span = [&](int64_t from, int64_t to, const QColor& color, double inset) {
            if (to <= from) return QRectF();
            const QRectF r(
                QPointF(x(from - start), y + inset),
                QPointF(std::max(x(to - start), x(from - start) + 1), y + kLane - inset));
            painter.fillRect(r, color);
            return r;
        };
        span(t.issue, t.ready, kBaseColor, 2);
        span(t.ready, t.transferStart, kQueueColor, 2);
        span(t.transferStart, t.complete, kTransferColor, 2);
        stalls.push_back(t.stall() > 0 ? span(t.wait, t.wait + t.stall(), kStallColor, 0)
                                       : QRectF());
    };
    for (size_t i = 0; i < run_.transfers.size(); ++i) {
        const auto& [a, b] = run_.transfers[i];
        const double y = top + double(i) * rowHeight;
        if (i % 2 == 1)
            painter.fillRect(QRectF(area.left(), y - kRowGap / 2, area.width(), rowHeight),
                             QColor(247, 247, 247));
        painter.setPen(QColor(40, 40, 40));
        const QString name =
            fm.elidedText(QString::fromStdString(a->name), Qt::ElideMiddle, kLabelWidth - 34);
        painter.drawText(QRectF(area.left() + 8, y, kLabelWidth - 34, 2 * kLane),
                         Qt::AlignLeft | Qt::AlignVCenter, name);
        painter.setPen(kEndColorA);
        painter.drawText(QRectF(plot.left() - 16, y, 14, kLane), Qt::AlignCenter, "A");
        painter.setPen(kEndColorB);
        painter.drawText(QRectF(plot.left() - 16, y + kLane, 14, kLane), Qt::AlignCenter, "B");
        lane(*a, run_.startA, y, layout.laneA, layout.stallA);
        lane(*b, run_.startB, y + kLane, layout.laneB, layout.stallB);
    }
    // Each run's end.
    layout.xEndA = x(run_.lengthA);
    layout.xEndB = x(run_.lengthB);
    painter.setPen(QPen(kEndColorA, 1.5, Qt::DashLine));
    painter.drawLine(QPointF(layout.xEndA, plot.top() - 4), QPointF(layout.xEndA, plot.bottom()));
    painter.setPen(QPen(kEndColorB, 1.5, Qt::DashLine));
    painter.drawLine(QPointF(layout.xEndB, plot.top() - 4), QPointF(layout.xEndB, plot.bottom()));

    // Legend under the axis, wrapped to the chart's width.
    double lx = plot.left();
    double ly = plot.bottom() + 2 * line + 8;
    auto room = [&](double width) {
        if (lx > plot.left() && lx + width > area.right() - 4) {
            lx = plot.left();
            ly += line + 4;
        }
    };
    const std::array<std::pair<QColor, QString>, 4> legend{
        std::pair{kBaseColor, QObject::tr("base latency")},
        std::pair{kQueueColor, QObject::tr("queued on the link")},
        std::pair{kTransferColor, QObject::tr("on the link")},
        std::pair{kStallColor, QObject::tr("stall at the wait")}};
    for (const auto& [color, label] : legend) {
        room(16 + fm.horizontalAdvance(label));
        painter.fillRect(QRectF(lx, ly + 2, 12, line - 4), color);
        painter.setPen(QColor(40, 40, 40));
        painter.drawText(QRectF(lx + 16, ly, fm.horizontalAdvance(label) + 4, line),
                         Qt::AlignLeft | Qt::AlignVCenter, label);
        lx += 16 + fm.horizontalAdvance(label) + 16;
    }
    const QString ends = QObject::tr("run ends (A, B)");
    room(18 + fm.horizontalAdvance(ends));
    painter.setPen(QPen(kEndColorA, 1.5, Qt::DashLine));
    painter.drawLine(QPointF(lx, ly + line / 2), QPointF(lx + 14, ly + line / 2));
    painter.setPen(QColor(40, 40, 40));
    painter.drawText(QRectF(lx + 18, ly, fm.horizontalAdvance(ends) + 4, line),
                     Qt::AlignLeft | Qt::AlignVCenter, ends);
    painter.restore();
    return layout;
}

void TransferLifetimeChart::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    paintChart(painter, rect());
}

bool TransferLifetimeChart::event(QEvent* event) {
    if (event->type() != QEvent::ToolTip) return QWidget::event(event);
    auto* help = static_cast<QHelpEvent*>(event);
    QImage scratch(1, 1, QImage::Format_ARGB32_Premultiplied);
    QPainter painter(&scratch);
    const Layout layout = paintChart(painter, rect());
    painter.end();
    for (size_t i = 0; i < layout.laneA.size(); ++i) {
        const QRectF row = layout.laneA[i].united(layout.laneB[i]).adjusted(-kLabelWidth, 0, 0, 0);
        if (!row.contains(help->pos())) continue;
        const auto& [a, b] = run_.transfers[i];
        QToolTip::showText(
            help->globalPos(),
            QStringLiteral("<b>%1</b> (%2 → %3)<br>A: %4<br>B: %5<br>stall %6")
                .arg(QString::fromStdString(a->name).toHtmlEscaped(),
                     format::dataSize(int64_t(a->bytes)), format::dataSize(int64_t(b->bytes)),
                     lifetimeText(*a, run_.startA), lifetimeText(*b, run_.startB),
                     signedNs(double(b->stall() - a->stall()))),
            this);
        return true;
    }
    QToolTip::hideText();
    event->ignore();
    return true;
}

// --- pane --------------------------------------------------------------------------------------

TransferComparePane::TransferComparePane(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* top = new QHBoxLayout;
    summary_ = new QLabel(tr("Reading transfers…"));
    summary_->setWordWrap(true);
    top->addWidget(summary_, 1);
    top->addWidget(exporting::exportButton(
        this,
        {{tr("Matched transfers as CSV…"), exporting::Format::Csv,
          QStringLiteral("transfer-deltas.csv"),
          [this](const QString& path, QString* error) {
              return exporting::writeTextFile(path, transfersCsv(), error);
          }},
         {tr("Lifetimes as PNG…"), exporting::Format::Png, QStringLiteral("transfer-lifetimes.png"),
          [this](const QString& path, QString* error) {
              QImage image(chart_->size().expandedTo(chart_->sizeHint()),
                           QImage::Format_ARGB32_Premultiplied);
              image.fill(Qt::white);
              QPainter painter(&image);
              chart_->paintChart(painter, QRectF(image.rect()));
              painter.end();
              return exporting::writeImageFile(path, image, error);
          }},
         {tr("Lifetimes as SVG…"), exporting::Format::Svg, QStringLiteral("transfer-lifetimes.svg"),
          [this](const QString& path, QString* error) {
              return exporting::writeSvgFile(
                  path, chart_->size().expandedTo(chart_->sizeHint()),
                  [this](QPainter& p, const QRectF& r) { chart_->paintChart(p, r); },
                  tr("Transfer lifetimes"), error);
          }}}));
    layout->addLayout(top);

    auto* split = new QSplitter(Qt::Horizontal);
    auto* tables = new QSplitter(Qt::Vertical);
    modules_ = new QTableWidget;
    tablekit::setUpTable(modules_);
    modules_->setColumnCount(8);
    modules_->setHorizontalHeaderLabels({tr("Program"), tr("Run"), tr("A"), tr("B"), tr("Δ"),
                                         tr("Stall A"), tr("Stall B"), tr("Δ stall")});
    modules_->setToolTip(
        tr("Module runs matched by program and order; pick one to see its "
           "transfers"));
    transfers_ = new QTableWidget;
    tablekit::setUpTable(transfers_);
    transfers_->setColumnCount(9);
    transfers_->setHorizontalHeaderLabels({tr("Transfer"), tr("Bytes A"), tr("Bytes B"),
                                           tr("Issued A"), tr("Issued B"), tr("Stall A"),
                                           tr("Stall B"), tr("Δ stall"), tr("Base stall A → B")});
    tables->addWidget(modules_);
    tables->addWidget(transfers_);
    split->addWidget(tables);
    chart_ = new TransferLifetimeChart;
    auto* scroll = new QScrollArea;
    scroll->setWidgetResizable(true);
    scroll->setWidget(chart_);
    split->addWidget(scroll);
    split->setStretchFactor(0, 2);
    split->setStretchFactor(1, 3);
    layout->addWidget(split, 1);
    connect(modules_, &QTableWidget::itemSelectionChanged, this, [this] {
        const auto rows = modules_->selectionModel()->selectedRows();
        if (rows.isEmpty()) return;
        const QTableWidgetItem* first = modules_->item(rows.front().row(), 0);
        if (first) selectRun(first->data(Qt::UserRole).toInt());
    });
}

void TransferComparePane::setData(TransferComparisonData data) {
    data_ = std::move(data);
    const compare::TransferComparison& c = data_.comparison;
    if (!data_.a || !data_.b || (data_.a->source.empty() && data_.b->source.empty())) {
        summary_->setText(
            tr("Neither profile has transfers (XLA async copies and collectives, CUDA/HIP "
               "memcpys, NCCL kernels)."));
        tablekit::fillTable(modules_, {});
        tablekit::fillTable(transfers_, {});
        chart_->setRun({});
        return;
    }
    const transfers::Analysis &a = *data_.a, &b = *data_.b;
    const auto stalled = [](const transfers::Analysis& side) {
        return tr("%1 transfers, stalled %2 of %3 (%4)")
            .arg(qint64(side.transfers.size()))
            .arg(format::nanoseconds(double(side.stallNs)),
                 format::nanoseconds(double(side.totalNs)),
                 format::percentOf(double(side.stallNs), double(side.totalNs)));
    };
    QString text = tr("A (before): %1 · B (after): %2 · Δ stall %3 · %4 runs and %5 transfers "
                      "matched")
                       .arg(stalled(a), stalled(b), signedNs(double(b.stallNs - a.stallNs)))
                       .arg(c.runs.size())
                       .arg(c.transfers.size());
    const uint64_t left =
        c.unmatchedRunsA + c.unmatchedRunsB + c.unmatchedTransfersA + c.unmatchedTransfersB;
    if (left > 0)
        text += tr(" (unmatched: runs A %1, B %2; transfers A %3, B %4)")
                    .arg(c.unmatchedRunsA)
                    .arg(c.unmatchedRunsB)
                    .arg(c.unmatchedTransfersA)
                    .arg(c.unmatchedTransfersB);
    summary_->setText(text);

    std::vector<std::vector<QTableWidgetItem*>> rows;
    int mostChanged = -1;
    int64_t largest = -1;
    for (size_t i = 0; i < c.runs.size(); ++i) {
        const compare::RunPair& p = c.runs[i];
        const transfers::ModuleRun& ra = a.modules[p.a];
        const transfers::ModuleRun& rb = b.modules[p.b];
        auto* program = tablekit::textCell(QString::fromStdString(p.program));
        program->setData(Qt::UserRole, int(i));
        const int64_t deltaStall = rb.stallNs - ra.stallNs;
        rows.push_back({program, tablekit::numberCell(double(p.run)),
                        nsCell(double(ra.measuredNs())), nsCell(double(rb.measuredNs())),
                        deltaNsCell(double(rb.measuredNs() - ra.measuredNs())),
                        nsCell(double(ra.stallNs)), nsCell(double(rb.stallNs)),
                        deltaNsCell(double(deltaStall))});
        if (std::abs(deltaStall) > largest) {
            largest = std::abs(deltaStall);
            mostChanged = int(i);
        }
    }
    tablekit::fillTable(modules_, rows);
    if (mostChanged >= 0) {
        modules_->selectRow(mostChanged);  // the table keeps the given order until sorted
        selectRun(mostChanged);
    } else {
        tablekit::fillTable(transfers_, {});
        chart_->setRun({});
    }
}

TransferRunPair TransferComparePane::pairOf(int row) const {
    TransferRunPair pair;
    const compare::TransferComparison& c = data_.comparison;
    if (row < 0 || size_t(row) >= c.runs.size() || !data_.a || !data_.b) return pair;
    const compare::RunPair& p = c.runs[size_t(row)];
    const transfers::ModuleRun& ra = data_.a->modules[p.a];
    const transfers::ModuleRun& rb = data_.b->modules[p.b];
    pair.program = QString::fromStdString(p.program);
    pair.run = int(p.run);
    pair.startA = ra.start;
    pair.startB = rb.start;
    pair.lengthA = ra.measuredNs();
    pair.lengthB = rb.measuredNs();
    for (const compare::TransferPair& t : c.transfers) {
        if (t.program != p.program || t.run != p.run) continue;
        pair.transfers.emplace_back(&data_.a->transfers[t.a], &data_.b->transfers[t.b]);
    }
    return pair;
}

void TransferComparePane::selectRun(int row) {
    TransferRunPair pair = pairOf(row);
    std::vector<std::vector<QTableWidgetItem*>> rows;
    for (const auto& [a, b] : pair.transfers) {
        rows.push_back({tablekit::textCell(QString::fromStdString(a->name)),
                        tablekit::numberCell(double(a->bytes), format::dataSize(int64_t(a->bytes))),
                        tablekit::numberCell(double(b->bytes), format::dataSize(int64_t(b->bytes))),
                        nsCell(double(a->issue - pair.startA)),
                        nsCell(double(b->issue - pair.startB)), nsCell(double(a->stall())),
                        nsCell(double(b->stall())), deltaNsCell(double(b->stall() - a->stall())),
                        tablekit::textCell(QStringLiteral("%1 → %2").arg(
                            format::nanoseconds(double(a->baseStall)),
                            format::nanoseconds(double(b->baseStall))))});
    }
    tablekit::fillTable(transfers_, rows);
    chart_->setRun(std::move(pair));
}

QString TransferComparePane::transfersCsv() const {
    QString out =
        exporting::csvRow({"module", "run", "transfer", "occurrence", "a_bytes", "b_bytes",
                           "a_issue_offset_ns", "b_issue_offset_ns", "a_stall_ns", "b_stall_ns",
                           "delta_stall_ns", "a_base_stall_ns", "b_base_stall_ns"}) +
        '\n';
    if (!data_.a || !data_.b) return out;
    for (const compare::TransferPair& t : data_.comparison.transfers) {
        const transfers::Transfer& ta = data_.a->transfers[t.a];
        const transfers::Transfer& tb = data_.b->transfers[t.b];
        const int64_t startA = data_.a->modules[t.aRun].start;
        const int64_t startB = data_.b->modules[t.bRun].start;
        QStringList row{QString::fromStdString(t.program), QString::number(t.run),
                        QString::fromStdString(t.name)};
        for (const int64_t v : {int64_t(t.occurrence), int64_t(ta.bytes), int64_t(tb.bytes),
                                ta.issue - startA, tb.issue - startB, ta.stall(), tb.stall(),
                                tb.stall() - ta.stall(), ta.baseStall, tb.baseStall})
            row << QString::number(v);
        out += exporting::csvRow(row) + '\n';
    }
    return out;
}

}  // namespace stallscope
