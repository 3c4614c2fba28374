// Small core helpers every layer shares: the JSON string escaper and the lane assignment.
#include <QJsonArray>
#include <QJsonDocument>
#include <QtTest>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <queue>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/beside_thread.h"
#include "core/json_escape.h"
#include "core/lanes.h"
#include "core/nearly_sorted.h"
#include "core/trace/trace_format.h"

using namespace stallscope;

namespace {

std::string jsonLiteral(std::string_view text) {
    std::string out;
    json::appendString(out, text);
    return out;
}

// The lanes the replay timeline gave DMAs sorted by start before: interval partitioning with
// a heap of busy rows (freed when they end before the next start) and a heap of free rows.
std::vector<size_t> heapPartition(const std::vector<std::pair<double, double>>& intervals) {
    using Busy = std::pair<double, size_t>;
    std::priority_queue<Busy, std::vector<Busy>, std::greater<>> busy;
    std::priority_queue<size_t, std::vector<size_t>, std::greater<>> free;
    size_t rows = 0;
    std::vector<size_t> out;
    for (const auto& [start, end] : intervals) {
        while (!busy.empty() && busy.top().first < start) {
            free.push(busy.top().second);
            busy.pop();
        }
        size_t row;
        if (!free.empty()) {
            row = free.top();
            free.pop();
        } else {
            row = rows++;
        }
        busy.emplace(end, row);
        out.push_back(row);
    }
    return out;
}

}  // namespace

class TestCoreHelpers : public QObject {
    Q_OBJECT

  private slots:
    // In order but for a few (merged in from the back), or too many out of place (a plain
    // sort): the sorted sequence either way, with nothing lost or duplicated.
    void nearlySortedSorts() {
        std::mt19937_64 rng(17);
        for (const size_t displaced : {size_t(0), size_t(1), size_t(40), size_t(400)}) {
            std::vector<int> items(1000);
            for (size_t i = 0; i < items.size(); ++i) items[i] = int(i) * 2;
            for (size_t k = 0; k < displaced; ++k) items[rng() % items.size()] = int(rng() % 2500);
            if (displaced == 1) items[0] = 5000;  // a large first item: all the rest set aside
            std::vector<int> expected = items;
            std::sort(expected.begin(), expected.end());
            sortNearlySorted(items, std::less<int>());
            QCOMPARE(items, expected);
        }
        std::vector<int> empty;
        sortNearlySorted(empty, std::less<int>());
        QVERIFY(empty.empty());
    }

    // Work beside the caller: its result is there after join(), what it threw is rethrown
    // there (once), and an owner going away waits for it.
    void besideThreadJoinsAndRethrows() {
        std::atomic<int> done = 0;
        BesideThread beside;
        beside.start([&] { done = 7; });
        beside.join();
        QCOMPARE(done.load(), 7);
        beside.start([] { throw std::runtime_error("worker failed"); });
        bool caught = false;
        try {
            beside.join();
        } catch (const std::runtime_error& e) {
            caught = std::string(e.what()) == "worker failed";
        }
        QVERIFY(caught);
        beside.join();  // the failure was handed over: nothing again
        {
            BesideThread unwinding;
            unwinding.start([&] {
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
                done = 9;
            });
        }
        QCOMPARE(done.load(), 9);
    }

    void jsonEscapes() {
        QCOMPARE(jsonLiteral(""), std::string("\"\""));
        QCOMPARE(jsonLiteral("plain text"), std::string("\"plain text\""));
        QCOMPARE(jsonLiteral("say \"hi\" \\ bye"), std::string("\"say \\\"hi\\\" \\\\ bye\""));
        QCOMPARE(jsonLiteral("a\nb\rc\td"), std::string("\"a\\nb\\rc\\td\""));
        QCOMPARE(jsonLiteral(std::string("\x01\x08\x0c\x1f\0", 5)),
                 std::string("\"\\u0001\\u0008\\u000c\\u001f\\u0000\""));
        QCOMPARE(jsonLiteral("\x7f"), std::string("\"\x7f\""));  // DEL is not a control escape
        // UTF-8 passes through byte for byte; so do bytes that are not UTF-8.
        QCOMPARE(jsonLiteral("é 漢 😀"), std::string("\"é 漢 😀\""));
        QCOMPARE(jsonLiteral("\xff\xc0\x80 \xe6\xbc"), std::string("\"\xff\xc0\x80 \xe6\xbc\""));
        std::string out = "{\"k\":";
        json::appendString(out, "v\"");
        QCOMPARE(out, std::string("{\"k\":\"v\\\"\""));
        std::string control;
        json::appendControlEscape(control, '\x1b');
        QCOMPARE(control, std::string("\\u001b"));
    }

    // Whatever valid UTF-8 text goes in, a JSON parser reads the same text back.
    void jsonRoundTrips() {
        std::mt19937_64 rng(17);
        static const char* const kPieces[] = {"a", "\"", "\\", "/", "\n",   "\t", "\x01", "\x1f",
                                              "é", "漢", "😀",  " ", "\x7f", "\r", "\b"};
        for (int i = 0; i < 2000; ++i) {
            std::string text;
            for (int n = int(rng() % 12); n > 0; --n) text += kPieces[rng() % std::size(kPieces)];
            const std::string document = "[" + jsonLiteral(text) + "]";
            QJsonParseError error;
            const QJsonDocument parsed =
                QJsonDocument::fromJson(QByteArray::fromStdString(document), &error);
            QCOMPARE(error.error, QJsonParseError::NoError);
            QCOMPARE(parsed.array().at(0).toString().toStdString(), text);
        }
        for (int c = 0; c < 0x80; ++c) {
            const std::string text(1, char(c));
            const QJsonDocument parsed =
                QJsonDocument::fromJson(QByteArray::fromStdString("[" + jsonLiteral(text) + "]"));
            QCOMPARE(parsed.array().at(0).toString().toStdString(), text);
        }
    }

    void lanesFirstFit() {
        // Touching intervals share a lane or not, as asked.
        lanes::LaneAssigner<int64_t> next(lanes::Touching::NextLane);
        QCOMPARE(next.place(0, 10), size_t(0));
        QCOMPARE(next.place(5, 15), size_t(1));
        QCOMPARE(next.place(10, 20), size_t(2));  // lane 0 ends exactly at 10
        QCOMPARE(next.place(16, 30), size_t(0));  // the lowest free one
        QCOMPARE(next.place(17, 40), size_t(1));
        QCOMPARE(next.size(), size_t(3));
        lanes::LaneAssigner<int64_t> same(lanes::Touching::SameLane);
        QCOMPARE(same.place(0, 10), size_t(0));
        QCOMPARE(same.place(5, 15), size_t(1));
        QCOMPARE(same.place(10, 20), size_t(0));
        // Open intervals hold their lane until closed; a lane is free from the latest end it
        // held, in whatever order intervals come.
        QCOMPARE(same.open(12), size_t(2));
        QCOMPARE(same.open(40), size_t(0));
        same.close(2, 50);
        QCOMPARE(same.open(45), size_t(1));
        same.close(0, 41);
        QCOMPARE(same.place(30, 35), size_t(3));  // lane 0 held until 41, lane 2 until 50
        QCOMPARE(same.place(41, 42), size_t(0));
        // An interval that ends before it starts leaves its lane held as long as before: lane 3
        // stays held until 35, not 34.
        QCOMPARE(same.place(36, 34), size_t(3));
        QCOMPARE(same.place(34, 36), size_t(4));
        // Many lanes at once (the tree grows), then the lowest comes back first.
        lanes::LaneAssigner<double> many(lanes::Touching::NextLane);
        for (int i = 0; i < 1000; ++i) QCOMPARE(many.place(double(i), 5000.0), size_t(i));
        QCOMPARE(many.place(6000.0, 6001.0), size_t(0));
        QCOMPARE(many.place(6000.5, 7000.0), size_t(1));
        QCOMPARE(many.size(), size_t(1000));
    }

    // Random DMAs sorted by issue: the rows of the heap-based partitioning the replay timeline
    // used before.
    void lanesMatchIntervalPartitioning() {
        std::mt19937_64 rng(23);
        for (int round = 0; round < 20; ++round) {
            std::vector<std::pair<double, double>> intervals;
            double t = 0;
            for (int i = 0; i < 2000; ++i) {
                t += double(rng() % 10);
                intervals.emplace_back(t, t + double(rng() % (round % 2 ? 40 : 400)));
            }
            lanes::LaneAssigner<double> rows(lanes::Touching::NextLane);
            std::vector<size_t> got;
            for (const auto& [start, end] : intervals) got.push_back(rows.place(start, end));
            QCOMPARE(got, heapPartition(intervals));
        }
    }

    // Roots of async slices begin and end in file order (not time order), the scan the Chrome
    // importer did before: the first lane with nothing open and its latest end at or before
    // the start.
    void lanesMatchOpenCloseScan() {
        std::mt19937_64 rng(29);
        struct Lane {
            int open = 0;
            int64_t lastEnd = INT64_MIN;
        };
        for (int round = 0; round < 20; ++round) {
            lanes::LaneAssigner<int64_t> assigner(lanes::Touching::SameLane);
            std::vector<Lane> scan;
            std::vector<std::pair<size_t, int64_t>> openRoots;  // lane, start
            for (int step = 0; step < 3000; ++step) {
                if (openRoots.empty() || rng() % 2 == 0) {
                    const int64_t ts = int64_t(rng() % 1000);
                    size_t lane = 0;
                    while (lane < scan.size() &&
                           !(scan[lane].open == 0 && scan[lane].lastEnd <= ts))
                        ++lane;
                    if (lane == scan.size()) scan.emplace_back();
                    ++scan[lane].open;
                    QCOMPARE(assigner.open(ts), lane);
                    openRoots.emplace_back(lane, ts);
                } else {
                    const size_t k = rng() % openRoots.size();
                    const auto [lane, start] = openRoots[k];
                    openRoots.erase(openRoots.begin() + long(k));
                    // Ends mostly after their starts; a few before (clock trouble).
                    const int64_t end = start + int64_t(rng() % 300) - (rng() % 10 == 0 ? 350 : 0);
                    --scan[lane].open;
                    scan[lane].lastEnd = std::max(scan[lane].lastEnd, end);
                    assigner.close(lane, end);
                }
            }
            QCOMPARE(assigner.size(), scan.size());
        }
    }

    // Events of a line in start order, longer first: the lane stacks the XProf importer used
    // before (nesting in a lane allowed, an event ending at another's start does not overlap).
    void lanesNested() {
        using trace::PreciseTime;
        std::mt19937_64 rng(31);
        for (int round = 0; round < 20; ++round) {
            std::vector<std::pair<PreciseTime, PreciseTime>> events;
            for (int i = 0; i < 1500; ++i) {
                const PreciseTime start{int64_t(rng() % 5000), int32_t(rng() % 1000)};
                events.emplace_back(
                    start,
                    PreciseTime::sum(start.ns, start.ps, int64_t(rng() % 200), int(rng() % 1000)));
            }
            std::sort(events.begin(), events.end(), [](const auto& a, const auto& b) {
                return a.first != b.first ? a.first < b.first : b.second < a.second;
            });
            lanes::LaneAssigner<PreciseTime> assigner(lanes::Touching::SameLane,
                                                      lanes::Nesting::Allowed);
            std::vector<std::vector<PreciseTime>> stacks(1);
            for (const auto& [start, end] : events) {
                size_t lane = 0;
                for (;; ++lane) {
                    if (lane == stacks.size()) stacks.emplace_back();
                    std::vector<PreciseTime>& stack = stacks[lane];
                    while (!stack.empty() && stack.back() <= start) stack.pop_back();
                    if (stack.empty() || end <= stack.back()) {
                        stack.push_back(end);
                        break;
                    }
                }
                QCOMPARE(assigner.place(start, end), lane);
            }
            QVERIFY(assigner.size() > 2);
        }
        // By hand: a child nests in lane 0, an overlapping sibling takes lane 1.
        lanes::LaneAssigner<int64_t> line(lanes::Touching::SameLane, lanes::Nesting::Allowed);
        QCOMPARE(line.place(0, 100), size_t(0));
        QCOMPARE(line.place(10, 20), size_t(0));
        QCOMPARE(line.place(50, 150), size_t(1));
        QCOMPARE(line.place(100, 120), size_t(0));  // the parent ended at 100
        QCOMPARE(line.place(110, 130), size_t(1));  // nests in 50..150
    }
};

QTEST_GUILESS_MAIN(TestCoreHelpers)
#include "test_core_helpers.moc"
