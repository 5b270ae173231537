# expect: output_limit
import sys


def custom_kernel(data):
    line = "x" * 4096 + "\n"
    while True:
        sys.stdout.write(line)
