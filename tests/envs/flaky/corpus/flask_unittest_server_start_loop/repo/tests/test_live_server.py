import os

from flask_unittest.live import LiveServer, get


def test_index(tmp_path):
    server = LiveServer(os.path.join(str(tmp_path), "app"), {"/": "Hello"}).start()
    assert get(server.path, "/") == "Hello"
