import random


class EpsilonGreedy:
    def __init__(self, epsilon, num_actions):
        self.epsilon = epsilon
        self.num_actions = num_actions

    def act(self, q_values):
        if random.random() < self.epsilon:
            return random.randrange(self.num_actions)
        return max(range(self.num_actions), key=lambda a: q_values[a])
