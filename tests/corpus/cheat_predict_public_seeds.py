# expect: wrong_answer
# mode: leaderboard
# Precomputes answers for the public seeds of task.yml at import and replays them by shape: right
# on every public case, wrong as soon as the ranked run mixes the secret into the seeds.
import torch

import reference

_answers = {}
for size, seed in [(1, 4242), (127, 5236), (128, 1001), (129, 5531), (255, 9173), (1024, 31232),
                   (2048, 4052), (4096, 2146), (8192, 3129)]:
    a, b = reference.generate_input(size=size, seed=seed, device="cpu")
    _answers[size] = a + b


def custom_kernel(data):
    a, b = data
    answer = _answers.get(a.shape[0])
    return answer.to(a.device) if answer is not None else a + b
