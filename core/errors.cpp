#include "core/errors.h"

namespace stallscope {

std::string atLine(const std::string& file, long long line, const std::string& what) {
    return file + ":" + std::to_string(line) + ": " + what;
}

std::string atOffset(const std::string& file, long long offset, const std::string& what) {
    return file + ": byte " + std::to_string(offset) + ": " + what;
}

}  // namespace stallscope
