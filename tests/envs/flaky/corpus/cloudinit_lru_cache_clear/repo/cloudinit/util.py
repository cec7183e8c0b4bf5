from functools import lru_cache


def read_os_release():
    with open("/etc/os-release", encoding="utf-8") as f:
        return dict(line.strip().split("=", 1) for line in f if "=" in line)


@lru_cache()
def get_distro():
    return read_os_release().get("ID", "unknown").strip('"')
