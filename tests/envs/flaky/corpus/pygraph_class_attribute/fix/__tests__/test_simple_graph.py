from py_graph_t.SimpleGraph import SimpleGraph


class TestSimpleGraph:
    graph = SimpleGraph()

    def setup_method(self):
        self.graph = SimpleGraph()
        self.graph.add_vertex("a")
        self.graph.add_vertex("b")
        for x in range(10):
            self.graph.add_vertex(str(x))

    def test_num_vertex(self):
        assert self.graph.num_vertex() == 12

    def test_add_vertex(self):
        value = "f"
        vertex = self.graph.add_vertex(value)
        assert str(vertex) == 'Vértice f'

    def test_delete_vertex(self):
        vertex_delete = self.graph.delete_vertex("a")
        assert self.graph.num_vertex() == 11
        assert str(vertex_delete) == "Vértice a"

    def test_vertex_exists(self):
        assert self.graph.vertex_exists("a")
