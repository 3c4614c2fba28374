// The panels of the trace view, in tab order; a new panel is one line here.

#include <QJsonArray>

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

QString evidenceText(const QJsonObject& evidence) {
    const auto valueText = [](const QJsonValue& v) -> QString {
        if (v.isDouble()) return QString::number(v.toDouble(), 'g', 6);
        if (!v.isArray()) return v.toVariant().toString();
        const QJsonArray list = v.toArray();
        QStringList items;
        for (qsizetype i = 0; i < list.size() && i < 4; ++i)
            items << (list[i].isDouble() ? QString::number(list[i].toDouble(), 'g', 6)
                                         : list[i].toVariant().toString());
        if (list.size() > 4) items << QObject::tr("%1 more").arg(list.size() - 4);
        return "[" + items.join(QStringLiteral(", ")) + "]";
    };
    QStringList pairs;
    for (auto it = evidence.begin(); it != evidence.end(); ++it)
        pairs << QStringLiteral("%1=%2").arg(it.key(), valueText(it.value()));
    return pairs.join(QStringLiteral(", "));
}

}  // namespace stallscope
