// The panels of the trace view, in tab order; a new panel is one line here.

#include <QJsonArray>
#include <QJsonDocument>
#include <cmath>

#include "views/trace/critical_path_trace_panel.h"
#include "views/trace/hosts_trace_panel.h"
#include "views/trace/query_tracks.h"
#include "views/trace/steps_trace_panel.h"
#include "views/trace/trace_panel.h"
#include "views/trace/transfers_trace_panel.h"

namespace stallscope {

namespace {

template <class P>
std::unique_ptr<TracePanel> make(TracePanelHost& host) {
    return std::make_unique<P>(host);
}

}  // namespace

const std::vector<TracePanelFactory>& tracePanelFactories() {
    static const std::vector<TracePanelFactory> all{
        make<StepsTracePanel>,     make<CriticalPathTracePanel>, make<HostsTracePanel>,
        make<TransfersTracePanel>, make<QueryTracksPanel>,
    };
    return all;
}

QString evidenceNumber(double value) {
    // Whole numbers in full ("1154750", not "1.15475e+06"), others with at most 3 decimals.
    if (std::isfinite(value) && value == std::floor(value) && std::abs(value) < 1e15)
        return QString::number(qint64(value));
    QString text = QString::number(value, 'f', std::abs(value) >= 100 ? 1 : 3);
    while (text.contains('.') && (text.endsWith('0') || text.endsWith('.'))) text.chop(1);
    return text;
}

QString evidenceText(const QJsonObject& evidence) {
    const auto scalarText = [](const QJsonValue& v) -> QString {
        if (v.isDouble()) return evidenceNumber(v.toDouble());
        if (v.isObject())  // nested figures: as compact JSON, never an empty string
            return QString::fromUtf8(QJsonDocument(v.toObject()).toJson(QJsonDocument::Compact));
        return v.toVariant().toString();
    };
    const auto valueText = [&scalarText](const QJsonValue& v) -> QString {
        if (!v.isArray()) return scalarText(v);
        const QJsonArray list = v.toArray();
        QStringList items;
        for (qsizetype i = 0; i < list.size() && i < 4; ++i) items << scalarText(list[i]);
        if (list.size() > 4) items << QObject::tr("%1 more").arg(list.size() - 4);
        return "[" + items.join(QStringLiteral(", ")) + "]";
    };
    QStringList pairs;
    for (auto it = evidence.begin(); it != evidence.end(); ++it)
        pairs << QStringLiteral("%1=%2").arg(it.key(), valueText(it.value()));
    return pairs.join(QStringLiteral(", "));
}

QString stepShareText(double sharePct) {
    if (sharePct <= 0) return QObject::tr("no share of step time of its own");
    return QObject::tr("up to %1 % of step time").arg(sharePct, 0, 'f', sharePct < 10 ? 1 : 0);
}

}  // namespace stallscope
