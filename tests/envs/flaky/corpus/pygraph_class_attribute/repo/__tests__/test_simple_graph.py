from py_graph_t.SimpleGraph import SimpleGraph


class TestSimpleGraph:
    graph = SimpleGraph()

    def test_num_vertex(self):
        self.graph.add_vertex("a")
        assert self.graph.num_vertex() == 1

    def test_add_vertex(self):
        value = "b"
        vertex = self.graph.add_vertex(value)
        assert str(vertex) == 'Vértice b'

    def test_delete_vertex(self):
        vertex_delete = self.graph.delete_vertex("a")
        assert self.graph.num_vertex() == 1
        assert str(vertex_delete) == "Vértice a"

    def test_vertex_exists(self):
        assert self.graph.vertex_exists("a")
