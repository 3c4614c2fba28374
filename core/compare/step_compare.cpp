#include "core/compare/step_compare.h"

#include <QJsonArray>
#include <algorithm>

namespace stallscope::compare {

using trace::StepAnalysis;
using trace::StepCategory;

StepComparison compareSteps(const StepAnalysis& a, const StepAnalysis& b) {
    auto meanPerStep = [](const StepAnalysis& s, StepCategory c) {
        const size_t n = s.breakdown.size();
        return n ? double(s.total(c)) / double(n) : 0.0;
    };
    auto meanStep = [](const StepAnalysis& s) {
        if (s.steps.empty()) return 0.0;
        int64_t sum = 0;
        for (const trace::Step& st : s.steps) sum += s.stepTime(st.index);
        return double(sum) / double(s.steps.size());
    };
    auto kinds = [](const StepAnalysis& s) {
        std::vector<std::string> k;
        for (const trace::StepRecommendation& r : s.recommendations) k.push_back(r.kind);
        return k;
    };
    StepComparison out;
    out.aSteps = a.steps.size();
    out.bSteps = b.steps.size();
    out.aMeanStepNs = meanStep(a);
    out.bMeanStepNs = meanStep(b);
    for (size_t c = 0; c < trace::kStepCategoryCount; ++c) {
        const auto cat = StepCategory(c);
        out.categories[c] = {cat, a.sharePct(cat), b.sharePct(cat), meanPerStep(a, cat),
                             meanPerStep(b, cat)};
    }
    const auto ka = kinds(a), kb = kinds(b);
    for (const std::string& k : ka)
        (std::find(kb.begin(), kb.end(), k) == kb.end() ? out.recommendationsGone
                                                        : out.recommendationsKept)
            .push_back(k);
    for (const std::string& k : kb)
        if (std::find(ka.begin(), ka.end(), k) == ka.end()) out.recommendationsNew.push_back(k);
    return out;
}

QJsonObject stepComparisonJson(const StepComparison& c) {
    QJsonArray categories;
    for (const StepCategoryDelta& d : c.categories)
        categories.append(QJsonObject{{"category", trace::kCategoryNames[size_t(d.category)]},
                                      {"a_share_pct", d.aSharePct},
                                      {"b_share_pct", d.bSharePct},
                                      {"delta_share_pct", d.deltaSharePct()},
                                      {"a_mean_ns", d.aMeanNs},
                                      {"b_mean_ns", d.bMeanNs}});
    auto names = [](const std::vector<std::string>& list) {
        QJsonArray out;
        for (const std::string& k : list) out.append(QString::fromStdString(k));
        return out;
    };
    return QJsonObject{{"a_steps", qint64(c.aSteps)},
                       {"b_steps", qint64(c.bSteps)},
                       {"a_mean_step_ns", c.aMeanStepNs},
                       {"b_mean_step_ns", c.bMeanStepNs},
                       {"categories", categories},
                       {"recommendations_gone", names(c.recommendationsGone)},
                       {"recommendations_new", names(c.recommendationsNew)},
                       {"recommendations_kept", names(c.recommendationsKept)}};
}

}  // namespace stallscope::compare
