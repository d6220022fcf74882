"""Writes mutwo-build.pth into the user's site-packages, naming the build's python/ folder, so that
`import mutwo` finds the module this build made (python/CMakeLists.txt, target mutwo_python_develop).

    python3 python/develop.py <build>/python
"""
import os
import site
import sys


def main(folder):
    folder = os.path.abspath(folder)
    if not os.path.isfile(os.path.join(folder, "mutwo", "__init__.py")):
        sys.exit(f"error: {folder} holds no built mutwo package (build the target mutwo_python first)")
    if not site.ENABLE_USER_SITE:
        sys.exit("error: this interpreter has user site-packages disabled; set PYTHONPATH=" + folder)
    target = site.getusersitepackages()
    os.makedirs(target, exist_ok=True)
    path = os.path.join(target, "mutwo-build.pth")
    with open(path + ".tmp", "w") as f:
        f.write(folder + "\n")
    os.replace(path + ".tmp", path)
    print(f"{path}: import mutwo now loads {folder}/mutwo")


if __name__ == "__main__":
    main(sys.argv[1])
