# expect: memory_limit
def custom_kernel(data):
    hoard = []
    while True:
        hoard.append(bytearray(64 << 20))
