/// Where the register path runs, as the README states it: on x86_64 and aarch64 Linux, whatever libffi was built with
/// (DelegateKit's trampoline table needs nothing of libffi's memory), under `PR_SET_MDWE` too. Tests that
/// check the path is taken ask this rather than assume it.
enum ExpectedRegisterPath {
    static let onThisCPU: Bool = {
        #if (arch(x86_64) || arch(arm64)) && os(Linux)
        return true
        #else
        return false
        #endif
    }()
}
