# expect: output_limit
import os


def custom_kernel(data):
    while True:
        os.write(2, b"\0" * (1 << 20))
