#pragma once

// One optimization suggestion as the suggestions dock lists it (see `stallscope suggest`): what
// views hand the dock, without depending on the dock.

#include <QList>
#include <QString>

namespace stallscope {

struct SuggestionItem {
    QString kind;  // e.g. "hoist-dma"
    QString text;  // one sentence for the user
    double savingCycles = 0;
    QList<qint64> dmas;        // DMA ids it moves
    QString evidence;          // "stall_cycles=1523, backtail_cycles=2870, ..."
    bool canApply = false;     // an edit Preview and Apply can re-simulate
    QString whyNotApplicable;  // for one that cannot: why, on the disabled buttons
};

}  // namespace stallscope
