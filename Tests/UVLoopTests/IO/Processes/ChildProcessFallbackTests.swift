import CLibUV
import Glibc
import UVTestSupport
import XCTest

@testable import UVLoop

/// Every child-process test again, with every child spawned by `uv_spawn` and reaped by libuv's
/// `SIGCHLD` handler: the way taken on a kernel without pidfds, and for a child that switches
/// user or group.
final class ChildProcessFallbackTests: ChildProcessTests {
    override var spawnsWithPidfd: Bool { false }

    override func setUp() {
        super.setUp()
        ProcessHandle.spawnsWithLibUVOnly.store(true, ordering: .relaxed)
    }

    override func tearDown() {
        ProcessHandle.spawnsWithLibUVOnly.store(false, ordering: .relaxed)
        super.tearDown()
    }

    // Each test of the base class, declared here so that test discovery finds it in this class.
    override func testOutputErrorAndExitStatusOfAChild() throws { try super.testOutputErrorAndExitStatusOfAChild() }
    override func testStandardInputIsAStream() throws { try super.testStandardInputIsAStream() }
    override func testEnvironmentAndWorkingDirectory() throws { try super.testEnvironmentAndWorkingDirectory() }
    override func testAProgramThatCannotRunIsNamedWithTheReason() throws { try super.testAProgramThatCannotRunIsNamedWithTheReason() }
    override func testKillEndsTheChildWithTheSignal() throws { try super.testKillEndsTheChildWithTheSignal() }
    override func testAChildThatIgnoresTerminateIsKilledAfterItsGrace() throws { try super.testAChildThatIgnoresTerminateIsKilledAfterItsGrace() }
    override func testRunCollectsOutputWithinALimitAndATimeout() async throws { try await super.testRunCollectsOutputWithinALimitAndATimeout() }
    override func testAChildThatClosesItsOutputEarlyStillReportsItsEnd() async throws { try await super.testAChildThatClosesItsOutputEarlyStillReportsItsEnd() }
    override func testCancellingTheWaitTerminatesTheChild() async throws { try await super.testCancellingTheWaitTerminatesTheChild() }
    override func testShutdownKillsAndReapsARunningChild() throws { try super.testShutdownKillsAndReapsARunningChild() }
    override func testDetachKillsTheChildAndLeavesTheOwnersLoopClosable() throws { try super.testDetachKillsTheChildAndLeavesTheOwnersLoopClosable() }
    override func testAThousandShortChildrenLeaveNoZombieAndNoDescriptor() throws { try super.testAThousandShortChildrenLeaveNoZombieAndNoDescriptor() }
    override func testTheChildIsWatchedTheWayThisKernelAllows() throws { try super.testTheChildIsWatchedTheWayThisKernelAllows() }
    override func testAChildThatSwitchesUserIsSpawnedByLibUV() throws { try super.testAChildThatSwitchesUserIsSpawnedByLibUV() }
    override func testAStandardDescriptorCanBeAPipeOfTheParents() throws { try super.testAStandardDescriptorCanBeAPipeOfTheParents() }
    override func testADetachedChildLeadsItsOwnSession() throws { try super.testADetachedChildLeadsItsOwnSession() }
    override func testTheChildStartsWithDefaultSignals() throws { try super.testTheChildStartsWithDefaultSignals() }
    override func testSpawningWhileTheThreadPoolIsSaturated() throws { try super.testSpawningWhileTheThreadPoolIsSaturated() }
    override func testAFileWithoutAnInterpreterLine() throws { try super.testAFileWithoutAnInterpreterLine() }
}
