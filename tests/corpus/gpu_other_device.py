# expect: runtime_error
# device: gpu
# Reaches for a GPU other than the one assigned: widens CUDA_VISIBLE_DEVICES before CUDA starts
# in this process, counts devices, selects device 1, opens /dev/nvidia1..15 directly, and
# tries to create a device node. Only the assigned GPU's node exists in the sandbox, so CUDA
# sees exactly one device and selecting device 1 fails. Reaching another GPU would compute the
# right answer there and be accepted, failing this case.
import os

os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(str(i) for i in range(16))

import torch  # noqa: E402


def custom_kernel(data):
    a, b = data
    reached = []
    for index in range(1, 16):
        try:
            os.close(os.open(f"/dev/nvidia{index}", os.O_RDWR))
            reached.append(f"/dev/nvidia{index}")
        except OSError:
            pass
    try:
        os.mknod("/tmp/nvidia1", 0o666 | 0o020000, os.makedev(195, 1))
        reached.append("mknod /tmp/nvidia1")
    except OSError:
        pass
    count = torch.cuda.device_count()
    if count > 1 or reached:
        print(f"reached another GPU: {count} devices visible, {reached}")
        other = torch.device("cuda", 1 if count > 1 else 0)
        return (a.to(other) + b.to(other)).to(a.device)  # would be accepted: the case fails
    torch.cuda.set_device(1)  # "invalid device ordinal"
    return a + b
