import random

from ml.rl.policies import EpsilonGreedy


def test_epsilon_greedy_mostly_greedy():
    random.seed(0)
    policy = EpsilonGreedy(epsilon=0.2, num_actions=4)
    q_values = [0.1, 0.9, 0.3, 0.2]
    greedy = sum(policy.act(q_values) == 1 for _ in range(12))
    assert greedy >= 9
