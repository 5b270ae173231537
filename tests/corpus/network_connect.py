# expect: runtime_error
import socket


def custom_kernel(data):
    # Any connection, to the host's loopback or outside, must fail: there is no network.
    for address in [("127.0.0.1", 22), ("127.0.0.1", 5432), ("1.1.1.1", 80)]:
        try:
            socket.create_connection(address, timeout=2).close()
        except OSError:
            continue
        return data[0] + data[1]  # reached a server: would be accepted, and the test fails
    raise RuntimeError("no network, as it should be")
