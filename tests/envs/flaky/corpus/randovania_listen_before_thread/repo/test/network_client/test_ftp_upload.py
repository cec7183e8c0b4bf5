import os
import random
import socket
import threading
import time

from randovania.upload import upload


def _serve(server, received):
    time.sleep(random.uniform(0.0, 0.02))  # the FTP server's start-up in the worker
    server.listen(1)
    conn, _ = server.accept()
    with conn:
        received.append(conn.recv(64))
        conn.sendall(b"226")


def test_upload(tmp_path):
    path = os.path.join(str(tmp_path), "ftp")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    received = []
    worker = threading.Thread(target=_serve, args=(server, received), daemon=True)
    worker.start()
    assert upload(path, "seed.rdvgame")
    worker.join(timeout=2.0)
    assert received == [b"seed.rdvgame"]
    server.close()
