#include "core/import_buffers.h"

namespace stallscope {

ImportBuffers& importBuffers() {
    static ImportBuffers buffers;
    return buffers;
}

}  // namespace stallscope
