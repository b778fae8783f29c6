// The misuse cases of UVLoopTesting's simulated network (see main.swift).
import UVLoop
import UVLoopTesting

func simulatedNetworkCases() -> [String: () throws -> Void] {
    [
        "simulated-network-advance-from-a-callback": {
            let network = SimulatedNetwork(seed: 1)
            let host = try network.addHost("host", address: "10.0.0.1")
            try host.loop.assumeIsolated().post { try? network.advanceTime(by: .seconds(1)) }
            try network.runUntilIdle()
        },
        "simulated-host-after-its-network": {
            var network: SimulatedNetwork? = SimulatedNetwork(seed: 1)
            let host = try network!.addHost("client", address: "10.0.0.1")
            network = nil
            _ = try host.loop.resolve(host: "server", port: 80) { _ in }
        },
        "simulated-network-unknown-host": {
            SimulatedNetwork(seed: 1).stall("nobody", for: .seconds(1))
        },
    ]
}
