# expect: time_limit
def custom_kernel(data):
    while True:
        pass
