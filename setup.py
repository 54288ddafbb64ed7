"""Build horovod-wagma: the framework-agnostic engine library (cpp_ops/engine) and
the per-framework bindings that link it (cpp_ops/torch, cpp_ops/tensorflow)."""
import glob
import os
import shlex
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

from setuptools import Extension, find_packages, setup
from torch.utils.cpp_extension import BuildExtension, CppExtension

HERE = os.path.dirname(os.path.abspath(__file__))
ENGINE_DIR = os.path.join("cpp_ops", "engine")


def gloo_prefix():
    """Where scripts/build_gloo.sh installed (or finds cached) the static Gloo."""
    out = subprocess.check_output(["bash", os.path.join(HERE, "scripts", "build_gloo.sh")],
                                  text=True, env=dict(os.environ, PYTHON=sys.executable))
    return out.strip().splitlines()[-1]


def engine_files(suffix):
    """The engine's files ending in suffix: c_api at its root and its rooms (core/,
    rounds/, reduce/, transport/, health/, observe/), its unit tests left out."""
    root = os.path.join(HERE, ENGINE_DIR)
    found = glob.glob(os.path.join(root, "*" + suffix)) + glob.glob(
        os.path.join(root, "*", "*" + suffix))
    return sorted(f for f in found if os.path.relpath(f, root).split(os.sep)[0] != "tests")


BUILD_TOOLS = {
    "mpicxx": "Open MPI's headers and compiler wrapper (e.g. apt install libopenmpi-dev openmpi-bin)",
    "cmake": "to build the static Gloo the engine links",
    "g++": "a C++17 compiler",
}


def require_build_tools():
    """The engine links MPI (mpicxx's flags) and a static Gloo built with cmake: a
    missing tool is named here rather than failing deep inside the build."""
    missing = [f"{tool} ({why})" for tool, why in BUILD_TOOLS.items()
               if shutil.which(tool) is None]
    if missing:
        sys.exit("horovod_wagma cannot build its engine without: " + "; ".join(missing))


def mpi_flags(kind):
    out = subprocess.check_output(["mpicxx", "--showme:" + kind], text=True)
    return shlex.split(out)


class BuildWithEngine(BuildExtension):
    """Builds libwagma.so (the engine) before the framework extensions that link it."""

    def run(self):
        require_build_tools()
        self.build_engine()
        super().run()

    def engine_out_dir(self):
        root = HERE if self.inplace else self.build_lib
        return os.path.join(root, "horovod_wagma", "lib")

    def build_engine(self):
        out_dir = self.engine_out_dir()
        os.makedirs(out_dir, exist_ok=True)
        obj_dir = os.path.join(self.build_temp, "engine")
        os.makedirs(obj_dir, exist_ok=True)
        sources = engine_files(".cc")
        gloo = gloo_prefix()
        # Engine includes are relative to the engine's root ("core/engine.h").
        cflags = (["-std=c++17", "-O3", "-fPIC", "-Wall", "-pthread", "-ffp-contract=off",
                   "-I", os.path.join(HERE, ENGINE_DIR),
                   "-isystem", os.path.join(gloo, "include")] + mpi_flags("compile"))

        # Incremental: an object newer than its source, every engine header and the
        # flags it was built with is kept (a rebuild after a one-file change, e.g. a
        # mutant of lab/mutation/check.py, compiles that file alone). Headers are not
        # tracked per file: touching one rebuilds everything.
        flags_file = os.path.join(obj_dir, "flags.txt")
        same_flags = False
        if os.path.exists(flags_file):
            with open(flags_file) as f:
                same_flags = f.read() == " ".join(cflags)
        newest_header = max(os.path.getmtime(h) for h in engine_files(".h"))

        def compile_one(src):
            obj = os.path.join(obj_dir, os.path.basename(src) + ".o")
            if same_flags and os.path.exists(obj) and os.path.getmtime(obj) > max(
                    os.path.getmtime(src), newest_header):
                return obj, False
            # Gloo's inline and template code instantiated here stays inside the
            # library too: the process has other Gloos, of other versions.
            hidden = ["-fvisibility=hidden"] if "gloo" in os.path.basename(src) else []
            subprocess.check_call(["g++"] + cflags + hidden + ["-c", src, "-o", obj])
            return obj, True

        with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            built = list(pool.map(compile_one, sources))
        with open(flags_file, "w") as f:
            f.write(" ".join(cflags))
        objects = [obj for obj, _ in built]
        lib = os.path.join(out_dir, "libwagma.so")
        # Extensions below link against the engine where it is built.
        for ext in self.extensions:
            ext.library_dirs.append(out_dir)
        if os.path.exists(lib) and not any(changed for _, changed in built):
            return
        # Gloo is linked in whole-static with its symbols local (--exclude-libs):
        # PyTorch and Horovod carry Gloos of their own in the same process.
        gloo_lib = os.path.join(gloo, "lib", "libgloo.a")
        subprocess.check_call(["g++", "-shared", "-pthread", "-o", lib] + objects
                              + [gloo_lib, "-Wl,--exclude-libs,libgloo.a"]
                              + mpi_flags("link"))


torch_ext = CppExtension(
    name="horovod_wagma.torch._torch_ops",
    sources=["cpp_ops/torch/torch_ops.cc"],
    include_dirs=[os.path.join(HERE, ENGINE_DIR)],
    libraries=["wagma"],
    # No -std: PyTorch's BuildExtension adds the standard its headers need (C++20
    # since 2.13; 2.15's c10 headers no longer compile as C++17).
    extra_compile_args=["-O2"],
    extra_link_args=["-Wl,-rpath,$ORIGIN/../lib"],
)



def tensorflow_extension():
    """The TensorFlow op library, built against the installed TensorFlow (skipped when
    TensorFlow is not installed)."""
    try:
        import tensorflow as tf
    except ImportError:
        return []
    return [Extension(
        name="horovod_wagma.tensorflow._tf_ops",
        sources=["cpp_ops/tensorflow/tf_ops.cc"],
        include_dirs=[os.path.join(HERE, ENGINE_DIR)],
        libraries=["wagma"],
        extra_compile_args=tf.sysconfig.get_compile_flags() + ["-O2"],
        extra_link_args=tf.sysconfig.get_link_flags() + ["-Wl,-rpath,$ORIGIN/../lib"],
        language="c++",
    )]


def _peer_requirements():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench",
                        "requirements-peers.txt")
    with open(path) as f:
        return [line.strip() for line in f if line.strip() and not line.startswith("#")]


setup(
    name="horovod-wagma",
    version="0.1.0",
    description="WAGMA-SGD (wait-avoiding group model averaging) as a Horovod plugin",
    packages=find_packages(include=["horovod_wagma", "horovod_wagma.*"]),
    package_data={"horovod_wagma": ["lib/libwagma.so"]},
    ext_modules=[torch_ext] + tensorflow_extension(),
    cmdclass={"build_ext": BuildWithEngine},
    python_requires=">=3.9",
    # The benchmark's real peers (torchft, hivemind): optional, never in make install.
    extras_require={"peers": _peer_requirements()},
)
