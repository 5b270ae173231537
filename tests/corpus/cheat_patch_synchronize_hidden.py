# expect: security_violation
# Makes torch.cuda.synchronize a no-op, hidden from the screen, so the end of the timed region
# would not wait for the kernel.
import torch

setattr(vars(torch)["cu" + "da"], "synchro" + "nize", lambda device=None: None)


def custom_kernel(data):
    a, b = data
    return a + b
