#include "trace_fixtures.h"

namespace fixtures {

const char* const kEventTypesJson = R"({"displayTimeUnit":"ns","traceName":"t","traceEvents":[
{"ph":"M","name":"process_name","pid":1,"args":{"name":"proc"}},
{"ph":"M","name":"thread_name","pid":1,"tid":2,"args":{"name":"worker"}},
{"ph":"M","name":"thread_sort_index","pid":1,"tid":2,"args":{"sort_index":-5}},
{"ph":"X","name":"send","pid":1,"tid":2,"ts":1.5,"dur":2.25,"bind_id":"7","flow_out":true},
{"ph":"X","name":"recv","pid":1,"tid":3,"ts":10,"dur":1,"bind_id":"7","flow_in":true},
{"ph":"C","name":"mem","id":"a","pid":1,"ts":1,"args":{"used":5,"free":"7"}},
{"ph":"C","name":"mem","id":"a","pid":1,"ts":2,"args":{"used":6,"free":3}},
{"ph":"i","name":"t","pid":1,"tid":2,"ts":3},{"ph":"I","name":"p","s":"p","pid":1,"ts":3},
{"ph":"S","name":"job","cat":"c","id":9,"pid":1,"ts":4},{"ph":"T","name":"job","cat":"c","id":9,"pid":1,"ts":5},
{"ph":"F","name":"job","cat":"c","id":9,"pid":1,"ts":8}
]})";

const char* const kEdgeCasesJson = R"([
{"ph":"E","pid":1,"tid":1,"ts":0.5},
{"ph":"B","name":"b","pid":1,"tid":1,"ts":1},{"ph":"E","pid":1,"tid":1,"ts":3},
{"ph":"X","name":"A","pid":1,"tid":2,"ts":0,"dur":10},
{"ph":"X","name":"B","pid":1,"tid":2,"ts":5,"dur":10},
{"ph":"Z","name":"mystery","pid":1,"tid":1,"ts":2},
{"ph":"X","name":"名前 ünïcode","pid":1,"tid":3,"ts":20,"dur":1},
{"ph":"X","name":"big","pid":1,"tid":4,"ts":30,"dur":1,"args":{"blob":")";

const char* const kBlobArgsJson = R"({"blob":""})";

const char* const kBrokenJson = R"([{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2},
{"ph":"X" "name":"b","pid":1,"tid":1,"ts":4,"dur":1}])";

const char* const kCutJson =
    R"([{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2},{"ph":"X","na)";

}  // namespace fixtures
