#include "registry.h"

namespace stallscope {

const std::vector<const Importer*>& importers() {
    static const std::vector<const Importer*> all{&replayBinaryImporter(), &replayJsonlImporter()};
    return all;
}

}  // namespace stallscope
