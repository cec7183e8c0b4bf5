import json
import random
import socket
import threading
import time


def wait_until_listening(path, timeout=5.0):
    """Poll connect() until the server accepts or ``timeout`` seconds have passed."""
    deadline = time.monotonic() + timeout
    while True:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            try:
                probe.connect(path)
                return
            except OSError:
                if time.monotonic() >= deadline:
                    raise TimeoutError(f"server at {path} did not start listening")
        time.sleep(0.01)


class SocketServer:
    def __init__(self, path, parameters):
        self.path = path
        self.parameters = parameters

    def _serve(self):
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        time.sleep(random.uniform(0.0, 0.02))  # the server builds the model before it binds
        server.bind(self.path)
        server.listen(4)
        while True:
            conn, _ = server.accept()
            with conn:
                if conn.recv(16) == b"get":
                    conn.sendall(json.dumps(self.parameters).encode())

    def start(self):
        threading.Thread(target=self._serve, daemon=True).start()
        wait_until_listening(self.path)
