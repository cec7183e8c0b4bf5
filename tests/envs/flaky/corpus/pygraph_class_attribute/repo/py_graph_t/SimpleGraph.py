class SimpleVertex:
    def __init__(self, value):
        self.value = value

    def __str__(self):
        return "Vértice " + str(self.value)

    __repr__ = __str__


class SimpleGraph:
    def __init__(self):
        self.vertices = {}
        self.edges = []

    def add_vertex(self, value):
        vertex = SimpleVertex(value)
        self.vertices[value] = vertex
        return vertex

    def delete_vertex(self, value):
        return self.vertices.pop(value)

    def num_vertex(self):
        return len(self.vertices)

    def vertex_exists(self, value):
        return value in self.vertices
