# lit configuration for afc's test suite: %afc, %cc, %cxx, %runtime,
# %vgcpu, %compare substitutions, FileCheck from LLVM 19.
import os
import lit.formats

config.name = "afc"
config.test_format = lit.formats.ShTest()
config.suffixes = [".acc", ".test", ".lir"]
config.excludes = ["Inputs", "bench", "drivers"]

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
config.test_source_root = os.path.dirname(os.path.abspath(__file__))
config.test_exec_root = os.path.join(root, "build", "lit")
llvm_bin = os.environ.get("LLVM_PREFIX", "/usr/lib/llvm-19") + "/bin"
config.environment["PATH"] = llvm_bin + os.pathsep + os.environ.get("PATH", "")
for var in ("AFC_FUZZ_SEED", "AFC_FUZZ_COUNT", "HOME"):
    if var in os.environ:
        config.environment[var] = os.environ[var]

afc = os.path.join(root, "target", "release", "afc")
runtime = os.path.join(root, "build", "libafcrt.a")
inc = os.path.join(root, "runtime-c")
drivers = os.path.join(root, "testsuite", "drivers")
config.substitutions.append(("%afc", afc + " --verify"))
config.substitutions.append(("%cc", "cc -std=c99 -Wall -Werror -I" + inc + " -I" + drivers))
config.substitutions.append(("%cxx", "c++ -std=c++17 -Wall -Werror -I" + inc + " -I" + drivers))
config.substitutions.append(("%runtime", runtime + " -lgomp -lm -lpthread"))
config.substitutions.append(("%check-run", os.path.join(root, "testsuite", "check-run.sh")))
# Valgrind (3.19 in Debian 12) cannot run AVX-512 code: objects a test
# runs under it are built for AVX2 on a host that has AVX-512.
def host_has_avx512():
    try:
        with open("/proc/cpuinfo") as f:
            return any(line.startswith("flags") and " avx512f" in line for line in f)
    except OSError:
        return False
config.substitutions.append(("%vgcpu", "--cpu x86-64-v3" if host_has_avx512() else ""))
# Code for the host's AVX-512 (vector compaction, 512-bit vector math) or
# AVX2 (compaction by permutes) runs only where the host has it.
def host_has(flag):
    try:
        with open("/proc/cpuinfo") as f:
            return any(line.startswith("flags") and (" %s " % flag) in (line.rstrip() + " ") for line in f)
    except OSError:
        return False
for flag in ("avx512f", "avx2"):
    if host_has(flag):
        config.available_features.add(flag.replace("avx512f", "avx512"))
config.substitutions.append(("%compare", "python3 " + os.path.join(root, "testsuite", "compare.py")))
