import os

from elephas.parameter.client import SocketClient
from elephas.parameter.server import SocketServer


def test_socket_server_roundtrip(tmp_path):
    path = os.path.join(str(tmp_path), "ps")
    SocketServer(path, {"w": 1}).start()
    client = SocketClient(path)
    assert client.get_parameters() == {"w": 1}
