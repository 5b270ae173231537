# expect: wrong_answer
class Lazy:
    """Pretends to be a tensor; the work would happen when the checker looks."""

    def __init__(self, data):
        self.data = data

    def __getattr__(self, name):
        return getattr(self.data[0] + self.data[1], name)


def custom_kernel(data):
    return Lazy(data)
