import random
import socket
import threading
import time


class LiveServer:
    def __init__(self, path, routes):
        self.path = path
        self.routes = routes

    def _run(self):
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        time.sleep(random.uniform(0.0, 0.02))  # app start-up before the socket listens
        srv.bind(self.path)
        srv.listen(8)
        while True:
            conn, _ = srv.accept()
            with conn:
                route = conn.recv(256).decode()
                conn.sendall(self.routes.get(route, "404").encode())

    def start(self):
        threading.Thread(target=self._run, daemon=True).start()
        # Wait for the server to start responding
        while True:
            try:
                get(self.path, "/")
                break
            except (ConnectionRefusedError, FileNotFoundError):
                time.sleep(.1)
        return self


def get(path, route):
    time.sleep(0.01)  # the test client builds its request
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(2.0)
        sock.connect(path)
        sock.sendall(route.encode())
        return sock.recv(256).decode()
