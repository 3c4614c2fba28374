#include "replay_compare_view.h"

#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QTextStream>
#include <QVBoxLayout>
#include <QtConcurrent>

#include "codec.h"
#include "errors.h"
#include "replay_tracks.h"
#include "timeline_view.h"

namespace stallscope {

namespace {

// Numbers sort as numbers in the tables.
QTableWidgetItem* numberItem(double value, const QString& text = {}) {
    auto* item = new QTableWidgetItem;
    item->setData(Qt::DisplayRole, text.isEmpty() ? QVariant(value) : QVariant(text));
    if (!text.isEmpty()) item->setData(Qt::UserRole, value);
    item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    return item;
}

QTableWidgetItem* textItem(const QString& text) {
    return new QTableWidgetItem(text);
}

ReplayComparisonPtr compareDocuments(ReplayDocumentPtr a, ReplayDocumentPtr b) {
    auto data = std::make_shared<ReplayComparisonData>();
    data->a = std::move(a);
    data->b = std::move(b);
    data->comparison = replay::compareReplays(data->a->trace, data->a->analysis, data->b->trace,
                                              data->b->analysis);
    return data;
}

}  // namespace

ReplayComparisonPtr loadReplayComparison(const QString& workspacePath, const ProfileInfo& a,
                                         const ProfileInfo& b) {
    auto workspace = Workspace::open(workspacePath.toStdString(), Workspace::Mode::ReadOnly);
    auto docA = buildReplayDocument(replay::loadTrace(*workspace, a.id), a, false);
    auto docB = buildReplayDocument(replay::loadTrace(*workspace, b.id), b, false);
    return compareDocuments(std::move(docA), std::move(docB));
}

ReplayCompareView::ReplayCompareView(const ProfileInfo& a, const ProfileInfo& b,
                                     const QString& workspacePath, QWidget* parent)
    : QWidget(parent) {
    build();
    summary_->setText(tr("Comparing %1 (A) with %2 (B)…")
                          .arg(QString::fromStdString(a.name), QString::fromStdString(b.name)));
    watcher_ = new QFutureWatcher<ReplayComparisonPtr>(this);
    connect(watcher_, &QFutureWatcher<ReplayComparisonPtr>::finished, this, [this] {
        try {
            show(watcher_->result());
        } catch (const std::exception& e) {
            summary_->setText(tr("Could not compare: %1").arg(e.what()));
        }
    });
    watcher_->setFuture(QtConcurrent::run(
        [workspacePath, a, b] { return loadReplayComparison(workspacePath, a, b); }));
}

ReplayCompareView::ReplayCompareView(ReplayComparisonPtr data, QWidget* parent) : QWidget(parent) {
    build();
    before_->setAsynchronous(false);
    after_->setAsynchronous(false);
    show(std::move(data));
}

void ReplayCompareView::build() {
    auto* layout = new QVBoxLayout(this);
    summary_ = new QLabel(this);
    QFont bold = summary_->font();
    bold.setBold(true);
    bold.setPointSizeF(bold.pointSizeF() * 1.15);
    summary_->setFont(bold);
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(summary_);

    auto* split = new QSplitter(Qt::Vertical, this);
    before_ = new TimelineView(split);
    after_ = new TimelineView(split);
    auto* tables = new QTabWidget(split);
    ops_ = new QTableWidget(0, 4, tables);
    ops_->setHorizontalHeaderLabels({tr("op"), tr("A cycles"), tr("B cycles"), tr("Δ %")});
    dmas_ = new QTableWidget(0, 9, tables);
    dmas_->setHorizontalHeaderLabels({tr("DMA A"), tr("DMA B"), tr("matched by"), tr("stall A"),
                                      tr("stall B"), tr("Δ stall"), tr("slack A"), tr("slack B"),
                                      tr("issue instr A→B")});
    for (QTableWidget* t : {ops_, dmas_}) {
        t->setSortingEnabled(true);
        t->setEditTriggers(QAbstractItemView::NoEditTriggers);
        t->horizontalHeader()->setStretchLastSection(true);
        t->verticalHeader()->hide();
    }
    tables->addTab(ops_, tr("Per HLO op"));
    tables->addTab(dmas_, tr("Per DMA"));
    auto* exportButton = new QPushButton(tr("Export DMA deltas…"), tables);
    tables->setCornerWidget(exportButton);
    connect(exportButton, &QPushButton::clicked, this, [this] {
        const QString path =
            QFileDialog::getSaveFileName(this, tr("Export CSV"), {}, "CSV (*.csv)");
        if (path.isEmpty()) return;
        QFile file(path);
        if (file.open(QIODevice::WriteOnly | QIODevice::Text)) file.write(dmaCsv().toUtf8());
    });
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 3);
    split->setStretchFactor(2, 2);
    layout->addWidget(split, 1);

    // One cycle axis: a window change in either timeline moves the other.
    auto link = [this](TimelineView* from, TimelineView* to) {
        connect(from, &TimelineView::windowChanged, this, [this, to](TimeRange window) {
            if (syncing_) return;
            syncing_ = true;
            to->setWindow(window);
            syncing_ = false;
        });
        connect(from, &TimelineView::cursorMoved, this,
                [to](double time) { to->setCursorTime(time); });
    };
    link(before_, after_);
    link(after_, before_);
}

void ReplayCompareView::show(ReplayComparisonPtr data) {
    data_ = std::move(data);
    const auto& c = data_->comparison;
    summary_->setText(QString::fromStdString(c.summary) +
                      tr("   ·   data-cache median unused %1% → %2%, largest free %3% → %4%")
                          .arg(c.a.medianUnusedPct, 0, 'f', 1)
                          .arg(c.b.medianUnusedPct, 0, 'f', 1)
                          .arg(c.a.medianLargestFreePct, 0, 'f', 1)
                          .arg(c.b.medianLargestFreePct, 0, 'f', 1));
    installReplayTracks(*before_, data_->a);
    installReplayTracks(*after_, data_->b);
    // Both axes span the longer run so equal cycles line up.
    const double end = double(std::max(c.a.totalCycles, c.b.totalCycles));
    before_->setExtent(TimeRange{0, end});
    after_->setExtent(TimeRange{0, end});
    before_->fitAll();
    after_->setWindow(before_->window());

    ops_->setSortingEnabled(false);
    ops_->setRowCount(static_cast<int>(c.ops.size()));
    for (int r = 0; r < ops_->rowCount(); ++r) {
        const replay::OpDelta& op = c.ops[size_t(r)];
        ops_->setItem(r, 0, textItem(QString::fromStdString(op.name)));
        ops_->setItem(r, 1, numberItem(double(op.a)));
        ops_->setItem(r, 2, numberItem(double(op.b)));
        ops_->setItem(r, 3, numberItem(op.deltaPct(), QString::number(op.deltaPct(), 'f', 1)));
    }
    ops_->setSortingEnabled(true);
    dmas_->setSortingEnabled(false);
    dmas_->setRowCount(static_cast<int>(c.dmas.size()));
    const auto& ta = data_->a->trace;
    const auto& tb = data_->b->trace;
    for (int r = 0; r < dmas_->rowCount(); ++r) {
        const replay::DmaDelta& d = c.dmas[size_t(r)];
        dmas_->setItem(r, 0,
                       d.a != replay::kNone ? numberItem(double(ta.dmas[d.a].id)) : textItem("—"));
        dmas_->setItem(r, 1,
                       d.b != replay::kNone ? numberItem(double(tb.dmas[d.b].id)) : textItem("—"));
        dmas_->setItem(r, 2, textItem(replay::dmaMatchName(d.match)));
        dmas_->setItem(r, 3, numberItem(double(d.stallA)));
        dmas_->setItem(r, 4, numberItem(double(d.stallB)));
        dmas_->setItem(r, 5, numberItem(double(d.stallB - d.stallA)));
        dmas_->setItem(r, 6, numberItem(double(d.slackA)));
        dmas_->setItem(r, 7, numberItem(double(d.slackB)));
        dmas_->setItem(r, 8, textItem(QString("%1 → %2").arg(d.issueInstrA).arg(d.issueInstrB)));
    }
    dmas_->setSortingEnabled(true);
    emit loaded();
}

QString ReplayCompareView::summary() const {
    return summary_->text();
}

QString ReplayCompareView::dmaCsv() const {
    QString out;
    QTextStream s(&out);
    s << "id_a,id_b,match,stall_a,stall_b,slack_a,slack_b,issue_instr_a,issue_instr_b\n";
    if (!data_) return out;
    const auto& ta = data_->a->trace;
    const auto& tb = data_->b->trace;
    for (const replay::DmaDelta& d : data_->comparison.dmas) {
        s << (d.a != replay::kNone ? QString::number(ta.dmas[d.a].id) : QString()) << ','
          << (d.b != replay::kNone ? QString::number(tb.dmas[d.b].id) : QString()) << ','
          << replay::dmaMatchName(d.match) << ',' << d.stallA << ',' << d.stallB << ',' << d.slackA
          << ',' << d.slackB << ',' << d.issueInstrA << ',' << d.issueInstrB << '\n';
    }
    return out;
}

QImage ReplayCompareView::renderImage(QSize size) {
    // Summary on top, then the two timelines sharing the axis, each half the remaining height.
    QImage image(size, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::white);
    QPainter painter(&image);
    const int header = 34;
    painter.setFont(summary_->font());
    painter.setPen(Qt::black);
    painter.drawText(QRect(10, 0, size.width() - 20, header), Qt::AlignVCenter | Qt::AlignLeft,
                     summary_->text());
    const int half = (size.height() - header) / 2;
    const QString labels[] = {tr("A (before)"), tr("B (after)")};
    TimelineView* views[] = {before_, after_};
    for (int i = 0; i < 2; ++i) {
        views[i]->prepareNow(QSize(size.width(), half));
        const QImage part = views[i]->renderImage(QSize(size.width(), half));
        painter.drawImage(0, header + i * half, part);
        painter.setPen(QColor(120, 120, 120));
        painter.drawLine(0, header + i * half, size.width(), header + i * half);
        painter.setPen(Qt::black);
        QFont f = painter.font();
        f.setPointSizeF(f.pointSizeF() * 0.8);
        painter.setFont(f);
        painter.drawText(QRect(size.width() - 160, header + i * half + 2, 150, 18),
                         Qt::AlignRight | Qt::AlignVCenter, labels[i]);
        painter.setFont(summary_->font());
    }
    return image;
}

QImage renderReplayCompare(const Workspace& workspace, const ProfileInfo& profile,
                           const RenderOptions& options) {
    if (!options.against)
        throw InputError("render compare: name the second profile with --against B");
    if (options.against->kind != "replay")
        throw InputError("render compare: '" + options.against->name + "' is not a replay profile");
    auto docA = buildReplayDocument(replay::loadTrace(workspace, profile.id), profile, false);
    auto docB = buildReplayDocument(replay::loadTrace(workspace, options.against->id),
                                    *options.against, false);
    ReplayCompareView view(compareDocuments(std::move(docA), std::move(docB)));
    if (options.from && options.to) {
        view.before()->setWindow({*options.from, *options.to});
        view.after()->setWindow({*options.from, *options.to});
    }
    return view.renderImage(options.size);
}

}  // namespace stallscope
