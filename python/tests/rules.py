"""Built-in schedulers' rules written in Python, shared by the tests that
check a Python scheduler against the built-in one."""


class RoundRobin:
    def __init__(self):
        self.next = 0

    def choose(self, request, workers):
        i = self.next % len(workers)
        self.next += 1
        return i


class LeastLoaded:
    """Least outstanding work; ties: lower utilization, then lower id."""

    def choose(self, request, workers):
        return min(range(len(workers)), key=lambda i: (workers[i].outstanding, workers[i].utilization, i))
