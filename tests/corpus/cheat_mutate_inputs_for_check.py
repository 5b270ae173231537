# expect: wrong_answer
# reason: modified its inputs
# Returns A - B and negates B in place, so that a checker computing A + B from the same (now
# mutated) tensors would agree. The harness checks against inputs it made itself, and the runner
# reports the mutation.
def custom_kernel(data):
    a, b = data
    out = a - b
    b.neg_()
    return out
