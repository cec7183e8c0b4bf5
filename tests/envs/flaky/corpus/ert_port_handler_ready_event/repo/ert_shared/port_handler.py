import socket


def ping(path, timeout=2.0):
    """Connect to the service at ``path`` and exchange one message."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(path)
        sock.sendall(b"ping")
        return sock.recv(16)
