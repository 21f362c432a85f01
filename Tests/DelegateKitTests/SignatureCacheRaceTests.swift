@testable import DelegateKit  // CClosure.prepared, and Locked: a lock ThreadSanitizer can see
import Foundation
import Testing

/// Threads that prepare the same signature at the same moment. Each round uses a signature no closure
/// had before, so every thread finds the cache empty and builds its own prepared form; one is kept and
/// the others are dropped. Under AddressSanitizer, LeakSanitizer reports any dropped one that did not
/// free its `ffi_cif` and type arrays (which .ci/run fails on); here every run checks that all threads'
/// closures share the one that was kept.
@Suite struct SignatureCacheRaceTests {
    @Test func threadsPreparingOneNewSignatureShareOneAndDropTheRest() throws {
        let threads = 8
        let rounds = 150
        for round in 0..<rounds {
            // A struct argument whose shape no other test uses: 41 to 190 bytes of uint16_t and int8_t.
            let members = (0...(round + 40)).map { $0 % 3 == 0 ? CType.uint16 : CType.int8 }
            let signature = CSignature(.int64, [.pointer, .structure(members), .double])
            let prepared = Locked<[ObjectIdentifier]>([])
            let failures = Locked<[String]>([])
            let start = Barrier(count: threads)
            let done = DispatchGroup()
            for _ in 0..<threads {
                done.enter()
                Thread.detachNewThread {
                    defer { done.leave() }
                    start.wait()  // all threads miss the cache together
                    do {
                        let closure = try CClosure(signature: signature) { _ in }
                        prepared.withLock { $0.append(ObjectIdentifier(closure.prepared)) }
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                }
            }
            done.wait()
            #expect(failures.withLock { $0 } == [])
            let distinct = prepared.withLock { Set($0) }
            #expect(distinct.count == 1, "round \(round): closures of one signature use \(distinct.count) prepared forms")
        }
    }
}

/// Releases its threads together once `count` of them wait: a pthread barrier, which ThreadSanitizer sees.
private final class Barrier: @unchecked Sendable {  // The barrier is C's, initialized once.
    private let barrier = UnsafeMutablePointer<pthread_barrier_t>.allocate(capacity: 1)
    init(count: Int) { pthread_barrier_init(barrier, nil, UInt32(count)) }
    func wait() { pthread_barrier_wait(barrier) }
    deinit {
        pthread_barrier_destroy(barrier)
        barrier.deallocate()
    }
}
