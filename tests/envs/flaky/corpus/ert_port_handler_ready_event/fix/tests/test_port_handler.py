import os
import random
import socket
import threading
import time

from ert_shared.port_handler import ping


def _simulate_server(path, ready=None):
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    time.sleep(random.uniform(0.0, 0.02))  # the service's start-up before it binds
    server.bind(path)
    server.listen(1)
    if ready is not None:
        ready.set()
    conn, _ = server.accept()
    conn.recv(16)
    conn.sendall(b"pong")
    conn.close()
    server.close()


def test_def_active_close(tmp_path):
    path = os.path.join(str(tmp_path), "s")
    ready = threading.Event()
    thread = threading.Thread(target=_simulate_server, args=(path, ready), daemon=True)
    thread.start()
    time.sleep(0.01)  # the client reads the port file first
    assert ready.wait(timeout=5)
    reply = ping(path)
    assert reply == b"pong"
    thread.join(5)
