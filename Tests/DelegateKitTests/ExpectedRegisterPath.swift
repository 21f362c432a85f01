import Glibc

/// Whether this machine's libffi lets the register path's probe succeed, as CI states it: Debian 12's
/// libffi runs the trampoline DelegateKit writes into its closure memory; Debian sid's 3.8.0 (the Swift
/// 6.2.3 chroot) runs code of its own at a closure's address, so every closure takes libffi's path there,
/// and `.ci/swift-6.2.sh` sets `DELEGATEKIT_EXPECT_REGISTER_PATH=0`. Tests that check the register path is
/// taken ask this rather than assume it.
enum ExpectedRegisterPath {
    static let probeSucceeds: Bool = getenv("DELEGATEKIT_EXPECT_REGISTER_PATH").map { String(cString: $0) != "0" } ?? true
}
