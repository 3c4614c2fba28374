#include "core/trace/steps/internal.h"

namespace stallscope::trace::steps {

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
    return out;
}

bool has(std::string_view text, std::string_view needle) {
    return text.find(needle) != std::string_view::npos;
}

StepCategory categoryOf(uint8_t segClass) {
    if (isCompute(segClass)) return StepCategory::Compute;
    if (segClass == kCommunication) return StepCategory::Communication;
    if (isCopy(segClass)) return StepCategory::Memcpy;
    if (segClass == kMemset) return StepCategory::Memset;
    if (segClass == kSegInput) return StepCategory::Input;
    if (segClass == kSegHostWait) return StepCategory::HostWait;
    return StepCategory::Idle;
}

namespace {

// "conv" as in convolution/conv2d/conv_fwd, not convert.
bool hasConvolution(std::string_view n) {
    for (size_t at = n.find("conv"); at != std::string_view::npos; at = n.find("conv", at + 1)) {
        const char next = at + 4 < n.size() ? n[at + 4] : '\0';
        if (next == 'o' || next == '_' || (next >= '0' && next <= '9')) return true;
    }
    return false;
}

}  // namespace

uint8_t classifyDeviceName(std::string_view name) {
    const std::string n = lower(name);
    if (n == "stream sync" || n == "context sync" || n == "event sync" ||
        n == "stream wait event" || n == "device sync")
        return kNotActivity;
    // MTIA's device streams (Kineto, cat mtia_ccp_events) record their syncs and waits as
    // slices, beside the runtime's synchronize calls; its copies are DMA requests.
    if (n == "event_record" || n == "event_wait" || n == "synchronize") return kNotActivity;
    if (n == "dma_request") return kOtherCopy;
    // Memsets by their own names ("Memset (Device)", XProf's "MemsetD32"), not every kernel
    // with the word in it (a Triton "_combined_routing_memset" computes).
    if (n.starts_with("memset")) return kMemset;
    // ROCm's blit kernels fill and copy buffers for hipMemset/hipMemcpy.
    if (n.starts_with("__amd_rocclr_fill")) return kMemset;
    if (n.starts_with("__amd_rocclr_copy")) return kOtherCopy;
    // XProf on ROCm names its memcpy activities by direction.
    if (n.starts_with("copyhosttodevice")) return kH2D;
    if (n.starts_with("copydevicetohost")) return kD2H;
    if (n.starts_with("copydevicetodevice")) return kD2D;
    if (n.starts_with("copypeertopeer")) return kPeer;
    const bool chakraMemory = n.starts_with("mem_load_node") || n.starts_with("mem_store_node");
    if (n.starts_with("memcpy") || n.starts_with("copy-start") || n.starts_with("copy-done") ||
        n.starts_with("async-copy") || chakraMemory) {
        if (has(n, "htod") || has(n, "h2d")) return kH2D;
        if (has(n, "dtoh") || has(n, "d2h")) return kD2H;
        if (has(n, "ptop") || has(n, "p2p") || has(n, "peer")) return kPeer;
        if (has(n, "dtod") || has(n, "d2d")) return kD2D;
        // XLA's copy-start/-done name no direction: the memory spaces are in the HLO shapes
        // (S(5) host, S(0) HBM), which core/transfers reads; here they are "other".
        return kOtherCopy;
    }
    static constexpr std::string_view collectives[] = {"nccl",
                                                       "rccl",
                                                       "allreduce",
                                                       "all_reduce",
                                                       "all-reduce",
                                                       "allgather",
                                                       "all_gather",
                                                       "all-gather",
                                                       "reducescatter",
                                                       "reduce_scatter",
                                                       "reduce-scatter",
                                                       "alltoall",
                                                       "all_to_all",
                                                       "all-to-all",
                                                       "collective-permute",
                                                       "collectivepermute",
                                                       "multimem",
                                                       "cross_device_reduce"};
    for (std::string_view c : collectives)
        if (has(n, c)) return kCommunication;
    if (n.starts_with("comm_") || n.starts_with("send") || n.starts_with("recv"))
        return kCommunication;
    if (has(n, "flash") || has(n, "attention") || has(n, "attn") || has(n, "fmha") ||
        has(n, "sdpa"))
        return kAttention;
    if (has(n, "gemm") || has(n, "matmul") || has(n, "cublas") || has(n, "cutlass") ||
        has(n, "xmma") || has(n, "wgmma") || has(n, "hmma") || has(n, "nvjet") ||
        n.starts_with("cijk_") || has(n, "hipblaslt") || has(n, "rocblas") ||
        n.starts_with("dot") || has(n, "fprop") || has(n, "dgrad") || has(n, "wgrad") ||
        hasConvolution(n))
        return kGemm;
    return kOtherCompute;
}

uint8_t classifyHostName(std::string_view name) {
    if (name.starts_with("ProfilerStep#") || name.starts_with("PyTorch Profiler") ||
        name.starts_with("Iteration Start"))
        return kHostIgnored;
    const std::string n = lower(name);
    if (has(n, "dataloader") || has(n, "iteratorgetnext") || has(n, "iterator::") ||
        has(n, "infeed") || has(n, "tf_data") || has(n, "input_pipeline") ||
        has(n, "input pipeline"))
        return uint8_t(HostCategory::Input);
    // Runtime-level waits (Python wrappers such as torch.cuda.synchronize hold one of these).
    if (has(name, "Synchronize") || name == "cudaMemcpy" || name == "hipMemcpy" ||
        name == "aten::item" || name == "aten::_local_scalar_dense")
        return uint8_t(HostCategory::Sync);
    const bool driverCall =
        name.size() > 2 && name.starts_with("cu") && name[2] >= 'A' && name[2] <= 'Z';
    if (n.starts_with("cuda") || n.starts_with("hip") || n.starts_with("hsa_") || driverCall)
        return uint8_t(HostCategory::Runtime);
    if (has(n, "::") || name.starts_with("Optimizer.")) return uint8_t(HostCategory::Operator);
    if (has(n, ".py(") || name.starts_with("nn.Module:") || name.starts_with("<built-in") ||
        name.starts_with("torch/"))
        return uint8_t(HostCategory::Python);
    return uint8_t(HostCategory::Other);
}

// XProf names a GPU stream line by what runs on it ("Stream #9(MemcpyH2D)",
// "Stream #7(Kernel,MemcpyD2H)"): a stream of copies only gives its activities' class (their
// names, "CopyDeviceToDevice" or a TensorFlow op's, may not); kNotActivity otherwise.
uint8_t copyStreamClass(std::string_view trackName) {
    if (!trackName.ends_with(")")) return kNotActivity;
    const size_t open = trackName.rfind('(');
    if (open == std::string_view::npos) return kNotActivity;
    std::string_view kinds = trackName.substr(open + 1, trackName.size() - open - 2);
    uint8_t cls = kNotActivity;
    int parts = 0;
    while (!kinds.empty()) {
        const size_t comma = kinds.find(',');
        const std::string_view kind = kinds.substr(0, comma);
        kinds = comma == std::string_view::npos ? std::string_view() : kinds.substr(comma + 1);
        uint8_t one = kNotActivity;
        if (kind == "MemcpyH2D")
            one = kH2D;
        else if (kind == "MemcpyD2H")
            one = kD2H;
        else if (kind == "MemcpyD2D")
            one = kD2D;
        else if (kind == "MemcpyP2P")
            one = kPeer;
        else if (kind.starts_with("Memcpy"))
            one = kOtherCopy;
        else if (kind == "Memset")
            one = kMemset;
        else
            return kNotActivity;  // kernels too
        // Copies of several kinds (or copies and memsets) on one stream: other copies.
        cls = parts++ == 0 || cls == one ? one : uint8_t(kOtherCopy);
    }
    return cls;
}

bool isIterationMarker(std::string_view name) {
    return name.starts_with("Iteration#") || name.starts_with("iteration_") ||
           name.starts_with("ITERATION") || name.starts_with("IterationMarker");
}

}  // namespace stallscope::trace::steps
