#include "views/trace/transfers_trace_panel.h"

#include <algorithm>
#include <set>
#include <string>

#include "views/common/format.h"
#include "views/common/timeline_view.h"
#include "views/trace/transfer_tracks.h"

namespace stallscope {

namespace {

QString htmlEscape(const QString& s) {
    return s.toHtmlEscaped();
}

}  // namespace

TransfersTracePanel::TransfersTracePanel(TracePanelHost& host) : TracePanel(host) {
    cards_ = new CardStrip;
    cards_->hide();
}

TransfersTracePanel::~TransfersTracePanel() {
    if (!cards_->parent()) delete cards_;
}

void TransfersTracePanel::setResult(const analysis::Result& result) {
    setAnalysis(std::static_pointer_cast<const transfers::Analysis>(result));
}

void TransfersTracePanel::clear() {
    transfers_.reset();
    unmatched_.clear();
}

void TransfersTracePanel::setAnalysis(std::shared_ptr<const transfers::Analysis> analysis) {
    QStringList unmatched;
    if (analysis)
        for (const auto& [key, count] : analysis->unmatched)
            unmatched << QString::fromStdString(key).replace('_', ' ') + " " +
                             format::count(double(count));
    unmatched_ = unmatched.join(", ");
    transfers_ = analysis && !analysis->transfers.empty() ? std::move(analysis) : nullptr;
    cards_->setCards(transfers_ ? cardsOf(*transfers_) : std::vector<Card>{});
    host_.panelChanged();
}

std::vector<std::shared_ptr<TimelineTrack>> TransfersTracePanel::leadingTracks() const {
    if (!transfers_ || !host_.source()) return {};
    return makeTransferTracks(transfers_, host_.source()->origin());
}

void TransfersTracePanel::showSuggestion(int index) {
    if (!transfers_ || index < 0 || size_t(index) >= transfers_->suggestions.size()) return;
    const transfers::Suggestion& s = transfers_->suggestions[size_t(index)];
    if (!s.transfers.empty()) showTransfer(s.transfers.front());
    host_.setStatus(QString::fromStdString(s.text));
}

QList<SuggestionItem> TransfersTracePanel::suggestions() const {
    QList<SuggestionItem> items;
    if (!transfers_) return items;
    for (const transfers::Suggestion& s : transfers_->suggestions) {
        SuggestionItem item;
        item.kind = QString::fromStdString(s.kind);
        item.text =
            tr("%1 (re-simulated: saves %2 over %3 runs)")
                .arg(QString::fromStdString(s.text), format::nanoseconds(double(s.savingNs)))
                .arg(s.runs);
        for (uint32_t id : s.transfers) item.dmas.append(id);
        item.evidence = evidenceText(s.evidence);
        item.whyNotApplicable =
            tr("Its saving is the transfer model's re-simulation; to re-simulate the whole step "
               "with copies overlapped, use the Critical path tab's what-if");
        items.append(item);
    }
    return items;
}

void TransfersTracePanel::showTransfer(uint32_t id) {
    if (!transfers_ || id >= transfers_->transfers.size() || !host_.source()) return;
    const transfers::Transfer& t = transfers_->transfers[id];
    const int64_t end = std::max({t.complete, t.waitEnd, t.issue});
    host_.showRange(std::min(t.backtail, t.issue), end);
    for (const auto& track : host_.timeline()->tracks())
        if (const auto* link = dynamic_cast<const TransferLinkTrack*>(track.get());
            link && link->link() == t.link) {
            TimelineItem item;
            item.id = t.id;
            item.start = double(t.issue - host_.source()->origin());
            item.end = double(end - host_.source()->origin());
            item.row = link->rowOf(t.id);
            host_.timeline()->select(link, item);
        }
}

std::vector<Card> TransfersTracePanel::cardsOf(const transfers::Analysis& a) {
    int64_t slack = 0;
    size_t late = 0;
    for (const transfers::Transfer& t : a.transfers) {
        slack += t.slack;
        if (t.slack > 0) ++late;
    }
    const transfers::Link* busiest = nullptr;
    for (const transfers::Link& l : a.links)
        if (!busiest || l.busyNs > busiest->busyNs) busiest = &l;
    const double total = double(a.totalNs), stall = double(a.stallNs);
    std::set<std::string> deviceNames;
    for (const transfers::ModuleRun& m : a.modules) deviceNames.insert(m.device);
    const int devices = int(deviceNames.size());
    std::vector<Card> cards{
        // Module runs of every device added up: on a trace of several devices it exceeds the
        // trace's span, so the card says what it sums.
        {tr("In module runs"), format::nanoseconds(total),
         (a.modules.size() == 1 ? tr("1 run")
                                : tr("%1 runs").arg(format::count(double(a.modules.size())))) +
             (devices > 1 ? tr(", summed over %1 devices").arg(devices) : QString()),
         QColor(60, 60, 60)},
        {tr("Stalled"), format::nanoseconds(stall),
         tr("%1 at waits").arg(format::percentOf(stall, total)), QColor(215, 60, 50)},
        {tr("Base latency"), format::nanoseconds(double(a.baseStallNs)),
         tr("%1 of stalls").arg(format::percentOf(double(a.baseStallNs), stall)),
         QColor(250, 205, 110)},
        {tr("Transfer"), format::nanoseconds(double(a.transferStallNs)),
         tr("%1 of stalls").arg(format::percentOf(double(a.transferStallNs), stall)),
         QColor(60, 120, 190)},
        {tr("Slack, summed"), format::nanoseconds(double(slack)),
         late == 0 ? tr("no wait is late")
                   : tr("%1 of %2 waits late")
                         .arg(format::count(double(late)))
                         .arg(format::count(double(a.transfers.size()))),
         QColor(120, 170, 90)}};
    // A link's busy share of the runs on its device (links are per device).
    double deviceTime = 0;
    if (busiest)
        for (const transfers::ModuleRun& m : a.modules)
            if (m.device == busiest->device) deviceTime += double(m.measuredNs());
    if (busiest && busiest->busyNs > 0 && deviceTime > 0)
        cards.push_back(
            {tr("Busiest link"), format::percentOf(double(busiest->busyNs), deviceTime),
             tr("%1 · %2 GB/s%3 · %4")
                 .arg(QString::fromStdString(busiest->name))
                 .arg(busiest->achievedBytesPerNs(), 0, 'f', 1)
                 .arg(busiest->peakBytesPerNs > 0
                          ? tr(" (%1 % of peak)").arg(100 * busiest->peakFraction(), 0, 'f', 0)
                          : QString(),
                      QString::fromStdString(busiest->device)),
             QColor(60, 120, 190)});
    return cards;
}

QString TransfersTracePanel::overviewHtml() const {
    const QString unmatched =
        unmatched_.isEmpty()
            ? QString()
            : tr("<p>Not made into transfers (as <tt>dma --json</tt> counts them): %1</p>")
                  .arg(htmlEscape(unmatched_));
    if (!transfers_)
        return unmatched.isEmpty()
                   ? QString()
                   : tr("<h3>Transfers</h3><p>No async transfer found.</p>") + unmatched;
    const transfers::Analysis& a = *transfers_;
    uint64_t bytes = 0;
    int64_t slack = 0;
    for (const transfers::Transfer& t : a.transfers) {
        bytes += t.bytes;
        slack += t.slack;
    }
    QString html =
        tr("<h3>Transfers</h3><p>%1 async transfers (%2), %3 in %4 module runs; "
           "stalled at the waits %5 of %6 (%7): base latency %8, transfer %9; "
           "slack %10. Model error %11 % (re-simulating each run unchanged).</p>")
            .arg(format::count(double(a.transfers.size())), QString::fromStdString(a.source),
                 format::dataSize(int64_t(bytes)), format::count(double(a.modules.size())),
                 format::nanoseconds(double(a.stallNs)), format::nanoseconds(double(a.totalNs)),
                 format::percentOf(double(a.stallNs), double(a.totalNs)),
                 format::nanoseconds(double(a.baseStallNs)),
                 format::nanoseconds(double(a.transferStallNs)), format::nanoseconds(double(slack)))
            .arg(a.modelErrorPct, 0, 'f', 1);
    html +=
        tr("<table cellspacing=0 cellpadding=3><tr><th "
           "align=left>Link</th><th>Transfers</th><th>Bytes</th>"
           "<th>Achieved</th><th>Peak</th><th>Busy</th></tr>");
    for (const transfers::Link& l : a.links) {
        if (l.transfers == 0) continue;
        html += QStringLiteral(
                    "<tr><td>%1 (%2)</td><td align=right>%3</td><td align=right>%4</td>"
                    "<td align=right>%5 GB/s</td><td align=right>%6</td>"
                    "<td align=right>%7</td></tr>")
                    .arg(htmlEscape(QString::fromStdString(l.name)),
                         htmlEscape(QString::fromStdString(l.device)),
                         format::count(double(l.transfers)), format::dataSize(int64_t(l.bytes)))
                    .arg(l.achievedBytesPerNs(), 0, 'f', 2)
                    .arg(l.peakBytesPerNs > 0 ? tr("%1 GB/s (%2 %)")
                                                    .arg(l.peakBytesPerNs, 0, 'f', 0)
                                                    .arg(100 * l.peakFraction(), 0, 'f', 1)
                                              : tr("not stated"))
                    .arg(format::nanoseconds(double(l.busyNs)));
    }
    return html + "</table>" + unmatched;
}

}  // namespace stallscope
