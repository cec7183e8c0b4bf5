import json
import random
import socket
import threading
import time


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
