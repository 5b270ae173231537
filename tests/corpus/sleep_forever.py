# expect: time_limit
import time


def custom_kernel(data):
    time.sleep(100000)
